package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/core/trace"
)

const benchHelp = `usage: kvsim bench [--runs N] [--sessions N] [--host-offload BLOCKS [--connector NAME]]

Times the benchmark of docs/model/cases.md (case E): the whole CLI run
  kvsim predict --config bench.yaml --output-dir DIR --format json --overwrite
as a child process of this binary, on a pre-generated trace of 10,000 sessions × 6
turns of the §A shape (generation is not timed) and the §A config with concurrency 64,
max_sequences 64, max_batched_tokens 8192, 8192 G1 blocks and no host_offload. It
reports the median wall time of the runs as simulated requests/s, plus passes/s, ns
per simulated request and the child's heap allocations.

  --runs N               runs to take the median of (default 5)
  --sessions N           sessions in the trace (default 10000; 6 requests each)
  --host-offload BLOCKS  add a G2 tier of BLOCKS host blocks (default 0: none); each
                         run is then paired with one without the tier, in alternating
                         order, and the table ends with the ratio of the two
  --connector NAME       its connector profile: offloading_v0_24 (the config default),
                         offloading_v0_32 or simple_cpu_v0_32
`

// benchTraceFile and benchConfigFile are written into the benchmark's
// temporary directory.
const (
	benchTraceFile  = "bench-sessions.jsonl"
	benchConfigFile = "bench.yaml"
)

// benchConfig is docs/model/cases.md ("Case E: the benchmark")'s config:
// traces/connectors.yaml with the §E settings.
// TestBenchConfigIsConnectorsWithBenchSets keeps the two in step. hostBlocks >
// 0 adds a G2 tier (connector "" = the default profile).
func benchConfig(hostBlocks int, connector string) string {
	host := ""
	if hostBlocks > 0 {
		host = "        host_offload: {num_host_blocks: " + strconv.Itoa(hostBlocks)
		if connector != "" {
			host += ", connector: " + connector
		}
		host += "}\n"
	}
	return `# Case E of docs/model/cases.md: the §A config (traces/connectors.yaml) with concurrency 64,
# max_sequences 64, max_batched_tokens 8192 and 8192 G1 blocks. Written by kvsim bench.
traffic:
  source: {type: trace, format: mooncake-delta, paths: [` + benchTraceFile + `], block_size: 16}
  load: {type: concurrency, concurrency: 64}
engine:
  mode: aggregated
  model: tiny
  hardware: h200_sxm
  backend: vllm
  context_length: 4096
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1, attention_data: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 64}
      kv_cache:
        block_size: 16
        prefix_caching: true
        bytes_per_token: 250000
        capacity: {type: fixed, blocks: 8192}
` + host + `      timing: {type: fixed, prefill_ms: 2, decode_ms: 1}
`
}

var connectorProfiles = config.Connectors

// benchRun is one timed child run.
type benchRun struct {
	wall  time.Duration
	stats benchStats
}

func runBench(e *env, args []string) error {
	var runs, sessions, hostBlocks int
	var connector string
	fs := newFlagSet("bench")
	fs.IntVar(&runs, "runs", 5, "")
	fs.IntVar(&sessions, "sessions", 10000, "")
	fs.IntVar(&hostBlocks, "host-offload", 0, "")
	fs.StringVar(&connector, "connector", "", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case runs < 1:
		return usagef("bench: --runs must be at least 1, got %d", runs)
	case sessions < 1:
		return usagef("bench: --sessions must be at least 1, got %d", sessions)
	case hostBlocks < 0:
		return usagef("bench: --host-offload must not be negative, got %d", hostBlocks)
	case connector != "" && hostBlocks == 0:
		return usagef("bench: --connector needs --host-offload BLOCKS")
	case connector != "" && !slices.Contains(connectorProfiles, connector):
		return usagef("bench: --connector: unknown profile %q (accepted: %s)", connector, strings.Join(connectorProfiles, ", "))
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: cannot find this binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "kvsim-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writeConnectorsTrace(filepath.Join(dir, benchTraceFile), sessions); err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, benchConfigFile)
	if err := os.WriteFile(cfgPath, []byte(benchConfig(hostBlocks, connector)), 0o644); err != nil {
		return err
	}
	requests := sessions * trace.ConnectorsTraceDefault().Turns
	tier := "no host offload"
	if hostBlocks > 0 {
		name := connector
		if name == "" {
			name = config.ConnectorOffloadingV024 + " (default)"
		}
		tier = fmt.Sprintf("host offload %s blocks, %s", numfmt.Thousands(int64(hostBlocks)), name)
	}
	fmt.Fprintf(e.stderr, "kvsim bench: %s sessions × %d turns = %s requests, %s; %d runs\n",
		numfmt.Thousands(int64(sessions)), trace.ConnectorsTraceDefault().Turns, numfmt.Thousands(int64(requests)), tier, runs)

	// With a tier, every run is paired with a run without one, in
	// alternating order: the machine's speed drifts more between separate
	// invocations than the tier costs, so only interleaved runs compare.
	basePath := ""
	if hostBlocks > 0 {
		basePath = filepath.Join(dir, "bench-no-tier.yaml")
		if err := os.WriteFile(basePath, []byte(benchConfig(0, "")), 0o644); err != nil {
			return err
		}
	}
	var results, base []benchRun
	for i := range runs {
		order := []string{cfgPath, basePath}
		if i%2 == 1 {
			order[0], order[1] = basePath, cfgPath
		}
		for _, path := range order {
			if path == "" {
				continue
			}
			r, err := benchOnce(exe, path, filepath.Join(dir, "out"), requests)
			if err != nil {
				return err
			}
			if path == basePath {
				fmt.Fprintf(e.stderr, "kvsim bench: run %d/%d without host offload: %.3fs\n", i+1, runs, r.wall.Seconds())
				base = append(base, r)
			} else {
				fmt.Fprintf(e.stderr, "kvsim bench: run %d/%d: %.3fs\n", i+1, runs, r.wall.Seconds())
				results = append(results, r)
			}
		}
	}
	return writeBenchTable(e, results, base, requests, sessions, tier)
}

// benchOnce runs the child predict once and times it from start to exit.
func benchOnce(exe, cfgPath, outDir string, requests int) (benchRun, error) {
	cmd := exec.Command(exe, "predict", "--config", cfgPath, "--output-dir", outDir,
		"--format", "json", "--overwrite", "--bench-stats")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return benchRun{}, fmt.Errorf("bench: kvsim predict failed (%v):\n%s", err, strings.TrimSpace(stderr.String()))
	}
	var sum struct {
		Completed int `json:"completed_requests"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		return benchRun{}, fmt.Errorf("bench: kvsim predict printed no summary: %v", err)
	}
	if sum.Completed != requests {
		return benchRun{}, fmt.Errorf("bench: the run completed %d requests; want %d", sum.Completed, requests)
	}
	r := benchRun{wall: wall}
	found := false
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		var line map[string]benchStats
		if bytes.HasPrefix(sc.Bytes(), []byte(`{"`+benchStatsKey+`"`)) && json.Unmarshal(sc.Bytes(), &line) == nil {
			r.stats, found = line[benchStatsKey], true
		}
	}
	if !found {
		return benchRun{}, fmt.Errorf("bench: kvsim predict printed no %s line", benchStatsKey)
	}
	return r, nil
}

// writeBenchTable prints the runs and their median; base, when not empty,
// holds the paired runs without a tier, and the table adds their median
// and the ratio of the two.
func writeBenchTable(e *env, results, base []benchRun, requests, sessions int, tier string) error {
	var t textTable
	if len(base) > 0 {
		t.add("run", "wall s", "requests/s", "no tier s")
	} else {
		t.add("run", "wall s", "requests/s")
	}
	for i, r := range results {
		row := []string{strconv.Itoa(i + 1), fmt.Sprintf("%.3f", r.wall.Seconds()), numfmt.Thousands(int64(float64(requests) / r.wall.Seconds()))}
		if len(base) > 0 {
			row = append(row, fmt.Sprintf("%.3f", base[i].wall.Seconds()))
		}
		t.add(row...)
	}
	wall, mid := medianRun(results)
	sec := wall.Seconds()
	st := mid.stats
	t.add("")
	t.add("median wall time s", fmt.Sprintf("%.3f", sec))
	t.add("simulated requests/s", numfmt.Thousands(int64(float64(requests)/sec)))
	t.add("passes", numfmt.Thousands(st.Passes))
	t.add("passes/s", numfmt.Thousands(int64(float64(st.Passes)/sec)))
	t.add("ns per simulated request", numfmt.Thousands(int64(sec*1e9/float64(requests))))
	t.add("heap allocations", numfmt.Thousands(int64(st.Mallocs)))
	t.add("heap allocations per request", fmt.Sprintf("%.2f", float64(st.Mallocs)/float64(requests)))
	t.add("heap bytes allocated", numfmt.Thousands(int64(st.TotalAlloc)))
	if len(base) > 0 {
		baseWall, _ := medianRun(base)
		var sum, sumBase time.Duration
		for i := range results {
			sum, sumBase = sum+results[i].wall, sumBase+base[i].wall
		}
		t.add("")
		t.add("median wall time s, no host offload", fmt.Sprintf("%.3f", baseWall.Seconds()))
		t.add("× no host offload (medians)", fmt.Sprintf("%.3f", sec/baseWall.Seconds()))
		t.add("× no host offload (sums)", fmt.Sprintf("%.3f", sum.Seconds()/sumBase.Seconds()))
	}
	fmt.Fprintf(e.stdout, "kvsim bench (docs/model/cases.md, case E): %s sessions × %d turns = %s requests, %s\n",
		numfmt.Thousands(int64(sessions)), trace.ConnectorsTraceDefault().Turns, numfmt.Thousands(int64(requests)), tier)
	fmt.Fprintf(e.stdout, "%s %s/%s, GOMAXPROCS %d, %d CPUs, median of %d runs\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU(), len(results))
	return t.write(e.stdout)
}

// medianRun returns the median wall time of runs (the mean of the two
// middle ones for an even count) and the run at the middle.
func medianRun(runs []benchRun) (time.Duration, benchRun) {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b benchRun) int { return int(a.wall - b.wall) })
	mid := sorted[(len(sorted)-1)/2]
	wall := mid.wall
	if len(sorted)%2 == 0 {
		wall = (wall + sorted[len(sorted)/2].wall) / 2
	}
	return wall, mid
}
