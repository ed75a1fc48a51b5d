// Package shard splits a sweep over machines and merges the parts. A
// sharded sweep is the sweep of package sweep cut into N shards: every
// shard computes the same deterministic assignment of points to shards
// (longest estimated cost first, each onto the least loaded shard), runs
// its own points, and encodes them as a File that carries the sweep's
// identity (a SHA-256 of the config, the --set and --vary arguments and
// the traces' bytes), the build that computed it and the whole
// assignment. Merge checks that the files belong to one sweep and one
// build and cover every point, and collects them into the sweep.Result
// the unsharded sweep would have produced, byte for byte.
//
// Like the rest of the core it does no I/O: the caller reads and writes
// the files. docs/sweep.md ("Sharding") describes the CLI and the
// Kubernetes Job built on it.
package shard

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/sweep"
)

// MaxShards bounds N, so a typo cannot ask for a million empty shards.
const MaxShards = 1 << 16

// A Shard is shard K of N (K from 0).
type Shard struct{ K, N int }

func (s Shard) String() string { return strconv.Itoa(s.K) + "/" + strconv.Itoa(s.N) }

// FileName is the name of the shard's file: shard-K-of-N.json.
func (s Shard) FileName() string { return fmt.Sprintf("shard-%d-of-%d.json", s.K, s.N) }

// IndexVar is the environment variable a Kubernetes Indexed Job sets to
// the pod's completion index; --shard auto/N reads K from it.
const IndexVar = "JOB_COMPLETION_INDEX"

// Parse reads a --shard argument: "K/N", or "auto/N" with K taken from
// index, the value of IndexVar (set says whether it is set at all).
func Parse(arg, index string, set bool) (Shard, error) {
	k, n, ok := strings.Cut(arg, "/")
	if !ok {
		return Shard{}, fmt.Errorf("--shard %s: expected K/N or auto/N (shard K of N, K from 0)", arg)
	}
	nv, err := strconv.Atoi(n)
	if err != nil || nv < 1 || nv > MaxShards {
		return Shard{}, fmt.Errorf("--shard %s: N must be an integer from 1 to %d, got %q", arg, MaxShards, n)
	}
	what := "K"
	if k == "auto" {
		if !set {
			return Shard{}, fmt.Errorf("--shard %s: %s is not set (it is set in the pods of a Kubernetes Indexed Job); give K/N instead", arg, IndexVar)
		}
		k, what = index, IndexVar
	}
	kv, err := strconv.Atoi(k)
	if err != nil || kv < 0 || kv >= nv {
		return Shard{}, fmt.Errorf("--shard %s: %s must be an integer from 0 to %d, got %q", arg, what, nv-1, k)
	}
	return Shard{K: kv, N: nv}, nil
}

// Costs estimates each point's cost with replay.Estimate, building the
// workloads through wls (share it with the run that follows), and lists
// the trace paths the points read (sorted, once each). A point that
// cannot be estimated (it is over a limit, its trace is unreadable) costs
// 1: it fails quickly when it runs, and the shard reports it.
func Costs(p *sweep.Plan, traces replay.Traces, wls *replay.Workloads) ([]int64, []string) {
	costs := make([]int64, p.Len())
	var paths []string
	for i := range costs {
		job := p.Job(i, traces, sweep.Options{})
		job.Workloads = wls
		c, err := replay.Estimate(job)
		if err != nil || c.Units < 1 {
			c.Units = 1
		}
		costs[i] = c.Units
		if c.Trace != "" {
			paths = append(paths, c.Trace)
		}
	}
	slices.Sort(paths)
	return costs, slices.Compact(paths)
}

// Assign gives each point an owner shard: points in decreasing cost (by
// index among equal costs), each to the shard with the least cost so far
// (the lowest-numbered among equals). The result depends on costs and n
// alone; integer arithmetic only.
func Assign(costs []int64, n int) []int {
	order := make([]int, len(costs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case costs[a] > costs[b]:
			return -1
		case costs[a] < costs[b]:
			return 1
		}
		return a - b
	})
	load := make([]int64, n)
	owner := make([]int, len(costs))
	for _, i := range order {
		best := 0
		for k := 1; k < n; k++ {
			if load[k] < load[best] {
				best = k
			}
		}
		owner[i] = best
		load[best] += costs[i]
	}
	return owner
}

// Points lists, in increasing order, the points owner gives to shard k.
func Points(owner []int, k int) []int {
	var out []int
	for i, o := range owner {
		if o == k {
			out = append(out, i)
		}
	}
	return out
}
