package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/vtime"
	"github.com/kvsim/kvsim/wasm/proto"
)

// BenchmarkBridgeA runs
// docs/model/cases.md ("Case A: connector comparison") (2,048 host
// blocks, SimpleCPU) through the bridge, reports included. Run it natively and
// under node (GOOS=js GOARCH=wasm) to compare: docs/ui.md records the ratio.
func BenchmarkBridgeA(b *testing.B) {
	data := string(mustRead(&testing.T{}, "connectors.yaml"))
	j := &job{Op: proto.OpRun, Config: data, Name: "connectors.yaml", Requests: true,
		Variants: []proto.Variant{{Label: "x", Sets: goldenCases[0].sets}}}
	for b.Loop() {
		if outs := j.run(nil); outs[0].Err != nil {
			b.Fatal(outs[0].Err)
		}
	}
}

// BenchmarkBridgeSessions is a larger synthetic-session workload (512
// sessions × 6 turns, 3,072 requests) with a 192-block G2.
func BenchmarkBridgeSessions(b *testing.B) {
	data := string(mustRead(&testing.T{}, "connectors.yaml"))
	j := &job{Op: proto.OpRun, Config: data, Name: "connectors.yaml",
		Overrides: []string{"traffic={source: {type: synthetic-session, new_input_tokens_per_turn: 256, output_tokens_per_turn: 64, session: {turns: 6, inter_turn_delay_ms: 200}}, load: {type: concurrency, concurrency: 4}, stop: {sessions: 512}}",
			hostOffload + ".num_host_blocks=192"}}
	for b.Loop() {
		if outs := j.run(nil); outs[0].Err != nil {
			b.Fatal(outs[0].Err)
		}
	}
}

// indexA3 runs the default page's compare (§A at 192 host blocks, three
// connectors) with records.
func indexA3(b *testing.B) []*record.Record {
	data := string(mustRead(&testing.T{}, "connectors.yaml"))
	j := &job{Op: proto.OpRun, Config: data, Name: "connectors.yaml", Passes: true}
	for _, c := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
		j.Variants = append(j.Variants, proto.Variant{Label: c, Sets: []string{hostOffload + ".num_host_blocks=192", hostOffload + ".connector=" + c}})
	}
	outs := j.run(nil)
	recs := make([]*record.Record, len(outs))
	for i, o := range outs {
		if o.Record == nil {
			b.Fatal("no record")
		}
		recs[i] = o.Record
	}
	return recs
}

// BenchmarkIndexA3 indexes the timeline of the default page's compare:
// the per-pass work the worker does after the run, in 15 ms steps
// (record.Info, EventKinds and Events; state only until the runs
// diverge).
func BenchmarkIndexA3(b *testing.B) {
	recs := indexA3(b)
	for b.Loop() {
		p := newPasses(recs)
		for !p.step(15 * time.Millisecond) {
		}
	}
}

// BenchmarkIndexA3Seek is the same index built the way the bridge built
// it before core/record exported Events, Info and EventKinds: a SeekInto
// (G1 and G2 rebuilt) of every run at every pass. docs/ui.md compares the
// two.
func BenchmarkIndexA3Seek(b *testing.B) {
	recs := indexA3(b)
	var want *passes
	for b.Loop() {
		p := newPasses(recs)
		for k := 0; k < p.maxRanks(); k++ {
			for pass := 1; pass <= p.lines(k); pass++ {
				seekIndexPass(p, k, pass)
			}
		}
		want = p
	}
	// the same timelines as the index the worker builds
	q := newPasses(recs)
	for !q.step(time.Second) {
	}
	for v := range recs {
		a, c := want.tl[v][0], q.tl[v][0]
		if len(a.Start) != len(c.Start) || len(a.Transfers) != len(c.Transfers) || a.Diverge != c.Diverge || a.Counts[100] != c.Counts[100] {
			b.Fatalf("variant %d: the two indexes differ", v)
		}
	}
}

var seekSet = map[string]bool{}

func deref(f *vtime.Time) float64 {
	if f == nil {
		return math.NaN()
	}
	return float64(*f)
}

// seekIndexPass is the former indexPass: every run's state rebuilt at
// every pass, events taken from the snapshot.
func seekIndexPass(p *passes, k, pass int) {
	for v, rec := range p.recs {
		if k >= len(rec.Ranks) || pass > rec.NumLines(k) {
			continue
		}
		snap := &p.snaps[v]
		if err := rec.SeekInto(k, pass, snap); err != nil {
			continue
		}
		tl := p.tl[v][k]
		tl.Start = append(tl.Start, float64(snap.Info.StartMs))
		tl.End = append(tl.End, float64(snap.Info.EndMs))
		var c [proto.NumMarks]uint16
		for _, e := range snap.Events {
			if m, ok := markerOf[e.Kind]; ok {
				c[m]++
			}
			switch e.Kind {
			case "d2h_submit", "h2d_submit":
				p.open[v][e.Transfer] = len(tl.Transfers)
				tl.Transfers = append(tl.Transfers, proto.Transfer{H2D: e.Kind == "h2d_submit", Blocks: len(e.Blocks),
					Submit: deref(e.AtMs), Deadline: deref(e.DeadlineMs), Complete: math.NaN(), Pass: pass})
			case "d2h_complete", "h2d_complete":
				if i, ok := p.open[v][e.Transfer]; ok {
					tl.Transfers[i].Complete = deref(e.AtMs)
					delete(p.open[v], e.Transfer)
				}
			}
		}
		tl.Counts = append(tl.Counts, c)
	}
	set := seekSet
	clear(set)
	key := func(r *record.Record, s *record.Snapshot, add bool) bool {
		n := 0
		for _, sl := range s.G1 {
			if sl.Block >= 0 && sl.State != record.SlotPrivate && sl.State != record.SlotFree {
				if add {
					set["g1:"+r.BlockName(sl.Block)] = true
				} else if !set["g1:"+r.BlockName(sl.Block)] {
					return false
				}
				n++
			}
		}
		for _, e := range s.G2 {
			if add {
				set["g2:"+r.BlockName(e.Block)] = true
			} else if !set["g2:"+r.BlockName(e.Block)] {
				return false
			}
			n++
		}
		return add || n == len(set)
	}
	key(p.recs[0], &p.snaps[0], true)
	for v := 1; v < len(p.recs); v++ {
		if p.tl[v][k].Diverge == 0 && !key(p.recs[v], &p.snaps[v], false) {
			p.tl[v][k].Diverge = pass
		}
	}
}

// BenchmarkDivergencesA3 is the worker's kvsim diff of the default page's
// compare (two later runs against the first), computed once its timeline
// is indexed.
func BenchmarkDivergencesA3(b *testing.B) {
	recs := indexA3(b)
	p := newPasses(recs)
	for b.Loop() {
		if len(p.divergences()) != 2 {
			b.Fatal("want two divergences")
		}
	}
}

// BenchmarkFrameMooncake answers the page's seek of 20 random passes of
// the pass view's first window of the Mooncake conversation trace (no G2,
// 4 ranks of 40,000 G1 slots): record.SeekInto, then the frame's
// encoding and the page's decoding of it, reported apart (ms-seek,
// ms-encode, ms-decode: medians). The trace is
// not in the repository: set KVSIM_MOONCAKE to its conversation.yaml.
func BenchmarkFrameMooncake(b *testing.B) {
	config, trace := mooncakeCase(b)
	j := &job{Op: proto.OpRun, Config: config, Name: "conversation.yaml", Passes: true,
		Traces: map[string]string{"conversation_trace.jsonl": trace}}
	outs := j.run(nil)
	if outs[0].Err != nil || outs[0].Record == nil {
		b.Fatalf("no record: %v", outs[0].Err)
	}
	p := newPasses([]*record.Record{outs[0].Record})
	for !p.step(time.Second) {
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var f proto.Frame
	for b.Loop() {
		var seeks, encodes, decodes []time.Duration
		for range 20 {
			rank, pass := rng.IntN(4), 1+rng.IntN(2000)
			t0 := time.Now()
			if err := outs[0].Record.SeekInto(rank, pass, &p.snaps[0]); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			bin, _, err := p.encodeFrame(0, &p.snaps[0])
			if err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			if err := proto.DecodeFrame(bin, &f); err != nil {
				b.Fatal(err)
			}
			seeks, encodes, decodes = append(seeks, t1.Sub(t0)), append(encodes, t2.Sub(t1)), append(decodes, time.Since(t2))
		}
		for _, d := range [][]time.Duration{seeks, encodes, decodes} {
			slices.Sort(d)
		}
		b.ReportMetric(float64(seeks[10].Microseconds())/1000, "ms-seek")
		b.ReportMetric(float64(encodes[10].Microseconds())/1000, "ms-encode")
		b.ReportMetric(float64(decodes[10].Microseconds())/1000, "ms-decode")
	}
}

// mooncakeCase reads the Mooncake case's conversation.yaml (the path in
// KVSIM_MOONCAKE; the benchmark is skipped without it) and its trace.
func mooncakeCase(b *testing.B) (config, trace string) {
	path := os.Getenv("KVSIM_MOONCAKE")
	if path == "" {
		b.Skip("set KVSIM_MOONCAKE to the Mooncake case's conversation.yaml")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := os.ReadFile(filepath.Join(filepath.Dir(path), "conversation_trace.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	return string(data), string(tr)
}

// BenchmarkCompareMoveMooncake is a compare's window move on the Mooncake
// conversation trace (200,000 host blocks, the three connectors), as the
// run worker makes it: the three runs to the end of a window starting at
// pass 8,179 (the runs part inside it), 50,000 or 150,000 (PassesOnly, no
// checkpoints: a compare keeps none), then the timeline index of the
// three windows, first divergences included (s-runs, s-index). Use
// -benchtime 1x.
func BenchmarkCompareMoveMooncake(b *testing.B) {
	config, trace := mooncakeCase(b)
	config = strings.Replace(config, "        capacity: {type: fixed, blocks: 40000}\n",
		"        capacity: {type: fixed, blocks: 40000}\n        host_offload: {num_host_blocks: 200000, connector: simple_cpu_v0_32}\n", 1)
	var vs []proto.Variant
	for _, c := range []string{"offloading_v0_24", "offloading_v0_32", "simple_cpu_v0_32"} {
		vs = append(vs, proto.Variant{Label: c, Sets: []string{"engine.workers.aggregated.kv_cache.host_offload.connector=" + c}})
	}
	for _, from := range []int{8179, 50000, 150000} {
		b.Run(fmt.Sprint("from ", from), func(b *testing.B) {
			for b.Loop() {
				dropScrub()
				j := &job{Op: proto.OpRun, Config: config, Name: "conversation.yaml", Passes: true, Variants: vs,
					FromPass: from, PassesOnly: true, Traces: map[string]string{"conversation_trace.jsonl": trace}}
				t0 := time.Now()
				outs := j.run(nil)
				t1 := time.Now()
				var recs []*record.Record
				for _, o := range outs {
					if o.Err != nil || o.Record == nil {
						b.Fatalf("%s: no record: %v %s", o.Label, o.Err, o.RecordNote)
					}
					recs = append(recs, o.Record)
				}
				p := newPasses(recs)
				for !p.step(time.Second) {
				}
				b.ReportMetric(t1.Sub(t0).Seconds(), "s-runs")
				b.ReportMetric(time.Since(t1).Seconds(), "s-index")
			}
		})
	}
}
