package engine

import (
	"slices"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/g2"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/placement"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/request"
)

// A pool is one role's ranks and the router that places requests on them
// (docs/model/engine.md ("Placement")). It is the router's read-only view
// of those ranks at the routing instant (placement.View).
type pool struct {
	e       *Engine
	policy  string
	router  placement.Router
	base    int // global index of the pool's first worker
	workers int
	ranks   int
	// req is the request being routed, a field so that passing it to the
	// router does not allocate per request.
	req placement.Request
}

// newPool builds the router of role's pool, whose first worker is base.
func (e *Engine) newPool(role *config.Role, base int, flat bool) (*pool, error) {
	rt := e.cfg.Engine.Routing
	p := &pool{e: e, policy: rt.Policy(role.Name), base: base,
		workers: role.Parallelism.Replicas, ranks: role.Parallelism.AttentionData}
	var err error
	p.router, err = placement.New(p.policy, p.workers, p.ranks, flat, placement.Params{
		BlockSize: role.KVCache.BlockSize, OverlapScoreWeight: rt.OverlapScoreWeight,
		Temperature: rt.Temperature, Seed: rt.Seed, HostOverlapWeight: rt.HostOverlapWeight})
	if err != nil {
		return nil, e.cfg.Refuse("engine.routing", err.Error())
	}
	if p.policy == config.RoutingKVRouter && e.routedFresh == nil {
		e.routedFresh = make([]int32, len(e.reqs))
	}
	return p, nil
}

// route places r (its prompt) on one of the pool's ranks and returns the
// rank with its routing_history entry (name is the entry's pool).
func (p *pool) route(r *request.Request, name string) (*Rank, report.Routing) {
	req := &p.req
	*req = placement.Request{Session: r.Session, Tokens: r.PromptLen}
	if r.Seq != nil { // a sharded run routes before it builds the identities
		req.Blocks = r.Seq.IDs[:min(len(r.Seq.IDs), r.PromptLen/p.e.bs)]
	}
	c := p.router.Route(req, p)
	rk := p.rank(c.Index)
	h := report.Routing{Pool: name, Outcome: "routed", Worker: int32(c.Worker), Schedule: int32(rk.Index), DPRank: int32(c.Rank)}
	if p.policy == config.RoutingRoundRobin {
		return rk, h // the entry of every result before routing policies
	}
	o := c.Overlap
	if !c.Scored {
		o = p.Overlap(c.Index, req.Blocks)
	}
	h.Policy = uint8(slices.Index(config.RoutingPolicies, p.policy))
	h.Overlap, h.HostOverlap, h.HasHost = int32(o.G1), int32(o.Host), rk.Host != nil
	if c.Scored && p.e.routedFresh != nil && name != "decode" { // a decode rank prefills nothing
		p.e.routedFresh[r.Index] = int32(c.Fresh)
	}
	return rk, h
}

func (p *pool) rank(i int) *Rank { return p.e.workers[p.base+i/p.ranks].ranks[i%p.ranks] }

// Len is the number of candidate ranks.
func (p *pool) Len() int { return p.workers * p.ranks }

// Target is candidate i's worker (inside the pool) and DP rank.
func (p *pool) Target(i int) placement.Target {
	return placement.Target{Worker: i / p.ranks, Rank: i % p.ranks}
}

// Load counts candidate i's requests: running, and queued (waiting,
// connector waiters, P/D handoffs waiting for a reservation). A request
// that finishes in the rank's pass in flight still runs until the pass end
// commits it, though the scheduler, which computes a pass at its start,
// has already let it go.
func (p *pool) Load(i int) placement.Load {
	rk := p.rank(i)
	l := placement.Load{Active: len(rk.Running()) + len(p.finishing(rk)), Queued: rk.NumWaiting(),
		MaxSequences: rk.Cfg.MaxSequences}
	if p.e.pd {
		l.Queued += len(p.e.pending[rk.Index])
	}
	return l
}

// finishing lists the requests that finish in rk's pass in flight.
func (p *pool) finishing(rk *Rank) []*request.Request {
	w := p.e.workers[rk.Worker]
	if !w.busy || !w.planned[rk.DP] {
		return nil
	}
	return rk.Result().Finished
}

// Work is candidate i's prefill still to do and its blocks in use or
// needed (docs/model/engine.md ("KV router")).
func (p *pool) Work(i int) placement.Work {
	rk := p.rank(i)
	w := placement.Work{ActiveBlocks: rk.Pool.NumInUse(), CachedBlocks: rk.Pool.Capacity() - rk.Pool.NumFree()}
	for _, r := range rk.Running() {
		if !r.Materialized && r.Computed < r.PromptLen {
			w.PrefillTokens += r.PromptLen - r.Computed
		}
	}
	for _, r := range p.finishing(rk) {
		w.ActiveBlocks += (r.Len() + p.e.bs - 1) / p.e.bs
	}
	queued := func(r *request.Request) {
		if !r.Materialized && p.e.routedFresh != nil {
			w.PrefillTokens += int(p.e.routedFresh[r.Index])
		}
		w.ActiveBlocks += max(0, (r.PromptLen+p.e.bs-1)/p.e.bs-len(r.Slots))
	}
	rk.EachWaiting(queued)
	if p.e.pd {
		for _, r := range p.e.pending[rk.Index] {
			queued(r)
		}
	}
	return w
}

// Overlap is how much of blocks candidate i holds: the leading blocks
// cached in its G1 (how many in use), then those resident in its G2.
func (p *pool) Overlap(i int, blocks []identity.ID) placement.Overlap {
	rk := p.rank(i)
	if !rk.Cfg.PrefixCaching {
		return placement.Overlap{}
	}
	var o placement.Overlap
	o.G1, o.G1Active = rk.Pool.Lookup(blocks)
	if rk.Host != nil {
		t := rk.Host.Tier()
		for _, id := range blocks[o.G1:] {
			if t.Lookup(id) != g2.Resident {
				break
			}
			o.Host++
		}
	}
	return o
}

// workerLoads returns the zeroed per-worker entries of the summary
// (report.Run.Workers) when a pool routes by a policy other than round
// robin and the run has more than one worker, nil otherwise.
func (e *Engine) workerLoads() []report.WorkerLoad {
	routed := false
	for _, p := range []*pool{e.place, e.prefillPlace, e.decodePlace} {
		routed = routed || p != nil && p.policy != config.RoutingRoundRobin
	}
	if !routed || len(e.workers) < 2 {
		return nil
	}
	ws := make([]report.WorkerLoad, len(e.workers))
	for i, w := range e.workers {
		name := w.role
		if name == config.RoleAggregated {
			name = "agg"
		}
		ws[i] = report.WorkerLoad{Pool: name, Worker: w.roleIdx}
	}
	return ws
}
