package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/replay/replaytest"
	"github.com/kvsim/kvsim/traces"
	"github.com/kvsim/kvsim/wasm/proto"
)

// -update rewrites the golden reports from a native replay.Run. It is
// refused under GOOS=js: the goldens are what the wasm bridge must match.
var update = flag.Bool("update", false, "rewrite testdata/*.golden from native replay.Run")

const hostOffload = "engine.workers.aggregated.kv_cache.host_offload"

// goldenCases are docs/model/cases.md ("Case A: connector comparison")
// rows (and §B) whose reports the bridge must reproduce byte for byte.
var goldenCases = []struct {
	name, config string
	sets         []string
	restored     int64
	recomputed   int64
}{
	{"A-2048-simple_cpu_v0_32", "connectors.yaml",
		[]string{hostOffload + ".num_host_blocks=2048", hostOffload + ".connector=simple_cpu_v0_32"}, 15568, 5248},
	{"A-none", "connectors.yaml", []string{hostOffload + "=null"}, 0, 20320},
	{"A-192-offloading_v0_24", "connectors.yaml",
		[]string{hostOffload + ".num_host_blocks=192", hostOffload + ".connector=offloading_v0_24"}, 11488, 8800},
	{"B-restore", "g2-restore.yaml", nil, 8, 28},
}

func goldenPath(name, kind string) string { return filepath.Join("testdata", name+"."+kind+".golden") }

// TestGoldenNative (re)writes or checks the goldens against a native run
// made directly through core/replay, the way the CLI makes it.
func TestGoldenNative(t *testing.T) {
	if runtime.GOOS == "js" {
		if *update {
			t.Fatal("-update must run natively")
		}
		t.Skip("the goldens come from the native run")
	}
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			data, err := traces.Read(c.config)
			if err != nil {
				t.Fatal(err)
			}
			res, err := replay.Run(replay.Job{Name: c.config, Config: data, Sets: c.sets,
				Traces: replay.Traces{Builtin: true}, Capture: replay.Capture{Requests: true}})
			if err != nil {
				t.Fatal(err)
			}
			for kind, got := range map[string][]byte{"prediction.json": res.Prediction, "requests.jsonl": res.Requests} {
				p := goldenPath(c.name, kind)
				if *update {
					if err := os.WriteFile(p, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s is stale: the core's output changed; run `go test ./wasm -update`", p)
				}
			}
		})
	}
}

func goldenJob(t *testing.T, config string, sets []string) *job {
	t.Helper()
	data, err := traces.Read(config)
	if err != nil {
		t.Fatal(err)
	}
	return &job{Op: proto.OpRun, Config: string(data), Name: config, Requests: true,
		Variants: []proto.Variant{{Label: "x", Sets: sets}}}
}

// TestBridgeMatchesGolden runs the bridge (natively, and under node with
// GOOS=js GOARCH=wasm) and compares its reports with the native goldens.
func TestBridgeMatchesGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			var calls int
			outs := goldenJob(t, c.config, c.sets).run(func(_, _, _ int) { calls++ })
			if len(outs) != 1 || outs[0].Err != nil {
				t.Fatalf("run: %+v", outs)
			}
			o := outs[0]
			compareGolden(t, c.name, "prediction.json", o.Prediction)
			compareGolden(t, c.name, "requests.jsonl", o.RequestsJS)
			if o.View.Restored != c.restored || o.View.Recomputed != c.recomputed {
				t.Errorf("view restored/recomputed = %d/%d, want %d/%d", o.View.Restored, o.View.Recomputed, c.restored, c.recomputed)
			}
			if calls == 0 {
				t.Error("no progress reported")
			}
		})
	}
}

func compareGolden(t *testing.T, name, kind string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(goldenPath(name, kind))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s %s differs from the native golden at byte %d (got %d bytes, want %d)", name, kind, i, len(got), len(want))
	}
}

// TestFileAndRerun: the on-demand report equals the eager one, also when
// it is replayed.
func TestFileAndRerun(t *testing.T) {
	for _, c := range goldenCases[:2] {
		j := goldenJob(t, c.config, c.sets)
		j.Requests = false
		outs := j.run(nil)
		if outs[0].RequestsJS != nil {
			t.Error("requests.jsonl encoded although not asked for")
		}
		b, err := outs[0].file(proto.FileRequests)
		if err != nil {
			t.Fatal(err)
		}
		compareGolden(t, c.name, "requests.jsonl", b)
		o := j.rerun(0)
		b, err = o.file(proto.FileRequests)
		if err != nil {
			t.Fatal(err)
		}
		compareGolden(t, c.name, "requests.jsonl", b)
		if _, err := o.file("nope"); err == nil {
			t.Error("unknown file kind accepted")
		}
		if o := j.rerun(5); o.Err == nil {
			t.Error("rerun of a missing variant")
		}
	}
}

func TestViewSumsAgree(t *testing.T) {
	outs := goldenJob(t, "connectors.yaml", goldenCases[0].sets).run(nil)
	v := outs[0].View
	if v.Requests != 48 || v.Completed != 48 || len(v.Rows) != 48 || len(v.Turns) != 6 {
		t.Fatalf("requests %d completed %d rows %d turns %d", v.Requests, v.Completed, len(v.Rows), len(v.Turns))
	}
	var restored, g1 int64
	for _, tr := range v.Turns {
		restored += tr.Restored
		g1 += tr.G1
	}
	if restored != v.Restored || g1 != v.G1Reused {
		t.Errorf("turn sums %d/%d, view %d/%d", restored, g1, v.Restored, v.G1Reused)
	}
	if v.TTFTP50 <= 0 || v.TTFTP99 < v.TTFTP50 {
		t.Errorf("ttft p50 %v p99 %v", v.TTFTP50, v.TTFTP99)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		sets       []string
		traces     map[string]string
		kind, path string
		line       int
	}{
		{"config", "traffic: {}\n", nil, nil, "config", "traffic.source", 1},
		{"override", string(mustRead(t, "connectors.yaml")), []string{hostOffload + ".num_host_blocks=0"}, nil, "config",
			hostOffload + ".num_host_blocks", 0},
		{"trace", string(mustRead(t, "connectors.yaml")), nil, map[string]string{"delta-sessions.jsonl": "{not json\n"}, "trace", "", 1},
		{"missing trace", "traffic:\n  source: {type: trace, paths: [nope.jsonl], block_size: 16}\n  load: {type: concurrency, concurrency: 1}\n" +
			string(mustRead(t, "connectors.yaml"))[bytes.Index(mustRead(t, "connectors.yaml"), []byte("engine:")):], nil, nil, "trace",
			"traffic.source.paths[0]", 2},
		{"over the limits", string(mustRead(t, "connectors.yaml")), []string{"engine.workers.aggregated.kv_cache.capacity.blocks=10000000"}, nil,
			"limit", "engine.workers.aggregated.kv_cache.capacity.blocks", 0},
		{"disaggregated", string(mustRead(t, "connectors.yaml")), []string{"engine.mode=disaggregated"}, nil, "config", "", -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := &job{Op: proto.OpRun, Config: c.yaml, Name: "c.yaml", Traces: c.traces, Overrides: c.sets}
			outs := j.run(nil)
			e := outs[0].Err
			if e == nil {
				t.Fatal("no error")
			}
			if e.Kind != c.kind || (c.path != "" && e.Path != c.path) || (c.line >= 0 && e.Line != c.line) {
				t.Errorf("got %+v", e)
			}
			if e.Msg == "" {
				t.Error("empty message")
			}
		})
	}
}

func TestCheckTrace(t *testing.T) {
	j := &job{Op: proto.OpCheck, Name: "up.jsonl", Text: string(mustRead(t, "delta-sessions.jsonl")), Format: "mooncake-delta", BlockSize: 16}
	info, err := j.check()
	if err != nil || info.Sessions != 8 || info.Requests != 48 {
		t.Fatalf("check: %+v %v", info, err)
	}
	j.Text = "{\"request_id\": 1}\n"
	if _, err := j.check(); err == nil || err.Kind != "trace" || err.Line != 1 {
		t.Fatalf("malformed trace: %+v", err)
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := traces.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOversizedJobsAreRefused: jobs over replay.DefaultLimits come back as
// one "limit" error per variant, with core/replay's message (the CLI and
// the worker API give the same: cmd/kvsim/limits_test.go,
// worker/api/limits_test.go).
func TestOversizedJobsAreRefused(t *testing.T) {
	conn := mustRead(t, "connectors.yaml")
	for name, sets := range replaytest.Oversized {
		t.Run(name, func(t *testing.T) {
			want := replay.Check(replay.Job{Name: "config.yaml", Config: conn, Sets: sets})
			if want == nil {
				t.Fatal("replay.Check accepts the job")
			}
			j := &job{Op: proto.OpRun, Config: string(conn), Overrides: sets, Passes: true,
				Variants: []proto.Variant{{Label: "a"}, {Label: "b", Sets: []string{hostOffload + ".connector=simple_cpu_v0_32"}}}}
			for i, o := range j.run(nil) {
				if o.Err == nil || o.Err.Kind != "limit" || o.Err.Msg != want.Error() {
					t.Errorf("variant %d: %+v; want %q", i, o.Err, want.Error())
				}
			}
		})
	}
}
