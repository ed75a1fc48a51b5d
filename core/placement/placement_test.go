package placement_test

import (
	"testing"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/placement"
)

// TestAggregated_RoundRobin3x2 is
// docs/model/cases.md ("Case D: smaller checks") /
// docs/model/engine.md ("Placement"): 3 workers × 2 DP ranks go (w0,r0),
// (w1,r0), (w2,r0), (w0,r1), (w1,r1), (w2,r1), and then start over.
func TestAggregated_RoundRobin3x2(t *testing.T) {
	a := placement.NewAggregated(3, 2)
	want := []placement.Target{tg(0, 0), tg(1, 0), tg(2, 0), tg(0, 1), tg(1, 1), tg(2, 1), tg(0, 0), tg(1, 0)}
	for i, w := range want {
		if got := a.Next(); got != w {
			t.Fatalf("placement %d: (w%d,r%d); want (w%d,r%d)", i, got.Worker, got.Rank, w.Worker, w.Rank)
		}
	}
}

// TestAggregated_OneWorker: a single worker cycles its DP ranks.
func TestAggregated_OneWorker(t *testing.T) {
	a := placement.NewAggregated(1, 4)
	for i := range 9 {
		if got := a.Next(); got != (placement.Target{Worker: 0, Rank: i % 4}) {
			t.Fatalf("placement %d: %+v; want (w0,r%d)", i, got, i%4)
		}
	}
}

// TestFlat_WorkerMajor: a disaggregated pool's cursor walks the flattened
// (worker, rank) pairs in id order.
func TestFlat_WorkerMajor(t *testing.T) {
	f := placement.NewFlat(2, 2)
	want := []placement.Target{tg(0, 0), tg(0, 1), tg(1, 0), tg(1, 1), tg(0, 0)}
	for i, w := range want {
		if got := f.Next(); got != w {
			t.Fatalf("placement %d: %+v; want %+v", i, got, w)
		}
	}
}

func tg(w, r int) placement.Target { return placement.Target{Worker: w, Rank: r} }

// view is a hand-made placement.View over one worker of len(loads) ranks.
type view struct {
	loads    []placement.Load
	works    []placement.Work
	overlaps []placement.Overlap
}

func (v *view) Len() int                                         { return len(v.loads) }
func (v *view) Target(i int) placement.Target                    { return tg(0, i) }
func (v *view) Load(i int) placement.Load                        { return v.loads[i] }
func (v *view) Work(i int) placement.Work                        { return v.works[i] }
func (v *view) Overlap(i int, _ []identity.ID) placement.Overlap { return v.overlaps[i] }

func route(t *testing.T, policy string, p placement.Params, v *view, reqs ...placement.Request) []int {
	t.Helper()
	r, err := placement.New(policy, 1, v.Len(), false, p)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for i := range reqs {
		got = append(got, r.Route(&reqs[i], v).Index)
	}
	return got
}

// TestLeastLoaded: fewest active + queued, the lowest index among equals.
func TestLeastLoaded(t *testing.T) {
	v := &view{loads: []placement.Load{{Active: 2, Queued: 1}, {Active: 1, Queued: 1}, {Active: 0, Queued: 2}}}
	if got := route(t, config.RoutingLeastLoaded, placement.Params{}, v, placement.Request{}); got[0] != 1 {
		t.Errorf("chose %d; want 1 (3, 2, 2 requests: the lowest of the two 2s)", got[0])
	}
}

// TestSessionAffinity: session 7's home is the least-loaded rank of its
// first turn (1); it stays there while admissible (2 < 3), and a turn that
// finds home full (3 of 3) goes to the least-loaded rank (0) without
// moving the home.
func TestSessionAffinity(t *testing.T) {
	v := &view{loads: []placement.Load{{Active: 1, MaxSequences: 3}, {MaxSequences: 3}}}
	r, _ := placement.New(config.RoutingSessionAffinity, 1, 2, false, placement.Params{})
	req := placement.Request{Session: 7}
	step := func(want int) {
		t.Helper()
		if got := r.Route(&req, v).Index; got != want {
			t.Fatalf("chose %d; want %d (loads %+v)", got, want, v.loads)
		}
	}
	step(1)
	v.loads[1].Active, v.loads[0].Active = 2, 0
	step(1) // home: 2 < 3, although rank 0 is empty
	v.loads[1].Queued = 1
	step(0) // home full: 3 of 3
	v.loads[1].Queued = 0
	step(1) // admissible again
}

// TestKVRouterLogit: logit = w × (prefill tokens in hand + fresh) / bs +
// (active blocks + blocks − overlap in use). 100 tokens (6 full blocks of
// 16): a rank with 4 cached blocks (1 in use), 2 more in G2, 40 tokens in
// hand and 10 active blocks: fresh = 100 − 64 = 36 → (40 + 36)/16 = 4.75;
// decode 10 + 6 − 1 = 15 → 19.75; with w = 2: 24.5; with G2 blocks at
// 0.5: fresh = 36 − 16 = 20 → 3.75 + 15 = 18.75.
func TestKVRouterLogit(t *testing.T) {
	req := &placement.Request{Tokens: 100, Blocks: make([]identity.ID, 6)}
	w := placement.Work{PrefillTokens: 40, ActiveBlocks: 10}
	o := placement.Overlap{G1: 4, G1Active: 1, Host: 2}
	for _, c := range []struct {
		p    placement.Params
		want float64
	}{
		{placement.Params{BlockSize: 16, OverlapScoreWeight: 1}, 19.75},
		{placement.Params{BlockSize: 16, OverlapScoreWeight: 2}, 24.5},
		{placement.Params{BlockSize: 16, OverlapScoreWeight: 1, HostOverlapWeight: 0.5}, 18.75},
	} {
		if got := c.p.Logit(req, w, o); got != c.want {
			t.Errorf("%+v: logit %v; want %v", c.p, got, c.want)
		}
	}
}

// TestKVRouterTies: equal logits go to the rank with fewer cached G1
// blocks; only a tie that remains takes the seeded draw (seed 0's first
// draw 0.8915: ⌊0.8915 × 2⌋ = 1 of the two tied).
func TestKVRouterTies(t *testing.T) {
	p := placement.Params{BlockSize: 4, OverlapScoreWeight: 1}
	req := placement.Request{Tokens: 8, Blocks: make([]identity.ID, 2)}
	v := &view{loads: make([]placement.Load, 3), overlaps: make([]placement.Overlap, 3),
		works: []placement.Work{{CachedBlocks: 5}, {CachedBlocks: 2}, {CachedBlocks: 9}}}
	if got := route(t, config.RoutingKVRouter, p, v, req); got[0] != 1 {
		t.Errorf("chose %d; want 1 (2 cached blocks)", got[0])
	}
	v.works[0].CachedBlocks = 2
	if got := route(t, config.RoutingKVRouter, p, v, req); got[0] != 1 {
		t.Errorf("chose %d; want 1 (ranks 0 and 1 tied, draw 0.8915)", got[0])
	}
}

// TestSoftmax: logits 1, 2, 3 at temperature 1 normalise to 0, 0.5, 1:
// weights 1, e^−0.5 = 0.60653, e^−1 = 0.36788, sum 1.97441; cumulative
// 0.50648, 0.81368, 1.
func TestSoftmax(t *testing.T) {
	l := []float64{1, 2, 3}
	for _, c := range []struct {
		u    float64
		want int
	}{{0, 0}, {0.5064, 0}, {0.5066, 1}, {0.8136, 1}, {0.8138, 2}, {0.9999, 2}} {
		if got := placement.Softmax(l, 1, c.u); got != c.want {
			t.Errorf("u %v: %d; want %d", c.u, got, c.want)
		}
	}
	// At temperature 2 the weights are 1, e^−0.25 = 0.77880, e^−0.5 =
	// 0.60653, sum 2.38533: cumulative 0.41923, 0.74573, 1.
	if got := placement.Softmax(l, 2, 0.7457); got != 1 {
		t.Errorf("temperature 2, u 0.7457: %d; want 1", got)
	}
	if got := placement.Softmax(l, 2, 0.7458); got != 2 {
		t.Errorf("temperature 2, u 0.7458: %d; want 2", got)
	}
	// Equal logits: uniform.
	if got := placement.Softmax([]float64{4, 4, 4, 4}, 1, 0.6); got != 2 {
		t.Errorf("equal logits, u 0.6: %d; want 2", got)
	}
}
