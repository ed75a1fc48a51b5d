package shard

import (
	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/sweep"
)

// Run runs shard s of the sweep p: it computes the sweep's identity and
// every point's cost, assigns the points, and evaluates this shard's with
// opts (opts.Progress counts this shard's points). A point that fails is
// recorded with its error and does not stop the others; the error is for
// a sweep whose traces cannot be read. build names the kvsim build.
func Run(p *sweep.Plan, s Shard, build string, traces replay.Traces, opts sweep.Options) (*File, error) {
	if opts.Workloads == nil {
		opts.Workloads = replay.NewWorkloads()
	}
	costs, paths := Costs(p, traces, opts.Workloads)
	id, err := Identity(p, traces, paths)
	if err != nil {
		return nil, err
	}
	owners := Assign(costs, s.N)
	f := &File{Format: Format, Build: build, Sweep: id, Shard: s.K, Shards: s.N,
		Config: p.Spec.Name, Text: string(p.Spec.Data), Set: nonNil(p.Spec.Sets), Vary: nonNil(p.Spec.Vary), Owners: owners}
	for _, o := range p.RunPoints(Points(owners, s.K), traces, opts) {
		pt := Point{Point: o.Point, Cost: costs[o.Point], Summary: o.Summary}
		if o.Err != nil {
			pt.Summary, pt.Error = nil, o.Err.Error()
		}
		f.Points = append(f.Points, pt)
	}
	return f, nil
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
