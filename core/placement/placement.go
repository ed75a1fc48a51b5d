// Package placement owns where a ready request goes
// (docs/model/engine.md ("Placement")): the routing policies of a pool —
// round robin (the default), least loaded, session affinity and a KV-aware
// router after Dynamo's — each a Router that chooses one of the pool's
// ranks from a read-only View of their state at the routing instant.
package placement

import (
	"fmt"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/identity"
)

// Target is one DP rank of one worker.
type Target struct {
	Worker int // index inside the role's pool
	Rank   int // DP rank inside the worker
}

// A Request is what a router knows of the request it places.
type Request struct {
	Session int32
	// Blocks are the identities of the prompt's full blocks.
	Blocks []identity.ID
	// Tokens is the prompt length.
	Tokens int
}

// Load is one rank's state at the routing instant.
type Load struct {
	Active int // running requests
	Queued int // waiting requests, connector waiters and pending handoffs
	// MaxSequences is the rank's scheduler.max_sequences.
	MaxSequences int
}

// Work is what a rank has in hand at the routing instant, in the terms of
// Dynamo's KV router (docs/model/engine.md ("KV router")).
type Work struct {
	// PrefillTokens is the prompt tokens its requests have still to
	// compute: exact for running requests, the router's estimate at their
	// routing for queued ones.
	PrefillTokens int
	// ActiveBlocks is the G1 blocks in use plus the blocks its queued
	// requests still need.
	ActiveBlocks int
	// CachedBlocks is the G1 blocks that hold KV (in use or idle cached).
	CachedBlocks int
}

// Overlap is how much of a request's prefix one rank holds.
type Overlap struct {
	G1 int // leading blocks with a cached G1 copy
	// G1Active is how many of those copies are in use by other requests.
	G1Active int
	// Host is the blocks after the G1 prefix resident in the rank's G2
	// tier, consecutively (0 without G2).
	Host int
}

// A View is the read-only state of a pool's ranks at the routing instant.
// Candidate i is worker i / ranks, DP rank i % ranks: a lower index is a
// lower scheduler id.
type View interface {
	Len() int
	Target(i int) Target
	Load(i int) Load
	Work(i int) Work
	Overlap(i int, blocks []identity.ID) Overlap
}

// A Choice is a router's answer: the candidate's index in the View and,
// from the kv_router, the overlap and the prompt tokens it expects the rank
// to compute.
type Choice struct {
	Index int
	Target
	// Scored is set when the router computed Overlap and Fresh.
	Scored  bool
	Overlap Overlap
	Fresh   int
}

// A Router places a pool's ready requests.
type Router interface {
	Route(req *Request, v View) Choice
}

// Params are the kv_router's parameters (config.Routing).
type Params struct {
	BlockSize          int
	OverlapScoreWeight float64
	Temperature        float64
	Seed               uint64
	HostOverlapWeight  float64
}

// New returns the router of policy for a pool of workers × ranks. flat
// selects the disaggregated pools' round-robin order (worker-major) over
// the aggregated one.
func New(policy string, workers, ranks int, flat bool, p Params) (Router, error) {
	switch policy {
	case config.RoutingRoundRobin:
		if flat {
			return roundRobin{NewFlat(workers, ranks), ranks}, nil
		}
		return roundRobin{NewAggregated(workers, ranks), ranks}, nil
	case config.RoutingLeastLoaded:
		return leastLoaded{}, nil
	case config.RoutingSessionAffinity:
		return &sessionAffinity{home: map[int32]int{}}, nil
	case config.RoutingKVRouter:
		return newKVRouter(p), nil
	}
	return nil, fmt.Errorf("unknown routing policy %q", policy)
}

// cursor is a round-robin order.
type cursor interface{ Next() Target }

// roundRobin ignores the view: the order of docs/model/engine.md
// ("Placement"), which every result before routing policies used.
type roundRobin struct {
	c     cursor
	ranks int
}

func (r roundRobin) Route(*Request, View) Choice {
	t := r.c.Next()
	return Choice{Index: t.Worker*r.ranks + t.Rank, Target: t}
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
