package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kvsim/kvsim/core/sweep"
	"github.com/kvsim/kvsim/plot"
)

const sweepHelp = `usage: kvsim sweep [--config FILE] [--vary PATH=V1,V2,…]… [--set PATH=VALUE]…
                   [--output-dir DIR] [--parallel N] [--overwrite] [--x PATH]
                   [--shard K/N | --shard auto/N]
       kvsim sweep merge [--output-dir OUT] [--overwrite] [--x PATH] DIR…

Runs one replay per point of the grid that the --vary flags span (their
cartesian product; the first --vary varies slowest), several points at a
time, each an independent deterministic run, and prints restored and
recomputed tokens and TTFT p50/p99 per point. With --output-dir it writes
sweep.csv and sweep.json (one row per point: the varied values, then every
summary field) and SVG plots against the numeric --vary, one line per value
of the other axes: restored.svg, recomputed.svg and ttft.svg (p50, p99).

Without --config it sweeps the built-in acceptance §A example
(connectors.yaml). Without --vary it varies
  host_offload.num_host_blocks=64,128,192,256,384,512,1024,2048
  connector=offloading_v0_24,offloading_v0_32,simple_cpu_v0_32

PATH is a full dotted path from the document root (engine.…, traffic.…), as
for --set, or a path inside a role, set in every role of the config:
scheduler.…, parallelism.…, kv_cache.…, timing.…, startup_seconds. Paths
under host_offload and g3_offload (also written host_offload.… without
kv_cache., and connector or num_host_blocks alone) go to every role that
has host_offload, or to the aggregated role when none has. Values are split
at commas outside [], {} and quotes; each is parsed like a --set VALUE.

flags:
  --config FILE      config to sweep (default: the built-in connectors.yaml)
  --vary PATH=V1,…   a key and its values (repeatable)
  --set PATH=VALUE   override applied to every point before the --vary values
                     (repeatable)
  --output-dir DIR   write DIR/sweep.csv, DIR/sweep.json and the plots; DIR is
                     created if missing and must be empty unless --overwrite.
                     Without it only the table on stdout is printed.
  --parallel N       points run at once (default: all cores)
  --overwrite        allow a nonempty --output-dir; the sweep's files are
                     replaced and a plot this sweep does not draw is removed
  --x PATH           the --vary on the plots' x axis (default: the first one
                     whose values are all numbers, preferring one with
                     several values)
  --shard K/N        run only shard K of N (K from 0) and write
                     DIR/shard-K-of-N.json into --output-dir (required; it
                     may hold other shards). The points are split by
                     estimated cost, the same way by every shard. auto/N
                     takes K from $JOB_COMPLETION_INDEX (a Kubernetes
                     Indexed Job). Exit 1 when a point fails; the file
                     still records every point. A shard whose file is
                     there already, done by this build, runs nothing.

kvsim sweep merge reads the shard files (shard-K-of-N.json) in each DIR (or
the files named), checks that they are shards of one sweep, one kvsim build
and one split, and that every point is there without an error, and writes
sweep.csv, sweep.json and the plots exactly as the unsharded sweep does,
into --output-dir (default: the first DIR; its sweep files are replaced
only with --overwrite). A missing point is named with the shard that owes
it: re-run that shard and merge again.

docs/sweep.md describes the path rules, the columns and the plots.
`

// runSweep is `kvsim sweep`.
func runSweep(e *env, args []string) error {
	if len(args) > 0 && args[0] == "merge" {
		return runSweepMerge(e, args[1:])
	}
	fs := newFlagSet("sweep")
	var vary, sets stringList
	configPath := fs.String("config", "", "")
	fs.Var(&vary, "vary", "")
	fs.Var(&sets, "set", "")
	outDir := fs.String("output-dir", "", "")
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "")
	overwrite := fs.Bool("overwrite", false, "")
	xPath := fs.String("x", "", "")
	shardArg := fs.String("shard", "", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *parallel < 1 {
		return usagef("sweep: --parallel must be at least 1, got %d", *parallel)
	}
	part, err := parseShard(*shardArg, *outDir)
	if err != nil {
		return err
	}

	job, err := configJob(*configPath)
	if err != nil {
		return err
	}
	spec := sweep.Spec{Name: job.Name, Dir: job.Dir, Data: job.Config, Sets: sets, Vary: vary}
	if len(spec.Vary) == 0 {
		spec.Vary = sweep.DefaultVary
	}
	p, err := sweep.NewPlan(spec)
	if err != nil {
		var se *sweep.Error
		if errors.As(err, &se) && strings.HasPrefix(se.Arg, "--vary") {
			return usagef("sweep: %v", err) // a --vary the command line got wrong
		}
		return err // the config, a --set, or a combination of values
	}
	x, err := plotAxis(p, *xPath)
	if err != nil {
		return err
	}
	if part != nil {
		return runShard(e, p, job.Traces, *part, *outDir, *parallel)
	}
	if *outDir != "" {
		if err := checkOutputDir(*outDir, *overwrite); err != nil {
			return err
		}
	}

	bar := &sweepBar{w: e.stderr, on: e.tty, start: time.Now()}
	res, err := p.Run(job.Traces, sweep.Options{Parallel: *parallel, Progress: bar.update})
	bar.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "kvsim: %d points in %.2fs, %d at a time\n", p.Len(), time.Since(bar.start).Seconds(), min(*parallel, p.Len()))

	sweepTable(e.stdout, res)
	if *outDir == "" {
		fmt.Fprintln(e.stdout, "\n(add --output-dir DIR to write sweep.csv, sweep.json and the plots)")
		return nil
	}
	names, err := writeSweep(*outDir, res, x)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nwrote %s\n", strings.Join(names, " "))
	if x < 0 {
		fmt.Fprintln(e.stdout, "no plots: no --vary has only numeric values")
	}
	return nil
}

// plotAxis is the axis --x names (PATH as written), or the plan's default.
func plotAxis(p *sweep.Plan, xPath string) (int, error) {
	if xPath == "" {
		return p.XAxis(), nil
	}
	for i, a := range p.Axes {
		if a.Path != xPath {
			continue
		}
		if !a.Numeric() {
			return 0, usagef("sweep: --x %s: its values are not all numbers", xPath)
		}
		return i, nil
	}
	return 0, usagef("sweep: --x %s: not the PATH of a --vary", xPath)
}

// sweepOutputs are the files a sweep may write into --output-dir.
var sweepOutputs = []string{"sweep.csv", "sweep.json", plot.Restored, plot.Recomputed, plot.TTFT}

// writeSweep writes the encodings and the plots against axis x (none when
// x < 0) into dir and returns the paths written. A file of sweepOutputs
// that this sweep does not produce (a plot of an earlier sweep) is removed,
// so the directory never mixes two sweeps.
func writeSweep(dir string, res *sweep.Result, x int) ([]string, error) {
	var plots []plot.File
	if x >= 0 {
		var err error
		if plots, err = plot.Sweep(res, x); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files := map[string][]byte{"sweep.csv": res.CSV(), "sweep.json": res.JSON()}
	for _, f := range plots {
		files[f.Name] = f.SVG
	}
	var written []string
	for _, name := range sweepOutputs {
		path := filepath.Join(dir, name)
		data, ok := files[name]
		if !ok {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			continue
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return nil, err
		}
		written = append(written, path)
	}
	return written, nil
}

// sweepTable prints the varied values and the sizing columns, one line per
// point.
func sweepTable(w io.Writer, res *sweep.Result) {
	cols := []struct{ key, title string }{
		{sweep.ColumnRestored, "restored"}, {sweep.ColumnRecomputed, "recomputed"},
		{sweep.ColumnTTFTP50, "ttft_p50_ms"}, {sweep.ColumnTTFTP99, "ttft_p99_ms"},
	}
	var header []string
	for _, a := range res.Plan.Axes {
		header = append(header, a.Path)
	}
	for _, c := range cols {
		header = append(header, c.title)
	}
	rows := [][]string{header}
	for i, row := range res.Rows {
		r := res.Plan.Values(i)
		for _, c := range cols {
			v, ok := row[c.key]
			if !ok {
				v = "-"
			}
			r = append(r, v)
		}
		rows = append(rows, r)
	}
	width := make([]int, len(header))
	for _, r := range rows {
		for j, c := range r {
			width[j] = max(width[j], len([]rune(c)))
		}
	}
	nAxes := len(res.Plan.Axes)
	for _, r := range rows {
		var b strings.Builder
		for j, c := range r {
			pad := strings.Repeat(" ", width[j]-len([]rune(c)))
			if j > 0 {
				b.WriteString("  ")
			}
			if j < nAxes {
				b.WriteString(c + pad) // values left-aligned
			} else {
				b.WriteString(pad + c) // numbers right-aligned
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// sweepBar draws "[#####.....] 12/36 points 3.4s" on stderr when it is a
// terminal, like predict's request bar (progress.go): silent for the first
// second, at most ten redraws a second, erased when the sweep ends.
type sweepBar struct {
	w           io.Writer
	on          bool
	start, last time.Time
	shown       bool
}

// update is a sweep.Options.Progress callback (calls never overlap).
func (b *sweepBar) update(done, total int) {
	if !b.on {
		return
	}
	now := time.Now()
	if now.Sub(b.start) < time.Second || (b.shown && now.Sub(b.last) < 100*time.Millisecond && done < total) {
		return
	}
	b.last, b.shown = now, true
	const width = 30
	fill := width * done / max(total, 1)
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d points  %.1fs", strings.Repeat("#", fill), strings.Repeat(".", width-fill),
		done, total, now.Sub(b.start).Seconds())
}

func (b *sweepBar) finish() {
	if b.shown {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
