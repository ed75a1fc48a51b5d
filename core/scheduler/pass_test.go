package scheduler_test

import (
	"slices"
	"testing"

	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/scheduler"
)

type bench struct {
	rk   *scheduler.Rank
	ids  *identity.Table
	reqs int32
}

func newBench(cfg scheduler.Config) *bench {
	if cfg.BlockSize == 0 {
		cfg.BlockSize = 4
	}
	if cfg.MaxBatchedTokens == 0 {
		cfg.MaxBatchedTokens = 64
	}
	if cfg.MaxSequences == 0 {
		cfg.MaxSequences = 4
	}
	cfg.ChunkedPrefill, cfg.PrefixCaching = true, true
	if cfg.PrefillMs == 0 && cfg.DecodeMs == 0 {
		cfg.PrefillMs, cfg.DecodeMs = 2, 1
	}
	ids := identity.NewTable(64)
	return &bench{rk: scheduler.New(cfg, ids, &scheduler.Generated{Next: 1<<31 + 1}), ids: ids}
}

// add enqueues a request whose prompt is the given tokens.
func (b *bench) add(out int, tokens ...uint32) *request.Request {
	r := &request.Request{Index: b.reqs, Known: len(tokens), PromptLen: len(tokens), MaxOutput: out, Seq: &identity.Sequence{}}
	b.reqs++
	r.Seq.AppendContent(b.ids, tokens, 1, len(tokens), b.rk.Cfg.BlockSize, r.Index)
	b.rk.Enqueue(r)
	return r
}

func seq(from, n uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = from + uint32(i)
	}
	return out
}

// TestRelease_TailFirst is
// docs/model/cases.md ("Case B: restore from G2")'s release: after a
// 9-token request finishes, its partial block is free and blocks 1 then 0 are
// in the eviction queue (block 1 is evicted first).
func TestRelease_TailFirst(t *testing.T) {
	b := newBench(scheduler.Config{Capacity: 3})
	r := b.add(1, seq(1, 9)...)
	res := b.rk.Pass(0)
	if res.End != 2 || len(res.Finished) != 1 {
		t.Fatalf("pass ended at %v with %d finished; want 2, 1", res.End, len(res.Finished))
	}
	p := b.rk.Pool
	if p.NumFree() != 1 || p.NumIdle() != 2 {
		t.Fatalf("free %d idle %d; want 1, 2", p.NumFree(), p.NumIdle())
	}
	b0, b1 := p.Copy(r.Seq.IDs[0]), p.Copy(r.Seq.IDs[1])
	if got := p.IdleOrder(nil); !slices.Equal(got, []int32{b1, b0}) {
		t.Errorf("idle order %v; want block 1 (%d) then block 0 (%d)", got, b1, b0)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestTiming_PrefillDecodeRule is docs/model/pass.md ("Pass timing"): P when
// any request does prefill work, D when any makes a pure decode step; a
// request finishing its prefill emits its first token without D.
func TestTiming_PrefillDecodeRule(t *testing.T) {
	b := newBench(scheduler.Config{Capacity: 16})
	a := b.add(3, seq(1, 9)...)
	if res := b.rk.Pass(0); res.End != 2 || res.PrefillTokens != 9 || !slices.Contains(res.Emitted, a) {
		t.Fatalf("prefill pass: end %v, %d prefill tokens; want 2, 9 and a token", res.End, res.PrefillTokens)
	}
	if res := b.rk.Pass(2); res.End != 3 || res.PrefillTokens != 0 {
		t.Errorf("decode pass: end %v, %d prefill tokens; want 3, 0", res.End, res.PrefillTokens)
	}
	b.add(1, seq(100, 5)...)
	if res := b.rk.Pass(3); res.End != 6 || res.PrefillTokens != 5 {
		t.Errorf("mixed pass: end %v, %d prefill tokens; want 6 (P + D), 5", res.End, res.PrefillTokens)
	}
}

// TestLookup_RecomputeCap is
// docs/model/g1.md ("Prefix lookup and the recompute cap"): a block-aligned
// resident prompt recomputes its whole last block.
func TestLookup_RecomputeCap(t *testing.T) {
	b := newBench(scheduler.Config{Capacity: 16})
	b.add(1, seq(1, 8)...)
	b.rk.Pass(0)
	b.add(1, seq(1, 8)...)
	res := b.rk.Pass(2)
	if len(res.Admissions) != 1 || res.Admissions[0].Reused != 4 || res.PrefillTokens != 4 {
		t.Errorf("admissions %+v, %d prefill tokens; want 4 reused and 4 computed", res.Admissions, res.PrefillTokens)
	}
}

// TestAdmission_FreshRequestLargerThanG1IsRejected is
// docs/model/pass.md ("Rejections at admission").
func TestAdmission_FreshRequestLargerThanG1IsRejected(t *testing.T) {
	b := newBench(scheduler.Config{Capacity: 2})
	big := b.add(1, seq(1, 9)...) // 3 blocks
	small := b.add(1, seq(50, 5)...)
	res := b.rk.Pass(0)
	if !slices.Contains(res.Rejected, big) || big.Status != request.Rejected {
		t.Errorf("rejected %v; want the 3-block request", res.Rejected)
	}
	if len(res.Admissions) != 1 || res.Admissions[0].Req != small {
		t.Errorf("admissions %+v; want the 2-block request after the rejection", res.Admissions)
	}
}

// TestAdmission_NoChunkedPrefill: with chunked prefill off a prompt is
// scheduled whole; one longer than the whole budget is rejected (it could
// never run), one that only misses this pass's leftover budget waits.
func TestAdmission_NoChunkedPrefill(t *testing.T) {
	b := newBench(scheduler.Config{Capacity: 16, MaxBatchedTokens: 8})
	b.rk.Cfg.ChunkedPrefill = false
	long := b.add(1, seq(1, 9)...)
	first := b.add(1, seq(100, 6)...)
	second := b.add(1, seq(200, 6)...)
	res := b.rk.Pass(0)
	if !slices.Equal(res.Rejected, []*request.Request{long}) {
		t.Errorf("rejected %v; want only the 9-token prompt", res.Rejected)
	}
	if len(res.Admissions) != 1 || res.Admissions[0].Req != first || res.PrefillTokens != 6 {
		t.Fatalf("admissions %+v, %d prefill tokens; want the first 6-token prompt whole", res.Admissions, res.PrefillTokens)
	}
	res = b.rk.Pass(res.End)
	if len(res.Admissions) != 1 || res.Admissions[0].Req != second || res.PrefillTokens != 6 || second.Status == request.Rejected {
		t.Errorf("next pass admissions %+v, %d prefill tokens; want the second prompt whole", res.Admissions, res.PrefillTokens)
	}
}

// TestPreemption_LastRunningGoesToTheWaitingFront is
// docs/model/pass.md ("Preemption"): the last running request is preempted,
// its blocks are released, its computed count resets, it goes to the front of
// the waiting queue, and no waiting request is admitted in that pass.
func TestPreemption_LastRunningGoesToTheWaitingFront(t *testing.T) {
	b := newBench(scheduler.Config{Capacity: 4})
	r1 := b.add(8, seq(1, 7)...)   // 2 blocks, a third for token 8
	r2 := b.add(8, seq(100, 7)...) // 2 blocks
	b.rk.Pass(0)                   // both prefill: 4 blocks in use
	b.rk.Pass(2)                   // both compute token 7: still 2 blocks each
	r3 := b.add(1, seq(200, 3)...)
	res := b.rk.Pass(3) // r1 computes token 8: block 2 → no room → preempt r2
	if !slices.Equal(res.Preempted, []*request.Request{r2}) {
		t.Fatalf("preempted %v; want r2", res.Preempted)
	}
	if r2.Computed != 0 || len(r2.Slots) != 0 || r2.Status != request.Preempted || r2.Preemptions != 1 {
		t.Errorf("r2: computed %d, %d slots, status %v, preemptions %d; want 0, 0, preempted, 1", r2.Computed, len(r2.Slots), r2.Status, r2.Preemptions)
	}
	if len(res.Admissions) != 0 || r3.Status != request.Waiting {
		t.Errorf("admissions %+v in a preempting pass; want none", res.Admissions)
	}
	if got := b.rk.Running(); !slices.Equal(got, []*request.Request{r1}) {
		t.Errorf("running %v; want [r1]", got)
	}
	// Once r1 is done, r2 (at the waiting front) is re-admitted before r3.
	var order []*request.Request
	var readmitted bool
	for now := res.End; len(order) < 2 && now < 100; {
		res = b.rk.Pass(now)
		for _, a := range res.Admissions {
			order = append(order, a.Req)
			if a.Req == r2 {
				readmitted = a.Readmission
			}
		}
		now = res.End
	}
	if !slices.Equal(order, []*request.Request{r2, r3}) || !readmitted {
		t.Errorf("admission order %v (r2 readmission %v); want [r2 r3], r2 a readmission", order, readmitted)
	}
	if err := b.rk.Pool.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestWaiting_WithoutG2OneCandidateIsAdmittedWithAnExhaustedBudget is
// docs/model/pass.md ("Waiting loop"): without G2 the waiting loop does not
// test the budget first, so once R1's prefill has spent the whole budget, one
// more candidate (R2) is admitted with 0 tokens scheduled — it holds its
// cached blocks and becomes running — and the loop then stops (as aisimulate's
// core.rs does). R2 computes its prompt in the next pass as a running
// request.
func TestWaiting_WithoutG2OneCandidateIsAdmittedWithAnExhaustedBudget(t *testing.T) {
	b := newBench(scheduler.Config{Capacity: 16, MaxBatchedTokens: 8})
	r1 := b.add(1, seq(1, 8)...)
	r2 := b.add(1, seq(100, 4)...)
	r3 := b.add(1, seq(200, 4)...)
	res := b.rk.Pass(0)
	var admitted []int32
	for _, a := range res.Admissions {
		admitted = append(admitted, a.Req.Index)
	}
	if len(admitted) == 0 || admitted[0] != r1.Index {
		t.Fatalf("admitted %v; want r1 first", admitted)
	}
	if r3.Status != request.Waiting {
		t.Errorf("r3 status %v; want waiting (the loop stops after the 0-token admission)", r3.Status)
	}
	if len(admitted) != 2 || admitted[1] != r2.Index || r2.Status != request.Running || r2.Computed != 0 {
		t.Fatalf("bug: scheduler.Rank.admit → schedule (core/scheduler/pass.go:187-189, `if n == 0 && remaining > 0 { return blocked }`) refuses a 0-token admission, so with G2 off and the budget spent the candidate stays waiting: admitted %v, r2 status %v computed %d; want [%d %d], r2 running with 0 computed tokens", admitted, r2.Status, r2.Computed, r1.Index, r2.Index)
	}
}
