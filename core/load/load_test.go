package load_test

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/core/load"
	"github.com/kvsim/kvsim/core/vtime"
)

type start struct {
	session int
	at      vtime.Time
}

func collect(out *[]start) func(int, vtime.Time) {
	return func(s int, at vtime.Time) { *out = append(*out, start{s, at}) }
}

// TestClosed_HandsTheSlotOnAtTheSameInstant is
// docs/model/traffic.md ("Load models"): up to concurrency sessions are
// active; a finishing session's slot passes to the next pending session at
// that same instant, in session order.
func TestClosed_HandsTheSlotOnAtTheSameInstant(t *testing.T) {
	d := load.NewClosed(5, 2)
	var got []start
	d.Start(collect(&got))
	if want := []start{{0, 0}, {1, 0}}; !slices.Equal(got, want) {
		t.Fatalf("started %v; want %v", got, want)
	}
	got = nil
	d.SessionDone(7.5, collect(&got))
	if want := []start{{2, 7.5}}; !slices.Equal(got, want) {
		t.Errorf("after one session ended at 7.5: started %v; want %v", got, want)
	}
	got = nil
	for range 4 {
		d.SessionDone(9, collect(&got))
	}
	if want := []start{{3, 9}, {4, 9}}; !slices.Equal(got, want) {
		t.Errorf("started %v; want %v (and nothing once the sessions run out)", got, want)
	}
	if d.Delay(200) != 200 {
		t.Errorf("closed-loop delay %v; want 200", d.Delay(200))
	}
}

// TestTimestamps_Speedup: first arrivals and delays are divided by the
// speedup (docs/model/traffic.md ("Turn timing")).
func TestTimestamps_Speedup(t *testing.T) {
	d := load.NewTimestamps([]vtime.Time{0, 100, 50}, 2)
	var got []start
	d.Start(collect(&got))
	if want := []start{{0, 0}, {1, 50}, {2, 25}}; !slices.Equal(got, want) {
		t.Errorf("started %v; want %v", got, want)
	}
	if d.Delay(200) != 100 {
		t.Errorf("delay %v; want 100", d.Delay(200))
	}
	got = nil
	d.SessionDone(10, collect(&got))
	if len(got) != 0 {
		t.Errorf("open loop started %v on a session end; want nothing", got)
	}
}

// TestConstantRate: 1000/rate ms apart, the first at 0.
func TestConstantRate(t *testing.T) {
	d := load.NewConstantRate(3, 4)
	var got []start
	d.Start(collect(&got))
	if want := []start{{0, 0}, {1, 250}, {2, 500}}; !slices.Equal(got, want) {
		t.Errorf("started %v; want %v", got, want)
	}
}

// TestPoisson_DeterministicPerSeed: the same seed gives the same arrivals,
// another seed different ones; arrivals increase.
func TestPoisson_DeterministicPerSeed(t *testing.T) {
	times := func(seed int64) []vtime.Time {
		var got []start
		load.NewPoisson(50, 10, seed).Start(collect(&got))
		out := make([]vtime.Time, len(got))
		for i, s := range got {
			out[i] = s.at
		}
		return out
	}
	a, b, c := times(42), times(42), times(7)
	if !slices.Equal(a, b) {
		t.Error("same seed, different arrivals")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds, same arrivals")
	}
	if !slices.IsSorted(a) || a[0] <= 0 {
		t.Errorf("arrivals not increasing from a first gap: %v", a[:5])
	}
	mean := float64(a[len(a)-1]) / float64(len(a))
	if mean < 50 || mean > 200 {
		t.Errorf("mean gap %v ms at 10/s; want about 100", mean)
	}
}
