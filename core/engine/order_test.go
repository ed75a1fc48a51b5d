package engine_test

// The engine's same-instant event order
// (docs/model/engine.md ("Event order at one instant"),
// docs/model/transfers.md ("When copies are submitted") and the package
// comment of engine.go), pinned one effect at a time.

import (
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

// TestOrder_ArrivalAtPassEndWaitsForTheNextPass is the Decision of
// docs/model/engine.md ("Arrivals at a pass boundary"): R2 arrives at 2, the
// instant R1's prefill pass ends. The pass R1 starts at 2 (a decode, [2,3])
// does not see R2; R2 is admitted at the next pass start,
// 3. Dispatching arrivals before starting passes would admit it at 2.
func TestOrder_ArrivalAtPassEndWaitsForTheNextPass(t *testing.T) {
	w := world{G1: 16}
	rows := []row{
		{ID: "R1", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 3},
		{ID: "R2", At: 2, Hash: []int{4, 5, 6}, In: 9, Out: 1},
	}
	o := runWorld(t, w, rows, nil)
	o.AllCompleted()
	if got := o.Rec("R2").FirstAdmitMs; got != 3 {
		t.Errorf("R2 admitted at %v; want 3", got)
	}
	if got := o.Rec("R2").ArrivalMs; got != 2 {
		t.Errorf("R2 arrival %v; want 2", got)
	}
}

// TestOrder_NewTurnAtPassEndWaitsForTheNextPass: the same Decision for a
// session's next turn that becomes ready (delay 0) at the end of the pass
// that completed the previous turn, while another request keeps the rank
// busy.
func TestOrder_NewTurnAtPassEndWaitsForTheNextPass(t *testing.T) {
	w := world{G1: 16}
	rows := []row{
		{ID: "L", At: 0, Hash: []int{9}, In: 3, Out: 10},
		{ID: "t0", Session: "s", At: 0, Hash: []int{1, 2}, In: 8, Out: 1},
		{ID: "t1", Session: "s", Later: true, Hash: []int{3}, In: 4, Out: 1},
	}
	o := runWorld(t, w, rows, nil)
	o.AllCompleted()
	t0, t1 := o.Rec("t0"), o.Rec("t1")
	if t0.TerminalMs != 2 || t1.ArrivalMs != 2 {
		t.Fatalf("t0 ends at %v, t1 ready at %v; want 2, 2", t0.TerminalMs, t1.ArrivalMs)
	}
	if t1.FirstAdmitMs != 3 {
		t.Errorf("t1 admitted at %v; want 3 (L's decode pass [2,3] does not see it)", t1.FirstAdmitMs)
	}
}

// TestOrder_IdleRankStartsAtOnce: a request arriving at an idle rank is
// admitted at its arrival instant, including at the instant another
// request's last pass ended.
func TestOrder_IdleRankStartsAtOnce(t *testing.T) {
	w := world{G1: 16}
	rows := []row{
		{ID: "R1", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "R2", At: 2, Hash: []int{4, 5, 6}, In: 9, Out: 1},
		{ID: "R3", At: 50, Hash: []int{7}, In: 4, Out: 1},
	}
	o := runWorld(t, w, rows, nil)
	if got := o.Rec("R2").FirstAdmitMs; got != 2 {
		t.Errorf("R2 admitted at %v; want 2", got)
	}
	if got := o.Rec("R3").FirstAdmitMs; got != 50 {
		t.Errorf("R3 admitted at %v; want 50", got)
	}
}

// TestOrder_SameInstantArrivalsInSessionOrder: ready turns at one instant
// are dispatched in session (file) order, whatever the request ids: "zb"
// (first in the file) is placed first (worker 0) and, with one sequence
// per rank, admitted first.
func TestOrder_SameInstantArrivalsInSessionOrder(t *testing.T) {
	rows := []row{
		{ID: "zb", At: 5, Hash: []int{1}, In: 4, Out: 1},
		{ID: "ya", At: 5, Hash: []int{2}, In: 4, Out: 1},
		{ID: "xc", At: 5, Hash: []int{3}, In: 4, Out: 1},
	}
	t.Run("placement", func(t *testing.T) {
		o := runWorld(t, world{G1: 16, Replicas: 3}, rows, nil)
		for i, id := range []string{"zb", "ya", "xc"} {
			if got := o.Rec(id).PrefillWorker; got != i {
				t.Errorf("%s on worker %d; want %d", id, got, i)
			}
		}
	})
	t.Run("admission", func(t *testing.T) {
		o := runWorld(t, world{G1: 16, MaxSeq: 1}, rows, nil)
		for i, id := range []string{"zb", "ya", "xc"} {
			// Arrivals are normalised to start at 0; each prefill takes 2 ms.
			if got, want := o.Rec(id).FirstAdmitMs, 2*vtime.Time(i); got != want {
				t.Errorf("%s admitted at %v; want %v", id, got, want)
			}
		}
	})
}

// TestOrder_H2DSubmittedAtPassEnd is the Decision of
// docs/model/transfers.md ("When copies are submitted").
func TestOrder_H2DSubmittedAtPassEnd(t *testing.T) {
	// docs/model/cases.md ("Case B: restore from G2"): the restore's
	// lookup runs in a zero-length pass at 200, whose end boundary (also 200)
	// submits the H2D: load [200,202], admission at 202, TTFT 4.
	t.Run("worked check", func(t *testing.T) {
		w := world{G1: 3, G2: 8, Budget: 16, MaxSeq: 1, D2H: 1, H2D: 1}
		rows := []row{
			{ID: "seed", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
			{ID: "pressure", At: 100, Hash: []int{11, 12, 13}, In: 9, Out: 1},
			{ID: "restore", At: 200, Hash: []int{1, 2, 3}, In: 9, Out: 1},
			{ID: "other", At: 300, Hash: []int{21, 22, 23}, In: 9, Out: 1},
		}
		o := runWorld(t, w, rows, nil)
		o.AllCompleted()
		if st := o.Transfers("h2d", "seed"); len(st) != 0 {
			t.Errorf("seed loaded %+v", st)
		}
		if d := o.Transfers("d2h", "seed"); len(d) != 1 || d[0].Start != 2 || d[0].Deadline != 4 {
			t.Errorf("seed's store %+v; want D2H [2,4]", d)
		}
		ld := o.Transfers("h2d", "restore")
		if len(ld) != 1 || ld[0].At != 200 || ld[0].Start != 200 || ld[0].Deadline != 202 {
			t.Fatalf("restore's loads %+v; want one H2D submitted at 200, [200,202]", ld)
		}
		r := o.Rec("restore")
		if r.FirstAdmitMs != 202 || r.FirstTokenMs-r.ArrivalMs != 4 || r.FirstHost != 8 || r.FirstG1 != 0 {
			t.Errorf("restore admitted %v, ttft %v, host %d, g1 %d; want 202, 4, 8, 0", r.FirstAdmitMs, r.FirstTokenMs-r.ArrivalMs, r.FirstHost, r.FirstG1)
		}
		if got := o.E.CommittedPrefill; got != 28 {
			t.Errorf("committed prefill %d; want 28", got)
		}
	})
	// In a pass with work (L's decode, [204,205]) the H2D queued by R's
	// lookup is submitted at the pass end, 205, not at its start: load
	// [205,207], admission at 207.
	t.Run("busy pass", func(t *testing.T) {
		w := world{G1: 6, G2: 16, D2H: 1, H2D: 1}
		rows := []row{
			{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
			{ID: "P", At: 100, Hash: []int{11, 12, 13, 14, 15, 16}, In: 21, Out: 1}, // evicts A from G1
			{ID: "L", At: 200, Hash: []int{31}, In: 3, Out: 10},                     // decodes 1 ms passes
			{ID: "R", At: 203, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		}
		o := runWorld(t, w, rows, nil)
		o.AllCompleted()
		lk := o.Events("lookup", "R")
		if len(lk) == 0 || lk[0].At != 204 || lk[0].Kind != "hit" {
			t.Fatalf("R's lookups %+v; want a hit at 204", lk)
		}
		ld := o.Transfers("h2d", "R")
		if len(ld) != 1 || ld[0].At != 205 || ld[0].Start != 205 || ld[0].Deadline != 207 {
			t.Fatalf("R's loads %+v; want one H2D submitted at 205, [205,207]", ld)
		}
		if r := o.Rec("R"); r.FirstAdmitMs != 207 || r.FirstHost != 8 {
			t.Errorf("R admitted at %v with %d host tokens; want 207, 8", r.FirstAdmitMs, r.FirstHost)
		}
	})
}

// TestOrder_NoopPassIsNotRepeated: B cannot be admitted at 5 because A's
// copies are held in G1 until A's store lands at 22 (simple_cpu_v0_32). The
// pass at 5 changes nothing and is not repeated at 5; the rank next starts
// a pass when the store completes. Three passes in all: A's, the no-op at
// 5, and B's at 22.
func TestOrder_NoopPassIsNotRepeated(t *testing.T) {
	w := world{Connector: "simple_cpu_v0_32", G1: 3, G2: 8, D2H: 0.1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "B", At: 5, Hash: []int{4, 5, 6}, In: 9, Out: 1},
	}
	o := runWorld(t, w, rows, nil)
	o.AllCompleted()
	if got := o.E.Passes; got != 3 {
		t.Errorf("%d passes; want 3", got)
	}
	if got := o.Rec("B").FirstAdmitMs; got != 22 {
		t.Errorf("B admitted at %v; want 22", got)
	}
}

// TestOrder_SameInstantCompletionsStoresBeforeLoads: in one pass R's lookup
// queues a 2-block load (created first) and W's prefill prepares a 2-block
// store (created later). Both are submitted at 202 and end at 204; the
// completions apply the store first, then the load.
func TestOrder_SameInstantCompletionsStoresBeforeLoads(t *testing.T) {
	w := world{G1: 6, G2: 16, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "A", At: 0, Hash: []int{1, 2, 3}, In: 9, Out: 1},
		{ID: "P", At: 100, Hash: []int{11, 12, 13, 14, 15, 16}, In: 21, Out: 1},
		{ID: "W", At: 200, Hash: []int{41, 42, 43}, In: 9, Out: 1},
		{ID: "R", At: 200, Hash: []int{1, 2, 3}, In: 9, Out: 1},
	}
	o := runWorld(t, w, rows, nil)
	o.AllCompleted()
	st, ld := o.Transfers("d2h", "W"), o.Transfers("h2d", "R")
	if len(st) != 1 || len(ld) != 1 || st[0].Deadline != 204 || ld[0].Deadline != 204 {
		t.Fatalf("W's stores %+v, R's loads %+v; want one each ending at 204", st, ld)
	}
	if ld[0].ID >= st[0].ID {
		t.Fatalf("load #%d not created before store #%d (scenario broken)", ld[0].ID, st[0].ID)
	}
	var order []string
	for _, x := range o.Events("complete", "") {
		if x.At == 204 {
			order = append(order, x.Kind)
		}
	}
	if len(order) != 2 || order[0] != "d2h" || order[1] != "h2d" {
		t.Errorf("completions at 204: %v; want [d2h h2d]", order)
	}
}
