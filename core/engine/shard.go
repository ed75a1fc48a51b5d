package engine

import (
	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/trace"
	"github.com/kvsim/kvsim/core/vtime"
)

// A Shard asks the engine to simulate only some workers of the run: those
// w with w % Of == Index. Every request is still routed (so the round-robin
// order is the run's), and one routed to another shard's worker is dropped
// at dispatch: it is counted as dispatched and done, and its record stays
// empty; the shard's other workers get a one-block G1. Shards of a run that
// Shardable allows are independent, so their records and counters merged
// give the run's report byte for byte, unless a shard reports HeldBack
// (docs/model/engine.md ("Sharded runs"); replay merges them, or runs the
// whole run in one engine).
type Shard struct {
	Of, Index int
}

func (s Shard) on() bool { return s.Of > 1 }

// owns tells whether the shard simulates worker w.
func (s Shard) owns(w int) bool { return !s.on() || w%s.Of == s.Index }

// Shardable returns the number of workers a run of cfg over wl can be split
// across (0: it cannot). A split is exact only when nothing couples the
// workers: one aggregated pool of at least two replicas routed round robin
// (a choice that reads no worker's state), arrivals fixed in advance (an
// open-loop load of single-turn sessions, so that no completion makes an
// arrival another worker sees), G2 tiers private to a DP rank or a worker
// and not ranked by identity number (CohortLRU breaks ties by the order in
// which the whole run first saw each identity, which a shard does not
// know), and no G3, KV-cache reuse hints, P/D or agentic load.
func Shardable(cfg *config.Config, wl *trace.Workload) int {
	agg := cfg.Engine.Workers.Aggregated
	if cfg.Engine.Mode != config.ModeAggregated || agg == nil || agg.Parallelism.Replicas < 2 ||
		cfg.Engine.Routing.Policy(config.RoleAggregated) != config.RoutingRoundRobin || wl.Agentic {
		return 0
	}
	switch cfg.Traffic.Load.Type {
	case config.LoadTraceTimestamps, config.LoadPoisson, config.LoadConstantRate:
	default:
		return 0
	}
	if kv := agg.KVCache; kv.G3Offload != nil || kv.HostOffload != nil && (kv.HostOffload.Scope == config.ScopeClusterShared ||
		kv.HostOffload.KVCR != nil || kv.HostOffload.Connector == config.ConnectorOffloadingV024) {
		return 0
	}
	for i := range wl.Sessions {
		if len(wl.Sessions[i].Turns) != 1 {
			return 0
		}
	}
	return agg.Parallelism.Replicas
}

// noteHeldBack notes, at the end of an instant, a worker that could pass
// but does not because its last pass, at this instant, changed nothing
// (worker.canStart). Alone, it waits for something of its own to poke it;
// in a whole run, any other worker's later instant would start it again:
// the one coupling a shard cannot see. Replay then runs the whole run in
// one engine instead (HeldBack).
func (e *Engine) noteHeldBack(now vtime.Time) {
	for _, w := range e.workers {
		if !w.busy && w.runnable() && !w.canStart(now) {
			e.heldBack = true
			return
		}
	}
}

// HeldBack tells whether a shard saw a worker held back by the no-op rule
// (noteHeldBack): its report may then differ from the whole run's.
func (e *Engine) HeldBack() bool { return e.heldBack }

// drop ends request r at dispatch in a shard that does not simulate its
// worker: dispatched and done, with nothing else of it kept. Its session
// has no next turn (Shardable) and an open loop starts no session when
// one ends.
func (e *Engine) drop(r *request.Request) {
	e.done++
	r.Seq, r.Slots, r.Known = nil, nil, 0
}
