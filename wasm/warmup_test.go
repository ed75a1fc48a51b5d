package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/traces"
	"github.com/kvsim/kvsim/wasm/proto"
)

// TestMarkWarmup: a warmed agentic run (traces/agentic-g2.yaml, 2 lanes,
// snapshot seed 7) marks its barrier and, per rank, the passes before it;
// every such pass starts before the barrier and every later one at or
// after it. Without warmup nothing is marked.
func TestMarkWarmup(t *testing.T) {
	data, err := traces.Read("agentic-g2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets := []string{"traffic.load.agentic_lanes=2", "traffic.load.agentic_snapshot={seed: 7}"}
	for _, warm := range []bool{false, true} {
		s := sets
		if warm {
			s = append(s[:len(s):len(s)], "traffic.load.agentic_warmup=true")
		}
		out, err := replay.Run(replay.Job{Name: "agentic-g2.yaml", Config: data, Sets: s, Traces: replay.Traces{Builtin: true},
			Capture: replay.Capture{Passes: true}})
		if err != nil {
			t.Fatal(err)
		}
		m := proto.PassMeta{Ranks: make([]proto.RankMeta, len(out.Record.Ranks))}
		markWarmup(&m, out.Record, out.Summary.Agentic)
		if m.Warmup != warm {
			t.Fatalf("warmup %v: marked %v", warm, m.Warmup)
		}
		prep, total := 0, 0
		for k, rm := range m.Ranks {
			for i := 1; i <= out.Record.NumPasses(k); i++ {
				in, _ := out.Record.Info(k, i)
				if before := float64(in.StartMs) < m.BarrierMs; warm && before != (i <= rm.Prep) {
					t.Errorf("rank %d pass %d starts at %v, barrier %v, prep %d", k, i, in.StartMs, m.BarrierMs, rm.Prep)
				}
			}
			prep += rm.Prep
			total += out.Record.NumPasses(k)
		}
		if warm && (prep == 0 || prep == total) {
			t.Errorf("prep passes %d of %d", prep, total)
		}
		t.Logf("warmup %v: barrier %v ms, %d of %d passes before it", warm, m.BarrierMs, prep, total)
	}
}

// TestCheckWeka: the upload check reads a weka corpus with block size 0
// (the corpus's own block_size) as the page sends it, and refuses a
// negative one with the reader's message.
func TestCheckWeka(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "core", "trace", "testdata", "weka-g2-restore.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	j := &job{Op: proto.OpCheck, Name: "weka.jsonl", Text: string(text), Format: "weka", BlockSize: 0}
	info, cerr := j.check()
	if cerr != nil || info.Sessions == 0 || info.Requests == 0 {
		t.Fatalf("check: %+v %v", info, cerr)
	}
	t.Logf("weka-g2-restore.jsonl: %d sessions, %d requests", info.Sessions, info.Requests)
	j.BlockSize = -1
	if _, cerr := j.check(); cerr == nil || !strings.Contains(cerr.Msg, "block size must be positive") {
		t.Fatalf("block size -1: %+v", cerr)
	}
}

// TestAgenticView: the run view's agentic sections are prediction.json's
// (the proto types decode its agentic_snapshots, agentic_phases and
// agentic_profile keys), for a warmed profile of traces/agentic-g2.yaml
// (2 lanes, snapshot seed 7, 0.5 s); a run without the controls has none.
func TestAgenticView(t *testing.T) {
	data, err := traces.Read("agentic-g2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := replay.Run(replay.Job{Name: "agentic-g2.yaml", Config: data, Traces: replay.Traces{Builtin: true}})
	if err != nil {
		t.Fatal(err)
	}
	if v := view(plain); v.Agentic != nil {
		t.Errorf("no controls: agentic %+v", v.Agentic)
	}
	out, err := replay.Run(replay.Job{Name: "agentic-g2.yaml", Config: data, Traces: replay.Traces{Builtin: true},
		Sets: []string{"traffic.load.agentic_lanes=2", "traffic.load.agentic_snapshot={seed: 7}", "traffic.load.agentic_warmup=true",
			"traffic.load.agentic_profile={duration_seconds: 0.5, response_grace_seconds: 0}"}})
	if err != nil {
		t.Fatal(err)
	}
	got := view(out).Agentic
	var doc struct {
		Lanes   []proto.AgenticLane   `json:"agentic_snapshots"`
		Warmup  *proto.AgenticWarmup  `json:"agentic_phases"`
		Profile *proto.AgenticProfile `json:"agentic_profile"`
	}
	if err := json.Unmarshal(out.Prediction, &doc); err != nil {
		t.Fatal(err)
	}
	want := &proto.Agentic{Seed: 7, Lanes: doc.Lanes, Warmup: doc.Warmup, Profile: doc.Profile}
	if got == nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("view %+v\nwant %+v", got, want)
	}
	if len(got.Lanes) != 2 || got.Warmup == nil || got.Warmup.Lanes[0].Warmups != 10 || got.Profile == nil ||
		got.Profile.CutoffMs != got.Profile.StartMs+500 || got.Profile.Successful == 0 {
		t.Errorf("agentic view %+v (warmup %+v, profile %+v)", got, got.Warmup, got.Profile)
	}
	t.Logf("barrier %v ms; profile %+v", got.Warmup.BarrierMs, *got.Profile)
}
