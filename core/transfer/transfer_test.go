package transfer_test

import (
	"math"
	"testing"

	"github.com/kvsim/kvsim/core/transfer"
	"github.com/kvsim/kvsim/core/vtime"
)

const mb = 1_000_000 // bytes; 1 GB/s moves one MB per ms

func near(a, b vtime.Time) bool { return math.Abs(float64(a-b)) < 1e-9 }

// TestLane_TwoStoresFinishOneDurationApart is
// docs/model/transfers.md ("Private lanes"): two 1 MB stores at 1 GB/s
// submitted together finish at +1 and +2 ms.
func TestLane_TwoStoresFinishOneDurationApart(t *testing.T) {
	l := transfer.Lane{BandwidthGBps: 1}
	s1, e1 := l.Submit(mb, 10)
	s2, e2 := l.Submit(mb, 10)
	if s1 != 10 || e1 != 11 || s2 != 11 || e2 != 12 {
		t.Errorf("copies [%v,%v] and [%v,%v]; want [10,11] and [11,12]", s1, e1, s2, e2)
	}
	if l.Tail != 12 {
		t.Errorf("lane tail %v; want 12", l.Tail)
	}
}

func TestLane_ZeroBandwidthIsInstant(t *testing.T) {
	l := transfer.Lane{BandwidthGBps: 0}
	for i := range 3 {
		s, e := l.Submit(100*mb, 5)
		if s != 5 || e != 5 {
			t.Errorf("copy %d [%v,%v]; want [5,5]", i, s, e)
		}
	}
	if d := transfer.Duration(100*mb, 0); d != 0 {
		t.Errorf("Duration at bandwidth 0 = %v; want 0", d)
	}
}

// TestLane_LatencyDelaysTheStart: ready = submit + latency; a copy starts
// at max(lane tail, ready).
func TestLane_LatencyDelaysTheStart(t *testing.T) {
	l := transfer.Lane{BandwidthGBps: 1}
	const latency = 0.5
	s, e := l.Submit(2*mb, 10+latency)
	if s != 10.5 || e != 12.5 {
		t.Errorf("first copy [%v,%v]; want [10.5,12.5]", s, e)
	}
	// Ready at 11.5, but the lane is busy until 12.5.
	s, e = l.Submit(mb, 11+latency)
	if s != 12.5 || e != 13.5 {
		t.Errorf("second copy [%v,%v]; want [12.5,13.5]", s, e)
	}
	// Ready after the tail: the lane idles until then.
	s, e = l.Submit(mb, 20+latency)
	if s != 20.5 || e != 21.5 {
		t.Errorf("third copy [%v,%v]; want [20.5,21.5]", s, e)
	}
}

func TestDuration_DecimalUnits(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		gbps  float64
		want  vtime.Time
	}{
		{mb, 1, 1},
		{64 * mb, 32, 2},
		{mb, 0.1, 10},
		{0, 5, 0},
	} {
		if got := transfer.Duration(c.bytes, c.gbps); !near(got, c.want) {
			t.Errorf("Duration(%d, %v) = %v; want %v", c.bytes, c.gbps, got, c.want)
		}
	}
}

// pool returns an 80 GB/s pool in both directions (the config default).
func pool() *transfer.FairShare {
	return &transfer.FairShare{PoolGBps: [2]float64{80, 80}}
}

// finishTimes advances f to the end and returns each job's completion time.
func finishTimes(t *testing.T, f *transfer.FairShare) map[int64]vtime.Time {
	t.Helper()
	out := map[int64]vtime.Time{}
	for i := 0; f.Busy(); i++ {
		if i > 100 {
			t.Fatal("pool does not drain")
		}
		for _, d := range f.Advance(f.Next()) {
			out[d.ID] = d.At
		}
	}
	return out
}

// TestFairShare_FourRanksGet20GBps is
// docs/model/cases.md ("Case D: smaller checks"): four ranks at 32 GB/s
// under an 80 GB/s pool each move at 20 GB/s, so 20 MB take 1 ms (0.625 ms at
// the full link rate).
func TestFairShare_FourRanksGet20GBps(t *testing.T) {
	f := pool()
	for r := range 4 {
		f.Submit(int64(r+1), r, transfer.D2H, 32, 20*mb, 0)
	}
	for id := int64(1); id <= 4; id++ {
		if got := f.Projected(id); !near(got, 1) {
			t.Errorf("job %d projected at %v; want 1", id, got)
		}
	}
	got := finishTimes(t, f)
	for id := int64(1); id <= 4; id++ {
		if !near(got[id], 1) {
			t.Errorf("job %d finished at %v; want 1 (20 GB/s)", id, got[id])
		}
	}
}

// TestFairShare_ThreeRanksGet26_67GBps: 80/3 GB/s each, so 80 MB take 3 ms.
func TestFairShare_ThreeRanksGet26_67GBps(t *testing.T) {
	f := pool()
	for r := range 3 {
		f.Submit(int64(r+1), r, transfer.D2H, 32, 80*mb, 0)
	}
	got := finishTimes(t, f)
	for id := int64(1); id <= 3; id++ {
		if !near(got[id], 3) {
			t.Errorf("job %d finished at %v; want 3 (26.67 GB/s)", id, got[id])
		}
	}
}

// TestFairShare_OneRankIsLinkLimited: alone, a job moves at its rank's
// link rate (32 GB/s), not the pool's 80.
func TestFairShare_OneRankIsLinkLimited(t *testing.T) {
	f := pool()
	f.Submit(1, 0, transfer.H2D, 32, 64*mb, 0)
	if got := finishTimes(t, f)[1]; !near(got, 2) {
		t.Errorf("finished at %v; want 2", got)
	}
}

// TestFairShare_JobsOfOneRankSplitItsLink: two jobs of one rank share its
// 32 GB/s (16 each) even though the pool has room.
func TestFairShare_JobsOfOneRankSplitItsLink(t *testing.T) {
	f := pool()
	f.Submit(1, 0, transfer.D2H, 32, 16*mb, 0)
	f.Submit(2, 0, transfer.D2H, 32, 16*mb, 0)
	got := finishTimes(t, f)
	if !near(got[1], 1) || !near(got[2], 1) {
		t.Errorf("finished at %v, %v; want 1, 1 (16 GB/s each)", got[1], got[2])
	}
}

// TestFairShare_LatencyToFirstByte: a job moves nothing before its ready
// time, and is not counted as moving (so it takes no share) until then.
func TestFairShare_LatencyToFirstByte(t *testing.T) {
	f := &transfer.FairShare{PoolGBps: [2]float64{40, 40}}
	f.Submit(1, 0, transfer.D2H, 32, 32*mb, 0)   // alone until 0.5: min(32, 40)
	f.Submit(2, 1, transfer.D2H, 32, 20*mb, 0.5) // first byte at 0.5
	if got := f.Next(); got != 0 {
		t.Fatalf("next event %v; want 0 (job 1's first byte)", got)
	}
	// 0 → 0.5: job 1 alone at 32 GB/s moves 16 MB. From 0.5 both share
	// 40 GB/s: 20 each. Job 1's last 16 MB take 0.8 ms (1.3); job 2 has
	// moved 16 MB by then, and its last 4 MB go at 32 GB/s: 1.425.
	got := finishTimes(t, f)
	if !near(got[1], 1.3) || !near(got[2], 1.425) {
		t.Errorf("finished at %v, %v; want 1.3, 1.425", got[1], got[2])
	}
}

// TestFairShare_CompletionRaisesTheOthersRates: two ranks under a 40 GB/s
// pool get 20 each; when the first finishes the second speeds up to its
// link's 32 GB/s.
func TestFairShare_CompletionRaisesTheOthersRates(t *testing.T) {
	f := &transfer.FairShare{PoolGBps: [2]float64{40, 40}}
	f.Submit(1, 0, transfer.D2H, 32, 20*mb, 0)
	f.Submit(2, 1, transfer.D2H, 32, 60*mb, 0)
	f.Advance(0)
	if got := f.Projected(2); !near(got, 2.25) {
		t.Errorf("job 2 projected at %v; want 2.25", got)
	}
	got := finishTimes(t, f)
	// Job 1: 20 MB at 20 GB/s = 1. Job 2: 20 MB by then, 40 MB at 32 = 1.25.
	if !near(got[1], 1) || !near(got[2], 2.25) {
		t.Errorf("finished at %v, %v; want 1, 2.25", got[1], got[2])
	}
}

// TestFairShare_CancellationRaisesTheOthersRates: cancelling job 1 at 0.5
// leaves job 2 alone from then on.
func TestFairShare_CancellationRaisesTheOthersRates(t *testing.T) {
	f := &transfer.FairShare{PoolGBps: [2]float64{40, 40}}
	f.Submit(1, 0, transfer.D2H, 32, 20*mb, 0)
	f.Submit(2, 1, transfer.D2H, 32, 60*mb, 0)
	f.Advance(0.5)
	f.Cancel(1, 0.5)
	got := finishTimes(t, f)
	// Job 2 moved 10 MB by 0.5; 50 MB at 32 GB/s take 1.5625.
	if _, ok := got[1]; ok {
		t.Errorf("cancelled job 1 reported done at %v", got[1])
	}
	if !near(got[2], 2.0625) {
		t.Errorf("job 2 finished at %v; want 2.0625", got[2])
	}
}

// TestFairShare_CancelKeepsCompletionsItPasses: Cancel advances the pool to
// its time first; a job that finished on the way must still be reported
// by the pool, or its owner never learns that its copy landed.
func TestFairShare_CancelKeepsCompletionsItPasses(t *testing.T) {
	f := &transfer.FairShare{PoolGBps: [2]float64{40, 40}}
	f.Submit(1, 0, transfer.D2H, 32, 20*mb, 0) // done at 1
	f.Submit(2, 1, transfer.D2H, 32, 60*mb, 0)
	f.Advance(0)
	f.Cancel(2, 2) // job 1 finished at 1, on the way to 2
	var got []transfer.Done
	got = append(got, f.Advance(2)...)
	if len(got) != 1 || got[0].ID != 1 || !near(got[0].At, 1) {
		t.Fatalf("bug: FairShare.Cancel (transfer/fairshare.go:60-61) advances the pool and drops the completions of that Advance: job 1 (done at 1) is never reported; got %+v; want job 1 at 1", got)
	}
}

// TestFairShare_DirectionsAreIndependent: a D2H and an H2D on one rank do
// not share bandwidth (each direction has its own link and pool).
func TestFairShare_DirectionsAreIndependent(t *testing.T) {
	f := pool()
	f.Submit(1, 0, transfer.D2H, 32, 32*mb, 0)
	f.Submit(2, 0, transfer.H2D, 32, 32*mb, 0)
	got := finishTimes(t, f)
	if !near(got[1], 1) || !near(got[2], 1) {
		t.Errorf("finished at %v, %v; want 1, 1", got[1], got[2])
	}
}

// TestFairShare_UnlimitedIsInstant: bandwidth 0 (link and pool) means the
// copy completes at its first byte.
func TestFairShare_UnlimitedIsInstant(t *testing.T) {
	f := &transfer.FairShare{}
	f.Submit(1, 0, transfer.D2H, 0, 100*mb, 3)
	got := finishTimes(t, f)
	if got[1] != 3 {
		t.Errorf("finished at %v; want 3", got[1])
	}
}

// TestFairShare_SameInstantStoresBeforeLoads: completions at one instant
// come stores first, then in submission order.
func TestFairShare_SameInstantStoresBeforeLoads(t *testing.T) {
	f := &transfer.FairShare{}
	f.Submit(1, 0, transfer.H2D, 0, mb, 2)
	f.Submit(2, 1, transfer.D2H, 0, mb, 2)
	f.Submit(3, 0, transfer.H2D, 0, mb, 2)
	f.Submit(4, 0, transfer.D2H, 0, mb, 2)
	done := f.Advance(2)
	var ids []int64
	for _, d := range done {
		ids = append(ids, d.ID)
	}
	want := []int64{2, 4, 1, 3}
	if len(ids) != len(want) {
		t.Fatalf("done %v; want %v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("done %v; want %v", ids, want)
		}
	}
}

// TestFairShare_PoolClockBoundsTheFirstByte: a job submitted with a ready
// time before the pool's clock cannot move bytes in the past.
func TestFairShare_PoolClockBoundsTheFirstByte(t *testing.T) {
	f := pool()
	f.Advance(5)
	f.Submit(1, 0, transfer.D2H, 32, 32*mb, 1)
	if got := finishTimes(t, f)[1]; !near(got, 6) {
		t.Errorf("finished at %v; want 6", got)
	}
}
