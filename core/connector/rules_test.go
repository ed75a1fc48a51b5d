package connector_test

// One focused test per rule flag of docs/model/g2.md ("The rules table"). Each
// builds the smallest scenario in which that flag decides the outcome, checks
// the profile's documented behaviour, and runs the same scenario again with
// only that flag switched to another profile's value, checking that the
// outcome moves. lookupKeys has the same value in every profile and is not
// a switch.
//
// Unless a test says otherwise: block size 4 (one hash id = one block),
// 1 MB blocks, prefill 2 ms, decode 1 ms, 1 GB/s links (1 ms per block).

import (
	"slices"
	"strings"
	"testing"

	"github.com/kvsim/kvsim/core/connector"
	"github.com/kvsim/kvsim/core/g1"
	"github.com/kvsim/kvsim/core/g2"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/vtime"
)

const (
	v024   = connector.OffloadingV024
	v032   = connector.OffloadingV032
	simple = connector.SimpleCPUV032
)

// TestRule_eviction: under offloading_v0_32 (Ranked) a load completion does
// not re-rank the loaded keys, so a store made right after the restore
// evicts the restored block a1 that the finish re-ranks had left least
// recent. CohortLRU and FreeQueue put the unpinned keys at the most-recent
// end instead, and the victim becomes B's block b0.
func TestRule_eviction(t *testing.T) {
	w := world{Connector: v032, G1: 3, G2: 4, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},    // stores a0 a1
		{ID: "B", At: 100, Hash: []int{4, 5, 6}, In: 9, Out: 1},  // stores b0 b1, evicts A from G1
		{ID: "R", At: 200, Hash: []int{1, 2, 7}, In: 12, Out: 1}, // restores a0 a1, stores x2 (G2 full)
	}
	for _, c := range []struct {
		name   string
		policy g2.Policy
		// want: is a1 / b0 still in G2 at the end
		a1, b0 bool
	}{
		{"documented Ranked", g2.Ranked, false, true},
		{"switched to CohortLRU", g2.CohortLRU, true, false},
		{"switched to FreeQueue", g2.FreeQueue, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.Eviction = c.policy }))
			o.AllCompleted()
			if got := o.Rec("R").FirstHost; got != 8 {
				t.Fatalf("R restored %d tokens; want 8 (scenario broken)", got)
			}
			if got := o.G2State("R", 2); got != g2.Resident {
				t.Fatalf("x2 state %v; want resident", got)
			}
			a1 := o.G2State("A", 1) != g2.Absent
			b0 := o.G2State("B", 0) != g2.Absent
			if a1 != c.a1 || b0 != c.b0 {
				t.Errorf("a1 kept %v, b0 kept %v; want %v, %v", a1, b0, c.a1, c.b0)
			}
		})
	}
}

// TestRule_touchOnLookup: under offloading_v0_24 the lookup of A2 (a full
// G1 hit, so no load) still touches A's keys, so the later store of C
// evicts B's blocks; without the touch it evicts A's.
func TestRule_touchOnLookup(t *testing.T) {
	w := world{Connector: v024, G1: 16, G2: 4, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "B", At: 100, Hash: []int{4, 5, 6}, In: 9, Out: 1},
		{ID: "A2", At: 200, Hash: []int{1, 2, 3}, In: 9, Out: 1}, // G1 hit of both blocks
		{ID: "C", At: 300, Hash: []int{7, 8, 9}, In: 9, Out: 1},  // needs two victims
	}
	for _, c := range []struct {
		name         string
		touch        bool
		keepA, keepB []bool
	}{
		{"documented yes", true, []bool{true, true}, []bool{false, false}},
		{"switched to no", false, []bool{false, false}, []bool{true, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.TouchOnLookup = c.touch }))
			o.AllCompleted()
			if got := o.Rec("A2").FirstG1; got != 8 {
				t.Fatalf("A2 G1 reuse %d; want 8 (scenario broken)", got)
			}
			if got, want := o.InG2("A", 2), c.keepA; !slices.Equal(got, want) {
				t.Errorf("A's blocks in G2 %v; want %v", got, want)
			}
			if got, want := o.InG2("B", 2), c.keepB; !slices.Equal(got, want) {
				t.Errorf("B's blocks in G2 %v; want %v", got, want)
			}
			if got := o.InG2("C", 2); !slices.Equal(got, []bool{true, true}) {
				t.Errorf("C's blocks in G2 %v; want both", got)
			}
		})
	}
}

// TestRule_touchAfterStore: A's prompt is prefilled in three 4-token chunks
// with instantaneous stores, so each pass's prepared store finds the
// earlier blocks resident. Under offloading_v0_24 every prepared store
// touches the prompt keys reversed, leaving the order a1, a0, a2 and making
// a1 the victim of C's store; without the touch the order stays a0, a1, a2.
func TestRule_touchAfterStore(t *testing.T) {
	w := world{Connector: v024, G1: 16, G2: 3, Budget: 4, D2H: 0, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3, 4}, In: 13, Out: 1},
		{ID: "C", At: 100, Hash: []int{5, 6}, In: 5, Out: 1}, // one block, one victim
	}
	for _, c := range []struct {
		name  string
		touch bool
		keepA []bool
	}{
		{"documented yes", true, []bool{true, false, true}},
		{"switched to no", false, []bool{false, true, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.TouchAfterStore = c.touch }))
			o.AllCompleted()
			if n := len(o.Events("store", "A")); n != 3 {
				t.Fatalf("A prepared %d stores; want 3 (one per chunk)", n)
			}
			if got := o.InG2("A", 3); !slices.Equal(got, c.keepA) {
				t.Errorf("A's blocks in G2 %v; want %v", got, c.keepA)
			}
		})
	}
}

// TestRule_rerankOnFinish: under offloading_v0_32 A's finish re-ranks its
// prompt keys reversed (a1 least recent), so C's store evicts a1; without
// the re-rank the rank-at-store order evicts a0.
func TestRule_rerankOnFinish(t *testing.T) {
	w := world{Connector: v032, G1: 16, G2: 2, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "C", At: 100, Hash: []int{4, 5}, In: 5, Out: 1},
	}
	for _, c := range []struct {
		name   string
		rerank bool
		keepA  []bool
	}{
		{"documented yes", true, []bool{true, false}},
		{"switched to no", false, []bool{false, true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.RerankOnFinish = c.rerank }))
			o.AllCompleted()
			if got := o.InG2("A", 2); !slices.Equal(got, c.keepA) {
				t.Errorf("A's blocks in G2 %v; want %v", got, c.keepA)
			}
		})
	}
}

// TestRule_storeTiming: under simple_cpu_v0_32 a pass stores only what
// earlier passes computed, so A's prompt blocks (computed by the prefill
// pass [0,2]) are stored by the first decode pass, which starts at 2; with
// the same-pass rule the prefill pass itself stores them at 0.
func TestRule_storeTiming(t *testing.T) {
	w := world{Connector: simple, G1: 16, G2: 16, D2H: 1, H2D: 1}
	rows := []row{{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 3}}
	for _, c := range []struct {
		name     string
		timing   connector.StoreTiming
		prepared vtime.Time
		submit   vtime.Time
	}{
		{"documented previous passes", connector.PreviousPasses, 2, 3},
		{"switched to same pass", connector.SamePass, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.StoreTiming = c.timing }))
			o.AllCompleted()
			st := o.Events("store", "A")
			if len(st) == 0 {
				t.Fatal("A prepared no store")
			}
			want := []identity.ID{o.Key("A", 0), o.Key("A", 1)}
			if st[0].At != c.prepared || !slices.Equal(st[0].Keys, want) {
				t.Errorf("first store prepared at %v with %v; want at %v with %v", st[0].At, st[0].Keys, c.prepared, want)
			}
			if sub := o.Events("submit", "A"); len(sub) == 0 || sub[0].At != c.submit {
				t.Errorf("first store submitted %+v; want at %v", sub, c.submit)
			}
		})
	}
}

// TestRule_storeScope: simple_cpu_v0_32 stores every computed full block,
// output blocks included: a 5-token prompt with 8 output tokens has KV for
// 12 tokens, three full blocks, of which only block 0 is a prompt block.
func TestRule_storeScope(t *testing.T) {
	w := world{Connector: simple, G1: 16, G2: 16, D2H: 1, H2D: 1}
	rows := []row{{ID: "A", At: 0, Hash: []int{1, 2}, In: 5, Out: 8}}
	for _, c := range []struct {
		name  string
		scope connector.StoreScope
		want  []bool
	}{
		{"documented all computed", connector.AllComputedBlocks, []bool{true, true, true}},
		{"switched to prompt", connector.PromptBlocks, []bool{true, false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.StoreScope = c.scope }))
			o.AllCompleted()
			if got := o.InG2("A", 3); !slices.Equal(got, c.want) {
				t.Errorf("A's blocks 0-2 in G2 %v; want %v", got, c.want)
			}
		})
	}
}

// TestRule_storeAtFinish: under simple_cpu_v0_32 (previous-passes timing) a
// one-token request's only pass stores nothing; its finish stores the
// prompt blocks. Without the finish store they never reach G2.
func TestRule_storeAtFinish(t *testing.T) {
	w := world{Connector: simple, G1: 16, G2: 16, D2H: 1, H2D: 1}
	rows := []row{{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1}}
	for _, c := range []struct {
		name   string
		finish bool
		want   []bool
	}{
		{"documented yes", true, []bool{true, true}},
		{"switched to no", false, []bool{false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.StoreAtFinish = c.finish }))
			o.AllCompleted()
			if got := o.InG2("A", 2); !slices.Equal(got, c.want) {
				t.Errorf("A's blocks in G2 %v; want %v", got, c.want)
			}
		})
	}
}

// TestRule_storeAdmission: a three-block prompt and a two-block G2. The
// whole-range protected mode finds the range structurally unfittable and
// stores nothing (offloading_v0_24); the room-limited mode stores the first
// two blocks (simple_cpu_v0_32). Each profile is switched to the other mode.
func TestRule_storeAdmission(t *testing.T) {
	w := world{G1: 16, G2: 2, D2H: 1, H2D: 1}
	rows := []row{{ID: "A", At: 0, Hash: []int{1, 2, 3, 4}, In: 13, Out: 2}}
	for _, c := range []struct {
		name        string
		profile     string
		roomLimited bool
		want        []bool
	}{
		{"offloading_v0_24 documented protected", v024, false, []bool{false, false, false}},
		{"offloading_v0_24 switched to room-limited", v024, true, []bool{true, true, false}},
		{"simple_cpu documented room-limited", simple, true, []bool{true, true, false}},
		{"simple_cpu switched to protected", simple, false, []bool{false, false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := w
			w.Connector = c.profile
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.RoomLimited = c.roomLimited }))
			o.AllCompleted()
			if got := o.InG2("A", 3); !slices.Equal(got, c.want) {
				t.Errorf("A's blocks in G2 %v; want %v", got, c.want)
			}
		})
	}
}

// TestRule_cursorAtAdmission: R's prompt p0 p1 x2 is admitted after a load
// whose G1 base is p0 (still in G1) and whose hit is p1 (G2 had lost p0).
// Under offloading_v0_24 the cursor starts at the loaded prefix (block 2),
// so p0 is never offered to G2 again; SimpleCPU's rescan restarts at block
// 0 and stores p0.
func TestRule_cursorAtAdmission(t *testing.T) {
	w := world{Connector: v024, G1: 4, G2: 3, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},       // p0 p1 → G2
		{ID: "B", At: 100, Hash: []int{4, 5, 6}, In: 9, Out: 1},     // evicts p1 from G1, p0 from G2
		{ID: "R", At: 200, Hash: []int{1, 2, 7, 8}, In: 13, Out: 1}, // G1 p0, G2 p1, new x2
	}
	for _, c := range []struct {
		name   string
		rescan bool
		keepP0 bool
	}{
		{"documented loaded prefix", false, false},
		{"switched to rescan", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.CursorRescan = c.rescan }))
			o.AllCompleted()
			if r := o.Rec("R"); r.FirstG1 != 4 || r.FirstHost != 4 {
				t.Fatalf("R reused g1 %d host %d; want 4 and 4 (scenario broken)", r.FirstG1, r.FirstHost)
			}
			if got := o.G2State("A", 0) != g2.Absent; got != c.keepP0 {
				t.Errorf("p0 in G2 %v; want %v", got, c.keepP0)
			}
			if got := o.G2State("R", 2); got == g2.Absent {
				t.Errorf("x2 not stored")
			}
		})
	}
}

// TestRule_pendingHit: A's store (0.1 GB/s, [2,22]) is still in flight when
// B evicts A's G1 copies at 15 (fence reuse) and R, with A's prompt, looks
// up in the same pass. offloading_v0_24 counts the pending blocks and
// defers: R sleeps until the store lands (applied at B's pass end, 24),
// hits, and restores 8 tokens; its H2D reserves G1 capacity that Z's store
// still reads, so it starts at that store's deadline (52) and R is
// admitted at 54. With SimpleCPU's rule the scan stops at the pending
// block, R misses and is admitted at 15, recomputing everything.
func TestRule_pendingHit(t *testing.T) {
	w := world{Connector: v024, G1: 7, G2: 16, D2H: 0.1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "Z", At: 10, Hash: []int{11, 12, 13, 14}, In: 13, Out: 1}, // idle copies behind A's
		{ID: "B", At: 15, Hash: []int{21, 22, 23, 24}, In: 13, Out: 1}, // evicts a1, a0 from G1
		{ID: "R", At: 15, Hash: []int{1, 2, 3}, In: 9, Out: 1},
	}
	for _, c := range []struct {
		name        string
		defers      bool
		admit       vtime.Time
		host, g1    int
		firstLookup string
	}{
		{"documented defer", true, 54, 8, 0, "defer"},
		{"switched to stop", false, 15, 0, 0, "miss"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.PendingHitDefers = c.defers }))
			o.AllCompleted()
			if lk := o.Events("lookup", "R"); len(lk) == 0 || lk[0].Kind != c.firstLookup {
				t.Errorf("R's first lookup %+v; want %s", lk, c.firstLookup)
			}
			r := o.Rec("R")
			if r.FirstAdmitMs != c.admit || r.FirstHost != c.host || r.FirstG1 != c.g1 {
				t.Errorf("R admitted at %v with g1 %d host %d; want %v, %d, %d", r.FirstAdmitMs, r.FirstG1, r.FirstHost, c.admit, c.g1, c.host)
			}
		})
	}
}

// TestRule_deferOnOwnStore drives the hooks directly: a request prepared a
// store of its two prompt blocks (D2H [2,4]), was preempted at 3 and looks
// up again at 3 while its copies are still cached in G1. The offloading
// profiles defer while the request's own latest store is in flight;
// without the rule the full G1 hit is a plain miss (admit at once). Through
// the engine with private lanes this cannot happen: preemptWait fences the
// preempting pass until that same store's deadline, so the store has landed
// by the re-lookup.
func TestRule_deferOnOwnStore(t *testing.T) {
	for _, c := range []struct {
		name  string
		rule  bool
		at3   connector.LookupResult
		after connector.LookupResult
	}{
		{"documented yes", true, connector.Defer, connector.Miss},
		{"switched to no", false, connector.Miss, connector.Miss},
	} {
		t.Run(c.name, func(t *testing.T) {
			rules := profile(t, v024)
			if edit := switched(c.name, func(r *connector.Rules) { r.DeferOnOwnStore = c.rule }); edit != nil {
				edit(&rules)
			}
			g := newRig(rules, 8, 8)
			r := g.request(0, 9, 1)
			g.compute(r, 9)
			g.a.ObserveCompletedBlocks(r, 0, 9, 0)
			g.a.Boundary(2) // submits the store: D2H [2,4]
			g.a.Preempt(r, 3)
			g.release(r)
			hits, _ := g.pool.Lookup(r.Seq.IDs[:2])
			if hits != 2 {
				t.Fatalf("G1 hits %d; want 2", hits)
			}
			if got, _ := g.a.Lookup(r, hits, 3); got != c.at3 {
				t.Errorf("lookup at 3 (own store in flight): %v; want %v", got, c.at3)
			}
			g.a.Tick(4)
			if got, _ := g.a.Lookup(r, hits, 4); got != c.after {
				t.Errorf("lookup at 4 (store landed): %v; want %v", got, c.after)
			}
		})
	}
}

// TestRule_deferOnLoading: R1 and R2 share A's prompt, which only G2 holds.
// R1's hit starts a load; under offloading_v0_24 R2's lookup in the same
// pass sees blocks being loaded, defers, and after the load finds them in
// G1 (8 G1 tokens, 0 from G2). With concurrent loads allowed (SimpleCPU's
// value) R2 loads its own copy and restores 8 tokens.
func TestRule_deferOnLoading(t *testing.T) {
	w := world{Connector: v024, G1: 6, G2: 16, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "P", At: 100, Hash: []int{11, 12, 13, 14, 15, 16}, In: 21, Out: 1}, // evicts A from G1
		{ID: "R1", At: 200, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "R2", At: 200, Hash: []int{1, 2, 3}, In: 9, Out: 1},
	}
	for _, c := range []struct {
		name      string
		rule      bool
		r2g1, r2h int
		r2Lookup  string
		loads     int
	}{
		{"documented yes", true, 8, 0, "defer", 1},
		{"switched to no", false, 0, 8, "hit", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.DeferOnLoading = c.rule }))
			o.AllCompleted()
			if r := o.Rec("R1"); r.FirstHost != 8 {
				t.Fatalf("R1 restored %d; want 8 (scenario broken)", r.FirstHost)
			}
			if lk := o.Events("lookup", "R2"); len(lk) == 0 || lk[0].Kind != c.r2Lookup {
				t.Errorf("R2's first lookup %+v; want %s", lk, c.r2Lookup)
			}
			r := o.Rec("R2")
			if r.FirstG1 != c.r2g1 || r.FirstHost != c.r2h {
				t.Errorf("R2 g1 %d host %d; want %d, %d", r.FirstG1, r.FirstHost, c.r2g1, c.r2h)
			}
			loads := 0
			for _, x := range o.Events("submit", "") {
				if x.Kind == "h2d" {
					loads++
				}
			}
			if loads != c.loads {
				t.Errorf("%d H2D transfers; want %d", loads, c.loads)
			}
		})
	}
}

// TestRule_lookupPin: under simple_cpu_v0_32, R's lookup hits A's blocks in
// a 3-block G2 but R cannot be admitted while B fills G1. The lookup pins
// keep B's stores from evicting them (B stores fewer blocks instead), so R
// restores 8 tokens once B is gone. Without the pins B's store evicts a0
// (the FreeQueue head) and R recomputes everything.
func TestRule_lookupPin(t *testing.T) {
	w := world{Connector: simple, G1: 4, G2: 3, MaxSeq: 2, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "B", At: 10, Hash: []int{4, 5, 6}, In: 9, Out: 4},
		{ID: "R", At: 10, Hash: []int{1, 2, 3}, In: 9, Out: 1},
	}
	for _, c := range []struct {
		name string
		pin  bool
		host int
	}{
		{"documented yes", true, 8},
		{"switched to no", false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.LookupPin = c.pin }))
			o.AllCompleted()
			if lk := o.Events("lookup", "R"); len(lk) == 0 || lk[0].Kind != "hit" {
				t.Fatalf("R's first lookup %+v; want a hit (scenario broken)", lk)
			}
			if r := o.Rec("R"); r.FirstHost != c.host {
				t.Errorf("R restored %d tokens; want %d", r.FirstHost, c.host)
			}
		})
	}
}

// TestRule_lastBlockRule: R re-sends A's block-aligned 8-token prompt after
// G1 lost it. SimpleCPU's G2 hit ends at floor((8−1)/4) = 1 block, so the
// H2D moves one block ([200,201]); without the rule both blocks are loaded
// ([200,202]) and the last one is recomputed anyway (still 4 G2 tokens).
func TestRule_lastBlockRule(t *testing.T) {
	w := world{Connector: simple, G1: 3, G2: 8, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2}, In: 8, Out: 1},
		{ID: "P", At: 100, Hash: []int{11, 12, 13}, In: 9, Out: 1},
		{ID: "R", At: 200, Hash: []int{1, 2}, In: 8, Out: 1},
	}
	for _, c := range []struct {
		name   string
		rule   bool
		loaded int
		admit  vtime.Time
	}{
		{"documented yes", true, 1, 201},
		{"switched to no", false, 2, 202},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.LastBlockRule = c.rule }))
			o.AllCompleted()
			var loads []event
			for _, x := range o.Events("submit", "R") {
				if x.Kind == "h2d" {
					loads = append(loads, x)
				}
			}
			if len(loads) != 1 || len(loads[0].Keys) != c.loaded {
				t.Fatalf("R's loads %+v; want one of %d blocks", loads, c.loaded)
			}
			r := o.Rec("R")
			if r.FirstAdmitMs != c.admit || r.FirstHost != 4 || r.FirstG1 != 0 {
				t.Errorf("R admitted at %v with g1 %d host %d; want %v, 0, 4", r.FirstAdmitMs, r.FirstG1, r.FirstHost, c.admit)
			}
			if got := r.FirstTokenMs; got != c.admit+2 {
				t.Errorf("R's first token at %v; want %v", got, c.admit+2)
			}
		})
	}
}

// TestRule_g1Sources: A finishes at 2 while its store runs at 0.1 GB/s
// ([2,22]). With fence reuse (offloading) B takes A's G1 capacity at 5 and
// only its compute waits for the store; with SimpleCPU's hold A's copies
// occupy G1 until 22, so B is admitted only then. B's first token is at 24
// either way.
func TestRule_g1Sources(t *testing.T) {
	w := world{G1: 3, G2: 8, D2H: 0.1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "B", At: 5, Hash: []int{4, 5, 6}, In: 9, Out: 1},
	}
	for _, c := range []struct {
		name    string
		profile string
		rule    connector.SourceProtection
		admit   vtime.Time
	}{
		{"offloading_v0_24 documented fence", v024, connector.FenceReuse, 5},
		{"offloading_v0_24 switched to hold", v024, connector.HoldUntilCopied, 22},
		{"simple_cpu documented hold", simple, connector.HoldUntilCopied, 22},
		{"simple_cpu switched to fence", simple, connector.FenceReuse, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := w
			w.Connector = c.profile
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.G1Sources = c.rule }))
			o.AllCompleted()
			b := o.Rec("B")
			if b.FirstAdmitMs != c.admit || b.FirstTokenMs != 24 {
				t.Errorf("B admitted at %v, first token %v; want %v, 24", b.FirstAdmitMs, b.FirstTokenMs, c.admit)
			}
		})
	}
}

// TestRule_preemptWait: R1 (two prompt blocks, store at 0.01 GB/s: [2,202])
// and R2 (no full prompt block, so no store) decode side by side in a
// 5-block G1 until R1 needs a fourth block at 6 and R2 is preempted. The
// offloading rule waits for the victim's own latest store (none): the pass
// ends at 7. SimpleCPU's rule waits for every transfer in flight on the
// rank, R1's store included: the pass computes from 202 and ends at 203.
func TestRule_preemptWait(t *testing.T) {
	w := world{Connector: v024, G1: 5, G2: 16, MaxSeq: 2, D2H: 0.01, H2D: 1}
	rows := []row{
		{ID: "R1", At: 0, Hash: []int{1, 2}, In: 8, Out: 6},
		{ID: "R2", At: 0, Hash: []int{3}, In: 3, Out: 6},
	}
	for _, c := range []struct {
		name   string
		rule   connector.PreemptWait
		fenced bool
		r1End  vtime.Time // R1's 6th and last token comes from the preempting pass
	}{
		{"documented own latest store", connector.OwnLatestStore, false, 7},
		{"switched to every transfer", connector.EveryTransfer, true, 203},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := runWorld(t, w, rows, switched(c.name, func(r *connector.Rules) { r.PreemptWait = c.rule }))
			o.AllCompleted()
			pre := o.Events("preempt", "")
			if len(pre) == 0 || pre[0].Req != "R2" || pre[0].At != 6 {
				t.Fatalf("preemptions %+v; want R2 at 6 first (scenario broken)", pre)
			}
			fenced := false
			for _, f := range o.Events("fence", "") {
				if f.At == 202 {
					fenced = true
				}
			}
			if fenced != c.fenced {
				t.Errorf("fence until 202: %v; want %v", fenced, c.fenced)
			}
			if got := o.Rec("R1").TerminalMs; got != c.r1End {
				t.Errorf("R1 finished at %v; want %v", got, c.r1End)
			}
		})
	}
}

// switched returns edit for a case that switches a rule, and nil for a
// "documented ..." case, which must run the profile exactly as the rules
// table defines it (so the test fails if the table's value changes).
func switched(name string, edit func(*connector.Rules)) func(*connector.Rules) {
	if strings.HasPrefix(name, "documented") || strings.Contains(name, " documented ") {
		return nil
	}
	return edit
}

// rig is a single rank's G1 pool and G2 adapter driven hook by hook.
type rig struct {
	pool *g1.Pool
	reg  *connector.Registry
	dom  *connector.Domain
	a    *connector.Adapter
	ids  *identity.Table
	next uint32
}

func newRig(rules connector.Rules, g1Blocks, g2Blocks int) *rig {
	g := &rig{pool: g1.New(g1Blocks), reg: &connector.Registry{}, ids: identity.NewTable(64)}
	g.dom = connector.NewDomain(g2Blocks, rules.Eviction, nil, g.reg)
	g.a = connector.NewAdapter(rules, 0, g.pool, g.dom, 4, 250000, connector.Link{D2HGBps: 1, H2DGBps: 1})
	return g
}

// request makes a request with a fresh prompt of n tokens.
func (g *rig) request(index int32, n, out int) *request.Request {
	r := &request.Request{Index: index, Known: n, PromptLen: n, MaxOutput: out, Seq: &identity.Sequence{}}
	for range n {
		r.Seq.AppendToken(g.ids, g.next, 4, index)
		g.next++
	}
	return r
}

// compute gives r the blocks for its first n tokens and makes the full ones
// cached, as a scheduler pass would.
func (g *rig) compute(r *request.Request, n int) {
	need := (n+3)/4 - len(r.Slots)
	var ok bool
	if r.Slots, ok = g.pool.Alloc(need, r.Slots); !ok {
		panic("rig: G1 full")
	}
	for j := r.Computed / 4; j < n/4; j++ {
		g.pool.Finalize(r.Slots[j], r.Seq.IDs[j])
	}
	r.Computed = n
}

// release frees r's blocks tail first and resets its computed tokens.
func (g *rig) release(r *request.Request) {
	for j := len(r.Slots) - 1; j >= 0; j-- {
		g.pool.Release(r.Slots[j])
	}
	r.Slots = r.Slots[:0]
	r.Computed = 0
}
