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
	f, costs, err := Prepare(p, s, build, traces, opts.Workloads)
	if err != nil {
		return nil, err
	}
	return f.Evaluate(p, costs, traces, opts), nil
}

// Prepare is Run up to the points: the shard's File without points, and
// every point's cost. Use it to see whether an existing file is already
// this shard's (Done).
func Prepare(p *sweep.Plan, s Shard, build string, traces replay.Traces, wls *replay.Workloads) (*File, []int64, error) {
	costs, paths := Costs(p, traces, wls)
	id, err := Identity(p, traces, paths)
	if err != nil {
		return nil, nil, err
	}
	f := &File{Format: Format, Build: build, Sweep: id, Shard: s.K, Shards: s.N, Config: p.Spec.Name,
		Text: string(p.Spec.Data), Set: nonNil(p.Spec.Sets), Vary: nonNil(p.Spec.Vary), Owners: Assign(costs, s.N)}
	return f, costs, nil
}

// Done tells whether old (a decoded file) is this prepared shard, done:
// the same build, sweep and split, every point of the shard there and
// none failed. Running the shard again would give the same file.
func (f *File) Done(old *File) bool {
	if old.Build != f.Build || old.Sweep != f.Sweep || old.Shard != f.Shard || old.Shards != f.Shards ||
		!equalInts(old.Owners, f.Owners) || len(old.Failed()) > 0 {
		return false
	}
	want := Points(f.Owners, f.Shard)
	if len(old.Points) != len(want) {
		return false
	}
	for i, pt := range old.Points {
		if pt.Point != want[i] {
			return false
		}
	}
	return true
}

// Evaluate runs the prepared shard's points into f (costs from Prepare)
// and returns f.
func (f *File) Evaluate(p *sweep.Plan, costs []int64, traces replay.Traces, opts sweep.Options) *File {
	for _, o := range p.RunPoints(Points(f.Owners, f.Shard), traces, opts) {
		pt := Point{Point: o.Point, Cost: costs[o.Point], Summary: o.Summary}
		if o.Err != nil {
			pt.Summary, pt.Error = nil, o.Err.Error()
		}
		f.Points = append(f.Points, pt)
	}
	return f
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
