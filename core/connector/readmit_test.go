package connector_test

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/core/identity"
)

// TestReadmissionStoresInItsPass: under simple_cpu_v0_32 a request readmitted
// after a preemption stores, in its readmission pass, the blocks it reused
// from G1 that G2 lacks (docs/model/g2.md ("Store hook"): the admission hook
// restarts the cursor at 0 before the pass's stores are chosen).
//
// R1 and R2 (two prompt blocks each) decode in a 6-block G1 behind a 2-block
// G2. R2's blocks r2#0, r2#1 are stored at 5; R2 is preempted at 6 and its
// prompt blocks stay cached in G1; R1's output block (stored at 9) evicts
// r2#0 from G2. R2 is readmitted at 11 with both blocks from G1: that pass
// stores r2#0 alone, and G2 holds it again at 14. The bug this guards
// against asked whether anything was due before the cursor moved, skipped
// the pass, and stored r2#0 with the next output block at 13.
func TestReadmissionStoresInItsPass(t *testing.T) {
	w := world{Connector: simple, G1: 6, G2: 2, MaxSeq: 2, D2H: 1, H2D: 1}
	rows := []row{
		{ID: "R1", At: 0, Hash: []int{1, 2}, In: 8, Out: 8},
		{ID: "R2", At: 0, Hash: []int{3, 4}, In: 8, Out: 8},
	}
	o := runWorld(t, w, rows, nil)
	o.AllCompleted()
	admits := o.Events("admit", "R2")
	if len(admits) != 2 || len(o.Events("preempt", "R2")) != 1 {
		t.Fatalf("R2 admitted %d times, preempted %d; want 2, 1 (scenario broken)", len(admits), len(o.Events("preempt", "R2")))
	}
	readmit := admits[1].At
	r20 := o.Key("R2", 0)
	var inPass []identity.ID
	for _, s := range o.Events("store", "R2") {
		if s.At == readmit {
			inPass = append(inPass, s.Keys...)
		}
	}
	if !slices.Equal(inPass, []identity.ID{r20}) {
		t.Errorf("readmission pass at %v stored %v; want [%v] (R2's block 0)", readmit, inPass, r20)
	}
	if got := o.InG2("R2", 1); !got[0] {
		t.Errorf("R2's block 0 not in G2 at the end")
	}
}
