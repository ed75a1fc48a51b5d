package record_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"reflect"
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/g1"
	"github.com/kvsim/kvsim/core/record"
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/vtime"
	"github.com/kvsim/kvsim/traces"
)

const hostOffload = "engine.workers.aggregated.kv_cache.host_offload"

var connectorRows = []struct {
	name string
	sets []string
}{
	{"none", []string{hostOffload + "=null"}},
	{"2048-offloading_v0_24", []string{hostOffload + ".connector=offloading_v0_24"}},
	{"2048-offloading_v0_32", []string{hostOffload + ".connector=offloading_v0_32"}},
	{"2048-simple_cpu_v0_32", nil},
	{"192-offloading_v0_24", []string{hostOffload + ".num_host_blocks=192", hostOffload + ".connector=offloading_v0_24"}},
	{"192-offloading_v0_32", []string{hostOffload + ".num_host_blocks=192", hostOffload + ".connector=offloading_v0_32"}},
	{"192-simple_cpu_v0_32", []string{hostOffload + ".num_host_blocks=192"}},
}

// liveSlot is what the engine's pool says about a slot at a pass end.
type liveState struct {
	g1 []record.Slot
	g2 []record.Entry
}

// run replays an example with a recorder; when live is set it captures the
// engine's own state at every pass end.
func run(t testing.TB, example string, sets []string, live bool) (*record.Record, map[[2]int]liveState, *replay.Result) {
	t.Helper()
	rr := record.NewRecorder()
	states := map[[2]int]liveState{}
	var e *engine.Engine
	if live {
		rr.LiveCheck = func(rank, pass int) { states[[2]int{rank, pass}] = capture(e.Ranks()[rank]) }
	}
	e = newEngine(t, example, sets, rr)
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return rr.Record(), states, nil
}

// newEngine builds example's engine with the invariant checker and obs as
// its observer.
func newEngine(t testing.TB, example string, sets []string, obs engine.Observer) *engine.Engine {
	t.Helper()
	data, err := traces.Read(example)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(example, ".", data, sets)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := replay.Workload(cfg, traces.Open)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(cfg, wl, engine.Options{Observer: obs, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// capture reads a rank's live G1 and G2 state straight from the engine, the
// way the record models it.
func capture(rk *engine.Rank) liveState {
	p := rk.Pool
	var s liveState
	pos := map[int32]int32{}
	for i, q := range p.IdleOrder(nil) {
		pos[q] = int32(i)
	}
	for i := int32(0); i < int32(p.Capacity()); i++ {
		sl := p.Inspect(i)
		st := record.SlotFree
		switch {
		case sl.State == g1.Free:
		case sl.State == g1.Private && sl.Reserved:
			st = record.SlotReserved
		case sl.State == g1.Private:
			st = record.SlotPrivate
		case sl.Ref > 0:
			st = record.SlotActive
		case sl.Pin > 0:
			st = record.SlotReserved
		case sl.Hold > 0:
			st = record.SlotHeld
		default:
			st = record.SlotIdle
		}
		qp, ok := pos[i]
		if !ok {
			qp = -1
		}
		owner := sl.Owner
		if st == record.SlotFree {
			owner = -1
		}
		s.g1 = append(s.g1, record.Slot{State: st, Block: int32(sl.ID), Owner: owner, QueuePos: qp})
	}
	if rk.Host != nil {
		t := rk.Host.Tier()
		order := int32(0)
		for _, id := range t.Order(nil) {
			s.g2 = append(s.g2, record.Entry{Block: int32(id), State: record.EntryResident, Order: order})
			order++
		}
	}
	return s
}

// TestReconstructionIsExact: for every pass of every §A (docs/model/cases.md) run, the state
// rebuilt from the delta log equals the engine's live state at that pass.
func TestReconstructionIsExact(t *testing.T) {
	for _, row := range connectorRows {
		t.Run(row.name, func(t *testing.T) {
			rec, states, _ := run(t, "connectors.yaml", row.sets, true)
			for rank := range rec.Ranks {
				for pass := 1; pass <= rec.NumPasses(rank); pass++ {
					snap, err := rec.Seek(rank, pass)
					if err != nil {
						t.Fatal(err)
					}
					want := states[[2]int{rank, pass}]
					for i := range snap.G1 {
						got := snap.G1[i]
						got.Since = 0
						if got != want.g1[i] {
							t.Fatalf("pass %d slot %d: rebuilt %+v; live %+v", pass, i, got, want.g1[i])
						}
					}
					var order []record.Entry
					for _, e := range snap.G2 {
						if e.Order >= 0 {
							order = append(order, e)
						}
					}
					if !reflect.DeepEqual(order, want.g2) {
						t.Fatalf("pass %d: rebuilt G2 order %v; live %v", pass, order, want.g2)
					}
					if err := record.CheckSnapshot(snap, rec); err != nil {
						t.Fatalf("pass %d: %v", pass, err)
					}
				}
			}
		})
	}
}

// TestJSONLRoundTrip: Decode(WriteJSONL(rec)) seeks to the same snapshots.
func TestJSONLRoundTrip(t *testing.T) {
	for _, row := range connectorRows {
		t.Run(row.name, func(t *testing.T) {
			rec, _, _ := run(t, "connectors.yaml", row.sets, false)
			var b bytes.Buffer
			if err := rec.WriteJSONL(&b); err != nil {
				t.Fatal(err)
			}
			dec, err := record.Decode(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			var b2 bytes.Buffer
			if err := dec.WriteJSONL(&b2); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), b2.Bytes()) {
				t.Fatalf("re-encoding a decoded record changes passes.jsonl")
			}
			for rank := range rec.Ranks {
				if rec.NumLines(rank) != dec.NumLines(rank) {
					t.Fatalf("rank %d: %d lines; decoded %d", rank, rec.NumLines(rank), dec.NumLines(rank))
				}
				for pass := 1; pass <= rec.NumLines(rank); pass++ {
					a, _ := rec.Seek(rank, pass)
					d, err := dec.Seek(rank, pass)
					if err != nil {
						t.Fatal(err)
					}
					if !sameSnapshot(rec, a, dec, d) {
						t.Fatalf("rank %d pass %d: decoded snapshot differs", rank, pass)
					}
				}
			}
		})
	}
}

func sameSnapshot(ra *record.Record, a *record.Snapshot, rb *record.Record, b *record.Snapshot) bool {
	if len(a.G1) != len(b.G1) || len(a.G2) != len(b.G2) || !reflect.DeepEqual(a.Events, b.Events) ||
		!reflect.DeepEqual(a.Info, b.Info) {
		return false
	}
	for i := range a.G1 {
		x, y := a.G1[i], b.G1[i]
		if x.State != y.State || x.QueuePos != y.QueuePos || x.Since != y.Since ||
			ra.BlockName(x.Block) != rb.BlockName(y.Block) || ra.Request(x.Owner) != rb.Request(y.Owner) {
			return false
		}
	}
	for i := range a.G2 {
		x, y := a.G2[i], b.G2[i]
		if x.State != y.State || x.Order != y.Order || ra.BlockName(x.Block) != rb.BlockName(y.Block) {
			return false
		}
	}
	return true
}

// TestRestoreRecord is issue 4's §B check, read from passes.jsonl.
func TestRestoreRecord(t *testing.T) {
	rec0, _, _ := run(t, "g2-restore.yaml", nil, false)
	var b bytes.Buffer
	if err := rec0.WriteJSONL(&b); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	find := func(kind, req string) (int, record.Event) {
		for p := 1; p <= rec.NumLines(0); p++ {
			s, _ := rec.Seek(0, p)
			for _, e := range s.Events {
				if e.Kind == kind && (req == "" || e.Request == req) {
					return p, e
				}
			}
		}
		t.Fatalf("no %s event for %q", kind, req)
		return 0, record.Event{}
	}
	// The seed's two prompt blocks are stored at the end of its pass.
	p, ev := find("store_prepared", "seed")
	s, _ := rec.Seek(0, p)
	if fmt.Sprint(ev.Blocks) != "[seed#0 seed#1]" || s.Info.StartMs != 0 || s.Info.EndMs != 2 {
		t.Errorf("seed store: pass %+v blocks %v", s.Info, ev.Blocks)
	}
	_, sub := find("d2h_submit", "")
	if *sub.AtMs != 2 || *sub.DeadlineMs != 4 {
		t.Errorf("seed D2H submitted at %v, completes %v; want 2 and 4", *sub.AtMs, *sub.DeadlineMs)
	}
	// Both leave G1 at 100 ms, tail block first.
	p, _ = find("g1_evict", "")
	s, _ = rec.Seek(0, p)
	var evicted []string
	for _, e := range s.Events {
		if e.Kind == "g1_evict" {
			evicted = append(evicted, e.Block)
		}
	}
	if s.Info.StartMs != 100 || fmt.Sprint(evicted) != "[seed#1 seed#0]" {
		t.Errorf("G1 evictions at %v: %v; want seed#1 then seed#0 at 100", s.Info.StartMs, evicted)
	}
	// The 2-block load runs 200–202 and the restore is admitted at 202.
	_, h2d := find("h2d_submit", "")
	if *h2d.AtMs != 200 || *h2d.DeadlineMs != 202 || len(h2d.Blocks) != 2 {
		t.Errorf("H2D %v–%v of %v; want 200–202 of two blocks", *h2d.AtMs, *h2d.DeadlineMs, h2d.Blocks)
	}
	_, done := find("h2d_complete", "restore")
	if *done.AtMs != 202 {
		t.Errorf("H2D completes at %v; want 202", *done.AtMs)
	}
	p, adm := find("admit", "restore")
	s, _ = rec.Seek(0, p)
	if s.Info.StartMs != 202 || *adm.Host != 8 || *adm.G1 != 0 {
		t.Errorf("restore admitted at %v with host %d g1 %d; want 202, 8, 0", s.Info.StartMs, *adm.Host, *adm.G1)
	}
	_ = io.Discard
}

// BenchmarkSeek seeks to random passes of a run with a 16,384-slot G1 and a
// 4,096-block G2 (the scrubbing path: SeekInto reuses the snapshot).
func BenchmarkSeek(b *testing.B) {
	spec := trace.ConnectorsTraceDefault()
	spec.Sessions = 400
	var tr bytes.Buffer
	if err := trace.WriteConnectorsTrace(&tr, spec); err != nil {
		b.Fatal(err)
	}
	data, _ := traces.Read("connectors.yaml")
	cfg, err := config.Parse("connectors.yaml", ".", data, []string{"traffic.load.concurrency=64",
		"engine.workers.aggregated.scheduler.max_sequences=64", "engine.workers.aggregated.scheduler.max_batched_tokens=8192",
		"engine.workers.aggregated.kv_cache.capacity.blocks=16384", hostOffload + ".num_host_blocks=4096"})
	if err != nil {
		b.Fatal(err)
	}
	wl, err := replay.Workload(cfg, func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tr.Bytes())), nil })
	if err != nil {
		b.Fatal(err)
	}
	rr := record.NewRecorder()
	if _, err := replay.RunWith(cfg, wl, engine.Options{Observer: rr}); err != nil {
		b.Fatal(err)
	}
	rec := rr.Record()
	n := rec.NumPasses(0)
	st := rec.Stats()
	b.ReportMetric(st.BytesPerChng, "bytes/change")
	b.ReportMetric(float64(rec.G1Capacity[0]), "g1-slots")
	var snap record.Snapshot
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := rec.SeekInto(0, 1+(i*7919)%n, &snap); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDiffExplainsRestores is issue 4's §A check: kvsim diff between the
// 192-block offloading_v0_24 and offloading_v0_32 runs names the first
// divergent pass and the blocks v0_24 evicted that v0_32 kept, and the
// restores v0_24 lost account for the whole difference in restored tokens.
func TestDiffExplainsRestores(t *testing.T) {
	a, _, _ := run(t, "connectors.yaml", connectorRows[4].sets, false)
	b, _, _ := run(t, "connectors.yaml", connectorRows[5].sets, false)
	d, err := record.Diff(a, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.FirstDivergent == 0 {
		t.Fatal("no divergent pass")
	}
	kept := 0
	for _, p := range d.Passes {
		for _, tb := range p.EvictedByAKeptByB {
			if tb.Tier == "g2" {
				kept++
			}
		}
	}
	if kept == 0 {
		t.Fatal("no G2 block evicted by v0_24 and kept by v0_32")
	}
	if len(d.OnlyA) != 0 {
		t.Errorf("v0_24 made %d restores v0_32 did not; want none", len(d.OnlyA))
	}
	var out bytes.Buffer
	d.Write(&out, "offloading_v0_24", "offloading_v0_32", 3)
	t.Logf("\n%s", out.String())
}

func TestInspect(t *testing.T) {
	rec, _, _ := run(t, "g2-restore.yaml", nil, false)
	var out bytes.Buffer
	if err := rec.Inspect(&out, 0, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pass 3: start 200 ms", "h2d_submit restore #3", "G1 (3 slots)", "G2 (4 of 8 blocks"} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("inspect output lacks %q:\n%s", want, out.String())
		}
	}
	if err := rec.Inspect(&out, 0, 99); err == nil {
		t.Error("pass 99 of a 4-pass run did not fail")
	}
}

// TestDiffHasNoFalseDivergence: in §A at 192 G2 blocks both offloading runs
// evict s3t1#26 from G1 in pass 321 (and compute it again); that is no
// divergence, and no pass before the first divergent one is listed.
func TestDiffHasNoFalseDivergence(t *testing.T) {
	a, _, _ := run(t, "connectors.yaml", connectorRows[4].sets, false)
	b, _, _ := run(t, "connectors.yaml", connectorRows[5].sets, false)
	d, err := record.Diff(a, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Passes) == 0 || d.Passes[0].Pass < d.FirstDivergent {
		t.Fatalf("first listed pass %+v before the first divergent pass %d", d.Passes[:min(1, len(d.Passes))], d.FirstDivergent)
	}
	if d.FirstDivergent != 658 || len(d.OnlyB) != 166 || d.Tokens(len(d.OnlyB)) != 2656 {
		t.Errorf("first divergence %d, %d restores only v0_32 made (%d tokens); want 658, 166 (2,656)",
			d.FirstDivergent, len(d.OnlyB), d.Tokens(len(d.OnlyB)))
	}
	var out bytes.Buffer
	d.Write(&out, "a", "b", 1)
	if want := "restores only b made: 166 blocks (2,656 tokens)"; !bytes.Contains(out.Bytes(), []byte(want)) {
		t.Errorf("diff output lacks %q:\n%s", want, out.String())
	}
}

// TestDiffRefusesUnrelatedRuns: a §A run and case B's run share neither
// trace nor block size; Diff refuses them and says why.
func TestDiffRefusesUnrelatedRuns(t *testing.T) {
	a, _, _ := run(t, "connectors.yaml", connectorRows[4].sets, false)
	b, _, _ := run(t, "g2-restore.yaml", nil, false)
	_, err := record.Diff(a, b, 0)
	if err == nil {
		t.Fatal("Diff compared a §A run with case B's")
	}
	want := "do not share a trace and config apart from the connector and tier settings: block size 16 tokens against 4"
	if !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("error %q; want it to contain %q", err, want)
	}
	if err := record.Comparable(a, a, 0); err != nil {
		t.Errorf("a run is not comparable with itself: %v", err)
	}
}

// BenchmarkDiff is kvsim diff of §A's 192-block v0_24 and v0_32 runs.
func BenchmarkDiff(b *testing.B) {
	ra, _, _ := run(b, "connectors.yaml", connectorRows[4].sets, false)
	rb, _, _ := run(b, "connectors.yaml", connectorRows[5].sets, false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := record.Diff(ra, rb, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDiffOfDecodedRecords: kvsim diff reads passes.jsonl; its result is
// the live records' for every pair of §A's 192-block runs (SimpleCPU issues
// its requests in another order and is still comparable), whole and
// windowed from pass 400 (where the runs already differ at the window's
// first pass) and from pass 40 (where they do not). Live records match
// blocks by origin and skip the passes that change both runs alike;
// decoded ones match by name and look at every pass.
func TestDiffOfDecodedRecords(t *testing.T) {
	for _, spec := range []string{"", "400:", "40:900"} {
		t.Run("window "+spec, func(t *testing.T) { diffLiveAndDecoded(t, spec) })
	}
}

func diffLiveAndDecoded(t *testing.T, spec string) {
	var live, decoded []*record.Record
	for _, row := range connectorRows[4:7] {
		var r *record.Record
		win := record.Window{}
		if spec == "" {
			r, _, _ = run(t, "connectors.yaml", row.sets, false)
		} else {
			var err error
			if win, err = record.ParseWindow(spec); err != nil {
				t.Fatal(err)
			}
			r = runWindow(t, "connectors.yaml", row.sets, win)
		}
		var buf bytes.Buffer
		if err := r.WriteWindow(&buf, win); err != nil {
			t.Fatal(err)
		}
		d, err := record.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		live, decoded = append(live, r), append(decoded, d)
	}
	for i := range live {
		for j := range live {
			a, err := record.Diff(live[i], live[j], 0)
			if err != nil {
				t.Fatal(err)
			}
			b, err := record.Diff(decoded[i], decoded[j], 0)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("runs %d and %d: live and decoded diffs differ (first divergence %d, %d)", i, j, a.FirstDivergent, b.FirstDivergent)
			}
			if i != j && a.FirstDivergent == 0 {
				t.Errorf("runs %d and %d never diverge", i, j)
			}
		}
	}
}

// TestCopiesAreTheCopyEvents: Copies says of every pass what Events says
// of its copy submissions and completions (kind, transfer, block count,
// times), for §A's 192-block runs live and read back from passes.jsonl.
func TestCopiesAreTheCopyEvents(t *testing.T) {
	for _, row := range connectorRows[4:7] {
		live, _, _ := run(t, "connectors.yaml", row.sets, false)
		var buf bytes.Buffer
		if err := live.WriteJSONL(&buf); err != nil {
			t.Fatal(err)
		}
		decoded, err := record.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range []*record.Record{live, decoded} {
			var got []record.Copy
			for p := 1; p <= r.NumLines(0); p++ {
				evs, err := r.Events(0, p)
				if err != nil {
					t.Fatal(err)
				}
				var want []record.Copy
				for _, e := range evs {
					switch e.Kind {
					case "d2h_submit", "h2d_submit", "d2h_complete", "h2d_complete":
						want = append(want, record.Copy{Kind: e.Kind, Transfer: e.Transfer, Blocks: len(e.Blocks), AtMs: nanOr(e.AtMs), DeadlineMs: nanOr(e.DeadlineMs)})
					}
				}
				got = r.Copies(0, p, got[:0])
				if len(got) != len(want) {
					t.Fatalf("%s pass %d: %d copies, want %d", row.name, p, len(got), len(want))
				}
				for i := range got {
					if g, w := got[i], want[i]; g.Kind != w.Kind || g.Transfer != w.Transfer || g.Blocks != w.Blocks || !sameFloat(g.AtMs, w.AtMs) || !sameFloat(g.DeadlineMs, w.DeadlineMs) {
						t.Fatalf("%s pass %d: copy %+v, want %+v", row.name, p, g, w)
					}
				}
				n += len(got)
			}
		}
		if n == 0 {
			t.Errorf("%s: no copies", row.name)
		}
	}
}

func nanOr(t *vtime.Time) float64 {
	if t == nil {
		return math.NaN()
	}
	return float64(*t)
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
