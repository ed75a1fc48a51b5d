package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite cmd/kvsim/testdata/golden from the current output")

// examples is the repository's traces/ directory: configs run from there
// exercise trace paths resolved against the config's directory.
const examples = "../../traces"

// goldenCases are docs/model/cases.md ("Case A: connector comparison")
// (all seven rows) and §B, run through predict with --capture-per-request.
// restored and recomputed are the published figures, checked before the bytes
// so that -update cannot bless a wrong run.
var goldenCases = []struct {
	name                 string
	config               string
	sets                 []string
	restored, recomputed int64
}{
	{"connectors-none", "connectors.yaml", []string{hostOffloadPath + "=null"}, 0, 20320},
	{"connectors-2048-offloading_v0_24", "connectors.yaml", connectorSets(2048, "offloading_v0_24"), 14144, 6544},
	{"connectors-2048-offloading_v0_32", "connectors.yaml", connectorSets(2048, "offloading_v0_32"), 14144, 6544},
	{"connectors-2048-simple_cpu_v0_32", "connectors.yaml", connectorSets(2048, "simple_cpu_v0_32"), 15568, 5248},
	{"connectors-192-offloading_v0_24", "connectors.yaml", connectorSets(192, "offloading_v0_24"), 11488, 8800},
	{"connectors-192-offloading_v0_32", "connectors.yaml", connectorSets(192, "offloading_v0_32"), 14144, 6544},
	{"connectors-192-simple_cpu_v0_32", "connectors.yaml", connectorSets(192, "simple_cpu_v0_32"), 12432, 8368},
	{"g2-restore", "g2-restore.yaml", nil, 8, 28},
}

func connectorSets(blocks int, connector string) []string {
	return []string{fmt.Sprintf("%s.num_host_blocks=%d", hostOffloadPath, blocks), hostOffloadPath + ".connector=" + connector}
}

// predictArgs is the predict command line of a golden case.
func predictArgs(config, out string, sets []string, extra ...string) []string {
	args := []string{"predict", "--config", filepath.Join(examples, config), "--output-dir", out, "--format", "json"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return append(args, extra...)
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			stdout, stderr, code := cli(t, predictArgs(tc.config, out, tc.sets, "--capture-per-request")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			pred := readFile(t, filepath.Join(out, predictionFile))
			reqs := readFile(t, filepath.Join(out, requestsFile))
			checkFigures(t, pred, reqs, tc.restored, tc.recomputed)
			var summary struct {
				Summary json.RawMessage `json:"summary"`
			}
			if err := json.Unmarshal(pred, &summary); err != nil {
				t.Fatal(err)
			}
			if got, want := strings.TrimSpace(stdout), string(summary.Summary); got != want {
				t.Errorf("--format json printed\n%s\nwant prediction.json's summary\n%s", got, want)
			}
			compareGolden(t, filepath.Join("testdata", "golden", tc.name+".json"), pred)
			compareGolden(t, filepath.Join("testdata", "golden", tc.name+".jsonl"), reqs)
		})
	}
}

// checkFigures checks acceptance's "recomputed" (committed_prefill_tokens)
// and "restored" (Σ first_admission_host_reused_input_tokens over
// requests.jsonl).
func checkFigures(t *testing.T, pred, reqs []byte, restored, recomputed int64) {
	t.Helper()
	var p struct {
		Summary struct {
			Completed int   `json:"completed_requests"`
			Committed int64 `json:"committed_prefill_tokens"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(pred, &p); err != nil {
		t.Fatalf("prediction.json: %v", err)
	}
	if p.Summary.Committed != recomputed {
		t.Errorf("committed_prefill_tokens %d; want %d", p.Summary.Committed, recomputed)
	}
	var got int64
	sc := bufio.NewScanner(bytes.NewReader(reqs))
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		var r struct {
			Host int64 `json:"first_admission_host_reused_input_tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("requests.jsonl:%d: %v", lines+1, err)
		}
		got += r.Host
		lines++
	}
	if got != restored {
		t.Errorf("restored %d; want %d", got, restored)
	}
	if lines != p.Summary.Completed {
		t.Errorf("requests.jsonl has %d lines; %d requests completed", lines, p.Summary.Completed)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// compareGolden compares got with the golden file, or rewrites the file
// under -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/kvsim -update writes it)", err)
	}
	if d := firstDiff(path, got, want); d != "" {
		t.Error(d)
	}
}

// firstDiff reports the first line where got and want differ as
// "file:line:col", with an excerpt of both around the column; "" when they
// are equal.
func firstDiff(name string, got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	lines := func(b []byte) [][]byte { return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) }
	gl, wl := lines(got), lines(want)
	for i := 0; ; i++ {
		if i >= len(gl) && i >= len(wl) {
			return fmt.Sprintf("%s: only the final newline differs", name)
		}
		var g, w []byte
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) && i < len(wl) && bytes.Equal(g, w) {
			continue
		}
		col := 0
		for col < len(g) && col < len(w) && g[col] == w[col] {
			col++
		}
		what := "differs"
		switch {
		case i >= len(gl):
			what = "is missing from the output"
		case i >= len(wl):
			what = "is extra in the output"
		}
		return fmt.Sprintf("%s:%d:%d: line %s (go test ./cmd/kvsim -update rewrites the golden files)\n got: %s\nwant: %s",
			name, i+1, col+1, what, excerpt(g, col), excerpt(w, col))
	}
}

func excerpt(line []byte, col int) string {
	const span = 60
	lo, hi := max(0, col-span), min(len(line), col+span)
	s := string(line[lo:hi])
	if lo > 0 {
		s = "…" + s
	}
	if hi < len(line) {
		s += "…"
	}
	return s
}

func TestFirstDiff(t *testing.T) {
	for _, tc := range []struct{ got, want, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nbX\n", "a\nbY\n", "f:2:2: line differs"},
		{"a\n", "a\nb\n", "f:2:1: line is missing"},
		{"a\nb\n", "a\n", "f:2:1: line is extra"},
	} {
		d := firstDiff("f", []byte(tc.got), []byte(tc.want))
		if (tc.diff == "") != (d == "") || !strings.HasPrefix(d, tc.diff) {
			t.Errorf("firstDiff(%q, %q) = %q; want prefix %q", tc.got, tc.want, d, tc.diff)
		}
	}
}

// TestDeterminism runs one G2 case twice: the report files must be
// byte-identical (no wall time, no map order, no randomness).
func TestDeterminism(t *testing.T) {
	var files [2][2][]byte
	for i := range files {
		out := t.TempDir()
		if _, stderr, code := cli(t, predictArgs("connectors.yaml", out, connectorSets(192, "simple_cpu_v0_32"), "--capture-per-request")...); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		files[i] = [2][]byte{readFile(t, filepath.Join(out, predictionFile)), readFile(t, filepath.Join(out, requestsFile))}
	}
	for j, name := range []string{predictionFile, requestsFile} {
		if d := firstDiff(name, files[1][j], files[0][j]); d != "" {
			t.Errorf("second run differs from the first: %s", d)
		}
	}
}

// TestPredict is the predict command line: flags, errors, exit codes and
// what lands in the output directory.
func TestPredict(t *testing.T) {
	type ctx struct {
		t              *testing.T
		dir            string // a fresh temporary directory
		stdout, stderr string
	}
	restore := filepath.Join(examples, "g2-restore.yaml")
	restoreAbs, err := filepath.Abs(restore)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		setup  func(c *ctx)
		args   func(c *ctx) []string
		code   int
		stderr string // substring of stderr
		check  func(c *ctx)
	}{
		{
			name: "default runs §A row 1",
			args: func(c *ctx) []string { return []string{"predict", "--format", "json"} },
			stderr: "kvsim: no --config: running the built-in traces/connectors.yaml with " +
				"engine.workers.aggregated.kv_cache.host_offload=null (acceptance §A, first row)\n",
			check: func(c *ctx) {
				if got := summaryInt(c.t, c.stdout, "committed_prefill_tokens"); got != 20320 {
					c.t.Errorf("committed_prefill_tokens %d; want 20,320", got)
				}
				if _, ok := summaryField(c.t, c.stdout, "g2_lookups"); ok {
					c.t.Error("the default run has a G2 tier")
				}
			},
		},
		{
			name: "default with --set",
			args: func(c *ctx) []string {
				return []string{"predict", "--format", "json", "--set", hostOffloadPath + ".num_host_blocks=2048",
					"--set", hostOffloadPath + ".connector=simple_cpu_v0_32"}
			},
			check: func(c *ctx) {
				if got := summaryInt(c.t, c.stdout, "committed_prefill_tokens"); got != 5248 {
					c.t.Errorf("committed_prefill_tokens %d; want 5,248", got)
				}
			},
		},
		{
			name: "table format",
			args: func(c *ctx) []string { return []string{"predict"} },
			check: func(c *ctx) {
				for _, want := range []string{"committed_prefill_tokens", "20,320", "completed_requests", "ttft", "p99"} {
					if !strings.Contains(c.stdout, want) {
						c.t.Errorf("table lacks %q:\n%s", want, c.stdout)
					}
				}
				if strings.Contains(c.stdout, "{") {
					c.t.Errorf("table output looks like JSON:\n%s", c.stdout)
				}
			},
		},
		{
			name: "table format with G2 and a shared pool",
			args: func(c *ctx) []string {
				return []string{"predict", "--config", restore, "--set", hostOffloadPath + ".scope=cluster_shared"}
			},
			check: func(c *ctx) {
				for _, want := range []string{"restored (first_admission_host_reused_input_tokens)", "g2_lookup_hits", "g2_domains"} {
					if !strings.Contains(c.stdout, want) {
						c.t.Errorf("table lacks %q:\n%s", want, c.stdout)
					}
				}
			},
		},
		{
			name: "json format is one line",
			args: func(c *ctx) []string { return []string{"predict", "--config", restore, "--format", "json"} },
			check: func(c *ctx) {
				if strings.Count(c.stdout, "\n") != 1 || !strings.HasSuffix(c.stdout, "\n") {
					c.t.Errorf("stdout is not one line: %q", c.stdout)
				}
				if got := summaryInt(c.t, c.stdout, "committed_prefill_tokens"); got != 28 {
					c.t.Errorf("committed_prefill_tokens %d; want 28", got)
				}
			},
		},
		{
			name:   "wall time on stderr",
			args:   func(c *ctx) []string { return []string{"predict", "--config", restore} },
			stderr: "kvsim: wall time ",
		},
		{
			name: "no output dir writes nothing",
			setup: func(c *ctx) {
				c.t.Chdir(c.dir)
			},
			args: func(c *ctx) []string {
				return []string{"predict", "--config", restoreAbs, "--format", "json"}
			},
			check: func(c *ctx) {
				if entries, _ := os.ReadDir(c.dir); len(entries) > 0 {
					c.t.Errorf("the working directory got %d entries", len(entries))
				}
			},
		},
		{
			name: "output dir is created",
			args: func(c *ctx) []string {
				return []string{"predict", "--config", restore, "--output-dir", filepath.Join(c.dir, "a", "b")}
			},
			check: func(c *ctx) {
				expectFiles(c.t, filepath.Join(c.dir, "a", "b"), predictionFile)
			},
		},
		{
			name: "nonempty output dir",
			setup: func(c *ctx) {
				writeTestFile(c.t, filepath.Join(c.dir, "notes.txt"), "keep")
			},
			args:   func(c *ctx) []string { return []string{"predict", "--config", restore, "--output-dir", c.dir} },
			code:   exitError,
			stderr: "is not empty (add --overwrite to replace its report files)",
			check:  func(c *ctx) { expectFiles(c.t, c.dir, "notes.txt") },
		},
		{
			name: "overwrite keeps other files and removes stale reports",
			setup: func(c *ctx) {
				writeTestFile(c.t, filepath.Join(c.dir, "notes.txt"), "keep")
				writeTestFile(c.t, filepath.Join(c.dir, predictionFile), "old")
				writeTestFile(c.t, filepath.Join(c.dir, requestsFile), "old")
			},
			args: func(c *ctx) []string {
				return []string{"predict", "--config", restore, "--output-dir", c.dir, "--overwrite"}
			},
			check: func(c *ctx) {
				expectFiles(c.t, c.dir, "notes.txt", predictionFile)
				if b := readFile(c.t, filepath.Join(c.dir, predictionFile)); !bytes.HasPrefix(b, []byte(`{"summary": {`)) {
					c.t.Errorf("prediction.json not replaced: %q", b)
				}
			},
		},
		{
			name: "overwrite with per-request capture",
			setup: func(c *ctx) {
				writeTestFile(c.t, filepath.Join(c.dir, requestsFile), "old")
			},
			args: func(c *ctx) []string {
				return []string{"predict", "--config", restore, "--output-dir", c.dir, "--overwrite", "--capture-per-request"}
			},
			check: func(c *ctx) {
				expectFiles(c.t, c.dir, predictionFile, requestsFile)
				if b := readFile(c.t, filepath.Join(c.dir, requestsFile)); bytes.Count(b, []byte("\n")) != 4 {
					c.t.Errorf("requests.jsonl: want 4 lines, got %q", b)
				}
			},
		},
		{
			name: "output dir is a file",
			setup: func(c *ctx) {
				writeTestFile(c.t, filepath.Join(c.dir, "f"), "")
			},
			args: func(c *ctx) []string {
				return []string{"predict", "--config", restore, "--output-dir", filepath.Join(c.dir, "f")}
			},
			code:   exitError,
			stderr: "is not a directory",
		},
		{
			name: "--stack engine",
			args: func(c *ctx) []string { return []string{"predict", "--config", restore, "--stack", "engine"} },
		},
		{
			name:   "--stack other",
			args:   func(c *ctx) []string { return []string{"predict", "--config", restore, "--stack", "vllm"} },
			code:   exitUsage,
			stderr: `kvsim: predict: --stack: unknown stack "vllm" (accepted: engine)`,
		},
		{
			name:   "--format other",
			args:   func(c *ctx) []string { return []string{"predict", "--format", "yaml"} },
			code:   exitUsage,
			stderr: `--format: unknown format "yaml" (accepted: table, json)`,
		},
		{
			name:   "--capture-per-request without --output-dir",
			args:   func(c *ctx) []string { return []string{"predict", "--capture-per-request"} },
			code:   exitUsage,
			stderr: "--capture-per-request needs --output-dir",
		},
		{
			name: "bad --set value",
			args: func(c *ctx) []string {
				return []string{"predict", "--config", restore, "--set", "engine.workers.aggregated.kv_cache.capacity.blocks=-1"}
			},
			code:   exitError,
			stderr: "kvsim: --set engine.workers.aggregated.kv_cache.capacity.blocks=-1: engine.workers.aggregated.kv_cache.capacity.blocks: ",
		},
		{
			name:   "malformed --set",
			args:   func(c *ctx) []string { return []string{"predict", "--config", restore, "--set", "nonsense"} },
			code:   exitError,
			stderr: "kvsim: --set nonsense: ",
		},
		{
			name:   "missing config file",
			args:   func(c *ctx) []string { return []string{"predict", "--config", filepath.Join(c.dir, "nope.yaml")} },
			code:   exitError,
			stderr: "nope.yaml: no such file or directory",
		},
		{
			name: "config error is positioned",
			setup: func(c *ctx) {
				writeTestFile(c.t, filepath.Join(c.dir, "bad.yaml"), "traffic:\n  nonsense: 1\n")
			},
			args:   func(c *ctx) []string { return []string{"predict", "--config", filepath.Join(c.dir, "bad.yaml")} },
			code:   exitError,
			stderr: "bad.yaml:2:3: traffic",
		},
		{
			name: "trace resolves against the config's directory",
			setup: func(c *ctx) {
				sub := filepath.Join(c.dir, "sub")
				writeTestFile(c.t, filepath.Join(sub, "g2-restore.yaml"), string(readFile(c.t, restore)))
				writeTestFile(c.t, filepath.Join(sub, "g2-restore.jsonl"), string(readFile(c.t, filepath.Join(examples, "g2-restore.jsonl"))))
			},
			args: func(c *ctx) []string {
				return []string{"predict", "--config", filepath.Join(c.dir, "sub", "g2-restore.yaml"), "--format", "json"}
			},
			check: func(c *ctx) {
				if got := summaryInt(c.t, c.stdout, "completed_requests"); got != 4 {
					c.t.Errorf("completed_requests %d; want 4", got)
				}
			},
		},
		{
			name: "missing trace",
			setup: func(c *ctx) {
				writeTestFile(c.t, filepath.Join(c.dir, "g2-restore.yaml"), string(readFile(c.t, restore)))
			},
			args: func(c *ctx) []string { return []string{"predict", "--config", filepath.Join(c.dir, "g2-restore.yaml")} },
			code: exitError,
			check: func(c *ctx) {
				want := "g2-restore.yaml:3:51: traffic.source.paths[0]: open " + filepath.Join(c.dir, "g2-restore.jsonl") + ": no such file"
				if !strings.Contains(c.stderr, want) {
					c.t.Errorf("stderr %q lacks %q", c.stderr, want)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &ctx{t: t, dir: t.TempDir()}
			if tc.setup != nil {
				tc.setup(c)
			}
			var code int
			c.stdout, c.stderr, code = cli(t, tc.args(c)...)
			if code != tc.code {
				t.Fatalf("exit %d; want %d\nstderr: %s", code, tc.code, c.stderr)
			}
			if !strings.Contains(c.stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", c.stderr, tc.stderr)
			}
			if tc.code != exitOK && c.stdout != "" {
				t.Errorf("a failed run printed on stdout: %q", c.stdout)
			}
			if tc.check != nil {
				tc.check(c)
			}
		})
	}
}

// TestCapturePasses: --capture-passes writes passes.jsonl, and inspect and
// diff read it back.
func TestCapturePasses(t *testing.T) {
	out := t.TempDir()
	_, stderr, code := cli(t, predictArgs("g2-restore.yaml", out, nil, "--capture-passes")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b := readFile(t, filepath.Join(out, passesFile)); len(b) == 0 {
		t.Error("passes.jsonl is empty")
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect", "--output-dir", out, "--pass", "3"}, exitOK, "pass 3: start 200 ms"},
		{[]string{"inspect", "--output-dir", out, "--pass", "3"}, exitOK, "h2d_submit restore #3 [seed#0 seed#1] at 200 until 202"},
		{[]string{"inspect", "--output-dir", out, "--pass", "9"}, exitError, "rank 0 has passes 1 to 6; no pass 9"},
		{[]string{"inspect", "--output-dir", out, "--pass", "1", "--worker", "3"}, exitError, "no worker 3 rank 0"},
		{[]string{"inspect", "--output-dir", out}, exitUsage, "--output-dir and --pass"},
		{[]string{"inspect", "--output-dir", t.TempDir(), "--pass", "1"}, exitError, "run 'kvsim predict --capture-passes"},
		{[]string{"diff", out, out}, exitOK, "no divergence"},
		{[]string{"diff", out}, exitUsage, "want two output directories"},
	} {
		stdout, stderr, code := cli(t, tc.args...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("kvsim %v: exit %d, output %q; want exit %d containing %q", tc.args, code, stdout+stderr, tc.code, tc.want)
		}
	}
}

func summaryField(t *testing.T, line, key string) (json.RawMessage, bool) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, line)
	}
	v, ok := m[key]
	return v, ok
}

func summaryInt(t *testing.T, line, key string) int64 {
	t.Helper()
	v, ok := summaryField(t, line, key)
	if !ok {
		t.Fatalf("summary has no %s", key)
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return n
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// expectFiles checks that dir holds exactly the named files.
func expectFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	if len(got) != len(names) {
		t.Errorf("%s holds %v; want %v", dir, got, names)
		return
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("%s holds %v; want %v", dir, got, names)
			return
		}
	}
}
