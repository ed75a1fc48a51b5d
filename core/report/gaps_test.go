package report

import (
	"math/rand/v2"
	"testing"

	"github.com/kvsim/kvsim/core/vtime"
)

// TestITLFromTableCounts: records sharing one table of gap values (as a
// run's do) give the same ITL distribution from the table's counts as from
// every record's gaps, whether all of them completed, some did not, or only
// some of the records are summarised (then the counts do not add up and
// the records are read one by one).
func TestITLFromTableCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	for round := range 200 {
		shared := NewGapValues()
		recs := make([]Request, 1+rng.IntN(40))
		for i := range recs {
			r := NewRequest()
			r.SetGapBuffer(make([]Gap, 0, 1+rng.IntN(4)), shared)
			at := vtime.Time(rng.IntN(100))
			for range rng.IntN(60) {
				// A few values, as fixed timing makes, or many, as
				// modelled timing does.
				if round%2 == 0 {
					at += vtime.Time(1 + rng.IntN(3))
				} else {
					at += vtime.Time(rng.Float64() * 5)
				}
				r.Token(at)
			}
			r.Status = StatusCompleted
			if round%3 != 0 && rng.IntN(5) == 0 {
				r.Status = []string{"", StatusRejected, StatusCanceled}[rng.IntN(3)]
			}
			recs[i] = r
		}
		for _, sub := range [][]Request{recs, recs[:len(recs)/2]} {
			want := histDist(gapHistogram(sub))
			if got := itlDist(sub); got != want {
				t.Fatalf("round %d (%d of %d records): ITL %+v from the table; %+v from the records", round, len(sub), len(recs), got, want)
			}
		}
		if round%3 == 0 && shared.completedCounts(recs) == nil {
			t.Fatalf("round %d: every record completed, but the table's counts were not used", round)
		}
	}
}

// TestGapRuns_MergeOnlyWhenFull: a record whose gap buffer has room keeps
// each closed run as it came (no search of the list: a modelled timing's
// record has room for a run per gap and almost never repeats a value); a
// full buffer merges a value that comes back into its earlier run instead
// of growing (a fixed timing's record has room for two runs). Both report
// the same gaps.
func TestGapRuns_MergeOnlyWhenFull(t *testing.T) {
	times := []vtime.Time{0, 1, 3, 4, 6, 7, 9, 10} // gaps 1, 2, 1, 2, 1, 2, 1
	want := map[vtime.Time]int{1: 4, 2: 3}
	for _, c := range []struct {
		room, runs int
	}{{room: 16, runs: 6}, {room: 2, runs: 2}} {
		buf := make([]Gap, 0, c.room)
		r := NewRequest()
		r.SetGapBuffer(buf, NewGapValues())
		for _, at := range times {
			r.Token(at)
		}
		got := map[vtime.Time]int{}
		r.EachGap(func(ms vtime.Time, n int) { got[ms] += n })
		if len(got) != len(want) || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("room %d: gaps %v; want %v", c.room, got, want)
		}
		if len(r.gaps) != c.runs {
			t.Errorf("room %d: %d closed runs kept (%v); want %d", c.room, len(r.gaps), r.gaps, c.runs)
		}
		if cap(r.gaps) != c.room || &r.gaps[:1][0] != &buf[:1][0] {
			t.Errorf("room %d: the runs left the record's buffer (capacity %d)", c.room, cap(r.gaps))
		}
	}
}
