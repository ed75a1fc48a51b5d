// Package placement owns where a ready request goes
// (docs/model/engine.md ("Placement")): round robin, with no session affinity
// and no cache awareness.
package placement

// Target is one DP rank of one worker.
type Target struct {
	Worker int // index inside the role's pool
	Rank   int // DP rank inside the worker
}

// Aggregated is the aggregated-mode cursor: a worker cursor plus one DP-rank
// cursor per worker, so 3 workers × 2 ranks go (w0,r0), (w1,r0), (w2,r0),
// (w0,r1), …
type Aggregated struct {
	workers, ranks int
	next           int
	rankNext       []int
}

// NewAggregated returns a cursor over workers × ranks.
func NewAggregated(workers, ranks int) *Aggregated {
	return &Aggregated{workers: workers, ranks: ranks, rankNext: make([]int, workers)}
}

// Next returns the next target and advances both cursors.
func (a *Aggregated) Next() Target {
	w := a.next % a.workers
	a.next++
	r := a.rankNext[w] % a.ranks
	a.rankNext[w]++
	return Target{Worker: w, Rank: r}
}

// Flat is a disaggregated pool's cursor over its (worker, rank) pairs in id
// order.
type Flat struct {
	workers, ranks int
	next           int
}

// NewFlat returns a cursor over workers × ranks, flattened worker-major.
func NewFlat(workers, ranks int) *Flat { return &Flat{workers: workers, ranks: ranks} }

// Next returns the next target.
func (f *Flat) Next() Target {
	i := f.next % (f.workers * f.ranks)
	f.next++
	return Target{Worker: i / f.ranks, Rank: i % f.ranks}
}
