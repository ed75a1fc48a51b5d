// Package g3 owns the storage tier behind G2 (docs/model/g3.md): which
// block identities a G3 store holds, its least-recently-used eviction, and
// the timing of G2→G3 writes and G3→G2 reads over a fair-shared link.
// A worker_local store serves one worker; a cluster_shared store serves
// every worker, so a block one worker wrote can be read by another.
//
// The store knows nothing of G2 or requests: package connector submits
// writes when G2 stores complete, stages reads when a G2 lookup misses, and
// applies the completions the engine collects with Advance.
package g3

import (
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/transfer"
	"github.com/kvsim/kvsim/core/vtime"
)

// Direction of a G3 job.
type Direction uint8

const (
	Write Direction = iota // G2 → G3
	Read                   // G3 → G2
)

// Probe results.
type Probe uint8

const (
	Miss     Probe = iota
	Pending        // a write is still moving its bytes
	Resident       // readable
)

// Link is one worker's connection to a store.
type Link struct {
	ReadGBps, WriteGBps  float64 // per worker, 0 = unlimited
	LatencyToFirstByteMs vtime.Time
}

// Stats are one store's counters (the report's g3_offload section).
type Stats struct {
	LookupProbes, LookupHits, LookupPending int64
	Read, Write                             JobStats
	Evictions                               int64
	CrossWorkerReadBlocks                   int64
	BypassedRestores                        int64
}

// JobStats count one direction's jobs.
type JobStats struct {
	SubmittedJobs, CompletedJobs, CancelledJobs int64
	CompletedBytes                              int64
	TransferMs                                  vtime.Time // summed over completed jobs
}

type entry struct {
	pending    bool
	writer     int
	busy       int32 // jobs moving this block (not evictable while > 0)
	prev, next identity.ID
	listed     bool
}

// Job is one submitted copy.
type Job struct {
	ID     int64
	Dir    Direction
	Worker int
	Keys   []identity.ID
	Submit vtime.Time
	Done   vtime.Time
	// Owner submitted the job and is told when it completes.
	Owner Owner
}

// An Owner submits jobs and applies them when they complete (a DP rank's
// connector adapter).
type Owner interface {
	G3Completed(j *Job)
}

// A Store is one G3 tier.
type Store struct {
	capacity   int
	blockBytes int64
	entries    map[identity.ID]*entry
	head, tail identity.ID
	n          int
	pool       *transfer.FairShare
	jobs       map[int64]*Job
	nextJob    int64
	done       []*Job
	Stats      Stats
}

// NewStore returns an empty store of capacity blocks of blockBytes each,
// whose jobs share sharedWriteGBps and sharedReadGBps (0 = unlimited).
func NewStore(capacity int, blockBytes int64, sharedWriteGBps, sharedReadGBps float64) *Store {
	return &Store{capacity: capacity, blockBytes: blockBytes, entries: map[identity.ID]*entry{},
		head: identity.None, tail: identity.None, jobs: map[int64]*Job{},
		pool: &transfer.FairShare{PoolGBps: [2]float64{sharedWriteGBps, sharedReadGBps}}}
}

// Probe tells whether key is readable, being written, or absent, and
// counts the look-up.
func (s *Store) Probe(key identity.ID) Probe {
	s.Stats.LookupProbes++
	e, ok := s.entries[key]
	switch {
	case !ok:
		return Miss
	case e.pending:
		s.Stats.LookupPending++
		return Pending
	}
	s.Stats.LookupHits++
	return Resident
}

// Contains reports whether key has an entry (pending or resident).
func (s *Store) Contains(key identity.ID) bool { _, ok := s.entries[key]; return ok }

// SubmitWrite writes the keys the store lacks, evicting least-recently-used
// entries not in transfer; keys that do not fit are skipped. It returns the
// job, or nil when nothing needs writing.
func (s *Store) SubmitWrite(worker int, keys []identity.ID, now vtime.Time, link Link, owner Owner) *Job {
	var take []identity.ID
	for _, k := range keys {
		if _, ok := s.entries[k]; ok {
			continue
		}
		if s.n >= s.capacity && !s.evictOne() {
			break
		}
		s.entries[k] = &entry{pending: true, writer: worker, busy: 1, prev: identity.None, next: identity.None}
		s.n++
		take = append(take, k)
	}
	if len(take) == 0 {
		return nil
	}
	return s.submit(Write, worker, take, now, link.WriteGBps, link.LatencyToFirstByteMs, owner)
}

// SubmitRead reads resident keys for worker (they stay busy until the job
// completes), touching them as most recently used.
func (s *Store) SubmitRead(worker int, keys []identity.ID, now vtime.Time, link Link, owner Owner) *Job {
	for _, k := range keys {
		e := s.entries[k]
		e.busy++
		if e.writer != worker {
			s.Stats.CrossWorkerReadBlocks++
		}
		s.touch(k)
	}
	return s.submit(Read, worker, append([]identity.ID(nil), keys...), now, link.ReadGBps, link.LatencyToFirstByteMs, owner)
}

func (s *Store) submit(dir Direction, worker int, keys []identity.ID, now vtime.Time, gbps float64, latency vtime.Time, owner Owner) *Job {
	s.nextJob++
	j := &Job{ID: s.nextJob, Dir: dir, Worker: worker, Keys: keys, Submit: now, Owner: owner}
	s.jobs[j.ID] = j
	fd := transfer.D2H
	st := &s.Stats.Write
	if dir == Read {
		fd, st = transfer.H2D, &s.Stats.Read
	}
	st.SubmittedJobs++
	s.pool.Submit(j.ID, worker, fd, gbps, int64(len(keys))*s.blockBytes, now+latency)
	return j
}

// Next is the time of the store's next transfer event, or +Inf.
func (s *Store) Next() vtime.Time { return s.pool.Next() }

// Busy reports whether jobs are in flight.
func (s *Store) Busy() bool { return len(s.jobs) > 0 }

// Advance completes the jobs done by now and returns them in completion
// order: written blocks become resident, read blocks free again.
func (s *Store) Advance(now vtime.Time) []*Job {
	s.done = s.done[:0]
	for _, d := range s.pool.Advance(now) {
		j := s.jobs[d.ID]
		delete(s.jobs, d.ID)
		j.Done = d.At
		st := &s.Stats.Write
		if j.Dir == Read {
			st = &s.Stats.Read
		}
		st.CompletedJobs++
		st.CompletedBytes += int64(len(j.Keys)) * s.blockBytes
		st.TransferMs += j.Done - j.Submit
		for _, k := range j.Keys {
			e := s.entries[k]
			e.busy--
			if j.Dir == Write {
				e.pending = false
				s.pushTail(k)
			}
		}
		s.done = append(s.done, j)
	}
	return s.done
}

// Counts returns resident and pending entries.
func (s *Store) Counts() (resident, pending int) {
	for _, e := range s.entries {
		if e.pending {
			pending++
		} else {
			resident++
		}
	}
	return resident, pending
}

func (s *Store) evictOne() bool {
	for k := s.head; k != identity.None; k = s.entries[k].next {
		if s.entries[k].busy == 0 {
			s.unlink(k)
			delete(s.entries, k)
			s.n--
			s.Stats.Evictions++
			return true
		}
	}
	return false
}

func (s *Store) touch(k identity.ID) {
	if s.entries[k].listed {
		s.unlink(k)
		s.pushTail(k)
	}
}

func (s *Store) pushTail(k identity.ID) {
	e := s.entries[k]
	e.prev, e.next, e.listed = s.tail, identity.None, true
	if s.tail != identity.None {
		s.entries[s.tail].next = k
	} else {
		s.head = k
	}
	s.tail = k
}

func (s *Store) unlink(k identity.ID) {
	e := s.entries[k]
	if e.prev != identity.None {
		s.entries[e.prev].next = e.next
	} else {
		s.head = e.next
	}
	if e.next != identity.None {
		s.entries[e.next].prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next, e.listed = identity.None, identity.None, false
}
