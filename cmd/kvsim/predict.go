package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
)

const predictHelp = `usage: kvsim predict [--config FILE] [--output-dir DIR] [--format table|json]
                     [--capture-per-request] [--capture-passes] [--capture-window A:B]
                     [--capture-large] [--set PATH=VALUE]... [--overwrite] [--stack engine]
                     [--cpuprofile FILE] [--memprofile FILE]

Replays the config's traffic and reports what happened (docs/model/report.md).

  --config FILE           the YAML config; trace paths in it resolve against FILE's
                          directory. Without it, the built-in traces/connectors.yaml
                          runs with host_offload removed (acceptance §A, first row).
  --output-dir DIR        write DIR/prediction.json (and the captures below); DIR is
                          created if missing and must be empty unless --overwrite.
                          Without it nothing is written but stdout.
  --format table|json     stdout: a readable table (default) or the summary as one
                          JSON line.
  --capture-per-request   also write DIR/requests.jsonl (needs --output-dir).
  --capture-passes        also write DIR/passes.jsonl, the per-pass record (needs
                          --output-dir). A whole record estimated over 2 GiB is
                          refused before anything is written (the estimate runs
                          the replay once more without the record).
  --capture-window A:B    write only the passes in a window (implies
                          --capture-passes): pass numbers of each rank (1000:2000)
                          or virtual times (120s:130s, 1500ms:2500ms), both ends
                          included, either left out for an open end (5000:).
                          The file's first line per rank is a base line naming
                          the window (docs/record.md).
  --capture-large         write a whole per-pass record whatever its estimate.
  --set PATH=VALUE        override a config key (dotted path from the document root;
                          VALUE is YAML; PATH=null removes the key). Repeatable,
                          applied in order.
  --overwrite             allow a nonempty --output-dir; the report files are
                          replaced and stale ones removed, other files are kept.
  --stack engine          the simulation stack; only "engine" exists.
  --cpuprofile FILE       write a pprof CPU profile of the whole command to FILE.
  --memprofile FILE       write a pprof heap profile to FILE, taken when the live
                          heap (sampled after a collection every 1,024 finished
                          requests) was largest: inuse_space is the peak's heap.
                          The sampling forces collections, so the wall time
                          printed is not the run's.

The host wall time of the run goes to stderr, never into the report files.
`

// hostOffloadPath is the G2 tier of the built-in configs' aggregated role.
const hostOffloadPath = "engine.workers.aggregated.kv_cache.host_offload"

// defaultExample is the config predict runs without --config.
const defaultExample = "connectors.yaml"

// Report file names inside --output-dir.
const (
	predictionFile = "prediction.json"
	requestsFile   = "requests.jsonl"
	passesFile     = "passes.jsonl"
)

type predictFlags struct {
	config, outputDir, format, stack          string
	cpuProfile, memProfile                    string
	sets                                      stringList
	perRequest, passes, overwrite             bool
	benchStats, noFastForward, noShard, large bool
	windowSpec                                string
	window                                    record.Window
}

func runPredict(e *env, args []string) error {
	start := time.Now()
	var f predictFlags
	fs := newFlagSet("predict")
	fs.StringVar(&f.config, "config", "", "")
	fs.StringVar(&f.outputDir, "output-dir", "", "")
	fs.StringVar(&f.format, "format", "table", "")
	fs.BoolVar(&f.perRequest, "capture-per-request", false, "")
	fs.BoolVar(&f.passes, "capture-passes", false, "")
	fs.StringVar(&f.windowSpec, "capture-window", "", "")
	fs.BoolVar(&f.large, "capture-large", false, "")
	fs.Var(&f.sets, "set", "")
	fs.BoolVar(&f.overwrite, "overwrite", false, "")
	fs.StringVar(&f.stack, "stack", "engine", "")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "")
	fs.StringVar(&f.memProfile, "memprofile", "", "")
	// Hidden: `kvsim bench` reads the run's passes and heap allocations
	// from this line on stderr.
	fs.BoolVar(&f.benchStats, "bench-stats", false, "")
	// Hidden: runs without the engine's fast-forward of pure decode passes
	// (the same reports; docs/performance.md measures both ways).
	fs.BoolVar(&f.noFastForward, "no-fast-forward", false, "")
	// Hidden: runs one engine where the run could be split across
	// processors (the same reports; docs/model/engine.md ("Sharded runs")).
	fs.BoolVar(&f.noShard, "no-shard", false, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if f.windowSpec != "" {
		w, err := record.ParseWindow(f.windowSpec)
		if err != nil {
			return usagef("predict: --capture-window: %v", err)
		}
		f.window, f.passes = w, true
	}
	switch {
	case f.stack != "engine":
		return usagef("predict: --stack: unknown stack %q (accepted: engine)", f.stack)
	case f.format != "table" && f.format != "json":
		return usagef("predict: --format: unknown format %q (accepted: table, json)", f.format)
	case f.perRequest && f.outputDir == "":
		return usagef("predict: --capture-per-request needs --output-dir")
	case f.passes && f.outputDir == "":
		return usagef("predict: --capture-passes and --capture-window need --output-dir")
	}
	prof, err := startProfiles(f.cpuProfile, f.memProfile)
	if err != nil {
		return err
	}
	err = predict(e, &f, start, prof)
	if perr := prof.stop(); err == nil {
		err = perr
	}
	return err
}

func predict(e *env, f *predictFlags, start time.Time, prof *profiler) error {
	job, err := configJob(f.config)
	if err != nil {
		return err
	}
	job.Sets = f.sets
	if f.config == "" {
		fmt.Fprintf(e.stderr, "kvsim: no --config: running the built-in traces/%s with %s=null (acceptance §A, first row)\n",
			defaultExample, hostOffloadPath)
		job.Sets = append([]string{hostOffloadPath + "=null"}, f.sets...)
	}
	if f.outputDir != "" {
		if err := checkOutputDir(f.outputDir, f.overwrite); err != nil {
			return err
		}
	}
	job.Capture = replay.Capture{Requests: f.perRequest, Passes: f.passes, Window: f.window}
	job.NoFastForward = f.noFastForward
	job.NoShard = f.noShard
	if !f.large {
		job.Limits.MaxRecordBytes = replay.RecordBytesLimit
	}
	bar := newProgress(e.stderr, e.tty)
	if bar != nil {
		job.Progress = bar.update
	}
	job.Progress = prof.progress(job.Progress)
	out, err := replay.Run(job)
	bar.finish()
	if err != nil {
		var re *replay.Error
		if f.passes && errors.As(err, &re) && strings.Contains(re.Msg, "the per-pass record of this run would be") {
			re.Msg += "; capture a window instead (--capture-window 1000:2000, or 120s:130s), or add --capture-large to write it all"
		}
		return err
	}
	if f.outputDir != "" {
		if err := writeReports(f.outputDir, out, f.window); err != nil {
			return err
		}
	}
	switch f.format {
	case "json":
		if _, err := e.stdout.Write(append(out.SummaryJSON(), '\n')); err != nil {
			return err
		}
	default:
		if err := writeTable(e.stdout, &out.Summary); err != nil {
			return err
		}
	}
	wall := time.Since(start)
	engines := ""
	if out.Engines > 1 {
		engines = fmt.Sprintf(", %d engines at once", out.Engines)
	}
	fmt.Fprintf(e.stderr, "kvsim: wall time %s (%s requests, %s passes%s)\n", wall.Round(time.Microsecond),
		numfmt.Thousands(int64(out.Summary.NumRequests)), numfmt.Thousands(out.Stats.Passes), engines)
	if f.benchStats {
		return writeBenchStats(e.stderr, out)
	}
	return nil
}

// configJob reads --config into a replay job: trace paths resolve against
// the config file's directory. Without a path it is the built-in
// traces/connectors.yaml, which reads the built-in traces.
func configJob(path string) (replay.Job, error) {
	if path == "" {
		data, err := traces.Read(defaultExample)
		if err != nil {
			return replay.Job{}, err
		}
		return replay.Job{Name: "traces/" + defaultExample, Dir: ".", Config: data, Traces: replay.Traces{Builtin: true}}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return replay.Job{}, err
	}
	dir := filepath.Dir(path)
	return replay.Job{Name: path, Dir: dir, Config: data, Traces: replay.Traces{Files: filesIn(dir)}}, nil
}

// filesIn opens trace paths as written in a config in dir: relative paths
// resolve against dir.
func filesIn(dir string) replay.Opener {
	return func(p string) (io.ReadCloser, error) {
		p = filepath.FromSlash(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return os.Open(p)
	}
}

// checkOutputDir fails unless dir is missing, empty, or --overwrite is
// given. It runs before the replay so a long run is not wasted.
func checkOutputDir(dir string, overwrite bool) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("--output-dir %s is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 && !overwrite {
		return fmt.Errorf("--output-dir %s is not empty (add --overwrite to replace its report files)", dir)
	}
	return nil
}

// writeReports writes the report files of out into dir. With --overwrite,
// a report file this run does not produce (left by an earlier run) is
// removed so the directory never mixes two runs.
func writeReports(dir string, out *replay.Output, win record.Window) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := []struct {
		name  string
		on    bool
		write func(w io.Writer) error
	}{
		{predictionFile, true, bytesWriter(out.Prediction)},
		{requestsFile, out.Requests != nil, bytesWriter(out.Requests)},
		{passesFile, out.Record != nil, func(w io.Writer) error { return out.Record.WriteWindow(w, win) }},
	}
	for _, file := range files {
		p := filepath.Join(dir, file.name)
		if !file.on {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if err := writeFile(p, file.write); err != nil {
			return err
		}
	}
	return nil
}

func bytesWriter(b []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}
}

func writeFile(path string, write func(io.Writer) error) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<16)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// benchStats is the line `predict --bench-stats` prints on stderr for
// `kvsim bench`: the run's group passes and the process's heap
// allocations (runtime.MemStats, cumulative).
type benchStats struct {
	Requests   int    `json:"requests"`
	Passes     int64  `json:"passes"`
	Mallocs    uint64 `json:"mallocs"`
	TotalAlloc uint64 `json:"total_alloc_bytes"`
}

const benchStatsKey = "bench_stats"

func writeBenchStats(w io.Writer, out *replay.Output) error {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b, err := json.Marshal(map[string]benchStats{benchStatsKey: {Requests: out.Summary.NumRequests,
		Passes: out.Stats.Passes, Mallocs: ms.Mallocs, TotalAlloc: ms.TotalAlloc}})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
