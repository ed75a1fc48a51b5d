package transfer

import (
	"math"
	"sort"

	"github.com/kvsim/kvsim/core/vtime"
)

// Direction of a pooled copy; each direction shares its own bandwidth.
type Direction uint8

const (
	D2H Direction = iota // device to host: stores
	H2D                  // host to device: loads
)

// A FairShare is a bandwidth pool shared by several ranks
// (docs/model/transfers.md ("Fair-shared pools")). A job submitted at t moves
// no bytes before max(t + latency, the pool's clock); while moving, its rate
// is min(rank_bw / rank_jobs, pool_bw / pool_jobs) for its direction, where
// the counts are the moving jobs of its rank and of the pool in that
// direction. Shares an idle rank leaves are not redistributed. Rates change
// only at a first byte, a completion or a cancellation.
type FairShare struct {
	PoolGBps [2]float64 // per direction, 0 = unlimited
	clock    vtime.Time
	jobs     []*job
	done     []Done
	carry    []Done // completions passed by a Cancel, reported by the next Advance
}

type job struct {
	id        int64
	rank      int
	dir       Direction
	rankGBps  float64
	remaining float64 // bytes
	firstByte vtime.Time
	moving    bool
	rate      float64 // bytes per ms, +Inf when unlimited
}

// Done is a finished job.
type Done struct {
	ID   int64
	Rank int
	Dir  Direction
	At   vtime.Time
}

// Clock is the time up to which the pool has been advanced.
func (f *FairShare) Clock() vtime.Time { return f.clock }

// Submit adds a job of bytes for rank, whose link runs at rankGBps, that can
// move bytes from ready on.
func (f *FairShare) Submit(id int64, rank int, dir Direction, rankGBps float64, bytes int64, ready vtime.Time) {
	f.jobs = append(f.jobs, &job{id: id, rank: rank, dir: dir, rankGBps: rankGBps,
		remaining: float64(bytes), firstByte: max(ready, f.clock)})
}

// Cancel removes job id; other jobs speed up from now on. Jobs that
// complete by now are reported by the next Advance.
func (f *FairShare) Cancel(id int64, now vtime.Time) {
	f.carry = append(f.carry, f.Advance(now)...)
	for i, j := range f.jobs {
		if j.id == id {
			f.jobs = append(f.jobs[:i], f.jobs[i+1:]...)
			f.rerate()
			return
		}
	}
}

// Busy reports whether any job is unfinished.
func (f *FairShare) Busy() bool { return len(f.jobs) > 0 }

// Next returns the time of the pool's next first byte or completion, or
// +Inf when it is idle.
func (f *FairShare) Next() vtime.Time {
	next := vtime.Never
	for _, j := range f.jobs {
		if !j.moving {
			next = min(next, j.firstByte)
		} else {
			next = min(next, f.finish(j))
		}
	}
	return next
}

// Projected returns when job id would finish if nothing else changed.
func (f *FairShare) Projected(id int64) vtime.Time {
	// A copy of the pool played forward answers exactly.
	c := FairShare{PoolGBps: f.PoolGBps, clock: f.clock}
	for _, j := range f.jobs {
		cp := *j
		c.jobs = append(c.jobs, &cp)
	}
	for {
		t := c.Next()
		if t == vtime.Never {
			return vtime.Never
		}
		for _, d := range c.Advance(t) {
			if d.ID == id {
				return d.At
			}
		}
	}
}

func (f *FairShare) finish(j *job) vtime.Time {
	if math.IsInf(j.rate, 1) {
		return f.clock
	}
	return f.clock + vtime.Time(j.remaining/j.rate)
}

// Advance moves the pool to now and returns the jobs that finished, in
// order of finish time, stores before loads, then submission.
func (f *FairShare) Advance(now vtime.Time) []Done {
	f.done = append(f.done[:0], f.carry...)
	f.carry = f.carry[:0]
	for {
		next := f.Next()
		if next > now {
			break
		}
		f.move(next)
		// Apply every event due at this instant. finish(j) is recomputed
		// after move, along another path than Next's, so the test does not
		// rely on it equalling next: move snaps a remainder under 1e-6
		// bytes to 0.
		kept := f.jobs[:0]
		for _, j := range f.jobs {
			if j.moving && (j.remaining <= 0 || f.finish(j) <= next) {
				f.done = append(f.done, Done{ID: j.id, Rank: j.rank, Dir: j.dir, At: next})
				continue
			}
			kept = append(kept, j)
		}
		for i := len(kept); i < len(f.jobs); i++ {
			f.jobs[i] = nil
		}
		f.jobs = kept
		for _, j := range f.jobs {
			if !j.moving && j.firstByte <= next {
				j.moving = true
			}
		}
		f.rerate()
	}
	f.move(now)
	// Same-instant completions: stores before loads, then submission order.
	sort.SliceStable(f.done, func(a, b int) bool {
		if !f.done[a].At.Same(f.done[b].At) {
			return f.done[a].At < f.done[b].At
		}
		return f.done[a].Dir < f.done[b].Dir
	})
	return f.done
}

// move advances every moving job's bytes to t at the current rates.
func (f *FairShare) move(t vtime.Time) {
	if t <= f.clock {
		return
	}
	dt := t - f.clock
	for _, j := range f.jobs {
		if j.moving {
			if math.IsInf(j.rate, 1) {
				j.remaining = 0
			} else {
				j.remaining -= j.rate * float64(dt)
				if j.remaining < 1e-6 {
					j.remaining = 0
				}
			}
		}
	}
	f.clock = t
}

func (f *FairShare) rerate() {
	var poolJobs [2]int
	rankJobs := map[[2]int]int{}
	for _, j := range f.jobs {
		if j.moving {
			poolJobs[j.dir]++
			rankJobs[[2]int{j.rank, int(j.dir)}]++
		}
	}
	for _, j := range f.jobs {
		if !j.moving {
			continue
		}
		r := math.Inf(1)
		if j.rankGBps > 0 {
			r = j.rankGBps * 1e6 / float64(rankJobs[[2]int{j.rank, int(j.dir)}])
		}
		if p := f.PoolGBps[j.dir]; p > 0 {
			r = min(r, p*1e6/float64(poolJobs[j.dir]))
		}
		j.rate = r
	}
}
