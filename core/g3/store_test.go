package g3

import (
	"testing"

	"github.com/kvsim/kvsim/core/identity"
)

var link = Link{ReadGBps: 1, WriteGBps: 1}

// TestWriteThenRead: a write makes blocks resident at its completion; a
// read by another worker counts as a cross-worker read.
func TestWriteThenRead(t *testing.T) {
	s := NewStore(4, 1_000_000, 0, 0)
	j := s.SubmitWrite(0, []identity.ID{1, 2}, 0, link, nil)
	if j == nil || s.Probe(1) != Pending {
		t.Fatalf("after submit: job %v, probe %v; want a job and Pending", j, s.Probe(1))
	}
	if done := s.Advance(2); len(done) != 1 || done[0].Done != 2 {
		t.Fatalf("write done %+v; want one at 2 ms (2 MB at 1 GB/s)", done)
	}
	if s.Probe(2) != Resident {
		t.Fatal("written block not resident")
	}
	s.SubmitRead(1, []identity.ID{1}, 2, link, nil)
	if done := s.Advance(3); len(done) != 1 || done[0].Dir != Read {
		t.Fatalf("read done %+v", done)
	}
	if s.Stats.CrossWorkerReadBlocks != 1 {
		t.Errorf("cross-worker reads %d; want 1", s.Stats.CrossWorkerReadBlocks)
	}
	if s.SubmitWrite(0, []identity.ID{1, 2}, 3, link, nil) != nil {
		t.Error("writing blocks already held made a job")
	}
}

// TestLRUSkipsBusyBlocks: eviction takes the least recently used block that
// no job is moving; a read refreshes recency.
func TestLRUSkipsBusyBlocks(t *testing.T) {
	s := NewStore(2, 1, 0, 0)
	s.SubmitWrite(0, []identity.ID{1, 2}, 0, Link{}, nil)
	s.Advance(0)
	s.SubmitRead(0, []identity.ID{1}, 0, Link{}, nil) // 1 becomes most recent and busy
	s.SubmitWrite(0, []identity.ID{3}, 0, Link{}, nil)
	if s.Contains(2) || !s.Contains(1) || !s.Contains(3) {
		t.Fatalf("after writing 3: holds 1 %v, 2 %v, 3 %v; want 2 evicted", s.Contains(1), s.Contains(2), s.Contains(3))
	}
	// With 1 busy (read in flight) and 3 pending, nothing can be evicted.
	if j := s.SubmitWrite(0, []identity.ID{4}, 0, Link{}, nil); j != nil {
		t.Errorf("wrote 4 with every block busy")
	}
	if s.Stats.Evictions != 1 {
		t.Errorf("evictions %d; want 1", s.Stats.Evictions)
	}
}
