package scheduler

import (
	"math"

	"github.com/kvsim/kvsim/core/internal/inplace"
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/vtime"
)

// DecodeNext reports whether the pass that would start on this rank now
// (the engine asks when the pass in flight has been committed) is a pure
// decode step that DecodeStep computes exactly as Pass would
// (docs/model/engine.md ("Fast-forward of pure decode passes")): an
// aggregated rank with nothing waiting (no connector waiter either), every
// running request one token past its KV (its last output token) and not
// finishing with the next one, and G1 room for every block the step needs.
// Then Pass would give each running request one token in running order
// (allocating its next block when the token starts one, fencing it behind
// a store still reading it, and finalizing the block it completes),
// preempt, admit, reject and finish nothing, run the store hook for the
// requests with a block to store, time the pass (DecodeMs, or the modelled
// time of that decode batch, from the connector's compute start) and emit
// one token per request (interning the identity of a block the token
// completes).
//
// The requests' part of the answer is worked out once for a running list
// and then counted down (pureLeft): a decode step moves every running
// request one token on and changes nothing else the answer reads, so
// within a run of decode steps only the rank's queues and G1 room are
// looked at again.
func (k *Rank) DecodeNext() bool {
	c := &k.Cfg
	if c.Role != Aggregated || (c.Timing == nil && !(c.DecodeMs > 0)) {
		return false
	}
	n := len(k.running)
	if n == 0 || n > c.MaxBatchedTokens || k.waiting.len() > 0 || len(k.connWaiting) > 0 || k.awake > 0 {
		return false
	}
	if !k.pureKnown {
		if !k.countPure() {
			return false
		}
	} else if k.pureLeft < 1 {
		return false
	}
	// A decode step allocates at most one block a request; the exact need
	// is counted only when the room is short of that.
	return k.Pool.CanAlloc(n) || k.Pool.CanAlloc(k.decodeNeed())
}

// countPure is DecodeNext's test of each running request: it reports
// whether every one has a decode step next that does not finish it, and
// records in pureLeft how many decode steps in a row that stays so.
func (k *Rank) countPure() bool {
	c := &k.Cfg
	left := math.MaxInt
	for _, r := range k.running {
		l := r.Len()
		if r.Output < 1 || r.Computed != l-1 || r.Materialized {
			return false // not a decode step: prefill work left, or the prompt's last token
		}
		// The step finishes r when r.Output+1 reaches MaxOutput, or l+1
		// the context length; each step adds one to both.
		left = min(left, r.MaxOutput-1-r.Output)
		if c.ContextLength > 0 {
			left = min(left, c.ContextLength-1-l)
		}
	}
	k.pureKnown, k.pureLeft = true, left
	return left >= 1
}

// decodeNeed is the number of G1 blocks the next decode step allocates:
// one for each running request whose next token starts a block.
func (k *Rank) decodeNeed() int {
	bs := k.Cfg.BlockSize
	need := 0
	for _, r := range k.running {
		if l := r.Len(); l > len(r.Slots)*bs {
			need += (l+bs-1)/bs - len(r.Slots)
		}
	}
	// Allocation takes free slots, then idle cached ones; finalizing a
	// block changes neither count, so room for the sum is room for each.
	return need
}

// runningChanged forgets what DecodeNext and DecodeStep keep about the
// running list; every change to the list or its requests outside a
// decode step calls it (Pass, Cancel).
func (k *Rank) runningChanged() {
	k.pureKnown, k.decodeRun = false, false
}

// DecodeStep runs, at now, the pass DecodeNext has just found to be a pure
// decode step, with the same effects, in the same order, as Pass: every
// running request is scheduled one token, the pass ends DecodeMs after now
// (a modelled timing: the time timeModelled gives the same batch) and
// every running request emits one token. It returns the pass result,
// as Pass does.
//
// After a decode step the pass result lists every running request as
// scheduled and emitting, in running order; the next decode step on the
// same running list (decodeRun) keeps those lists and rewrites only each
// entry's Before, and the requests keep their PassMark, since k.mark does
// not move either.
func (k *Rank) DecodeStep(now vtime.Time) *PassResult {
	res := &k.res
	res.Start, res.Changed = now, true
	res.Finished = res.Finished[:0]
	res.Rejected = res.Rejected[:0]
	res.Admissions = res.Admissions[:0]
	res.Preempted = res.Preempted[:0]
	res.PrefillTokens = 0
	res.Bound = timing.NoBound
	k.storeDue = k.storeDue[:0]
	again := k.decodeRun
	if !again {
		res.Scheduled = res.Scheduled[:0]
		res.Emitted = res.Emitted[:0]
		k.mark++
	}
	k.pureLeft--
	bs := k.Cfg.BlockSize
	for i, r := range k.running {
		before := r.Computed
		target := before + 1
		if target > len(r.Slots)*bs { // as schedule: the step starts a block
			need := (target+bs-1)/bs - len(r.Slots)
			start := len(r.Slots)
			slots, ok := k.Pool.For(r.Index).Alloc(need, r.Slots)
			if !ok {
				panic("scheduler: DecodeStep without G1 room (DecodeNext was not asked)")
			}
			inplace.Store(&r.Slots, slots) // the block table usually has room
			if k.Host != nil {
				k.Host.FenceAllocation(r.Slots[start:], now)
			}
		}
		if k.Cfg.PrefixCaching && k.endsBlock(target) {
			if j := target/bs - 1; !k.Pool.IsCached(r.Slots[j]) {
				k.Pool.Finalize(r.Slots[j], r.Seq.IDs[j])
			}
		}
		r.Computed = target
		if again {
			res.Scheduled[i].Before = before
		} else {
			r.PassMark, r.PassSlot = k.mark, int32(len(res.Scheduled))
			pushScheduled(&res.Scheduled, Scheduled{Req: r, Before: before, Tokens: 1})
		}
		if k.Host != nil { // noteStoreDue does not inline: no call without a connector
			k.noteStoreDue(r, before)
		}
	}
	start := now
	if k.Host != nil { // Pass's store hook and compute start
		for _, s := range k.storeDue {
			k.Host.ObserveCompletedBlocks(s.Req, s.Before, s.Req.Computed, now)
		}
		start = k.Host.ComputeStart(now)
	}
	res.ComputeStart = start
	if m := k.Cfg.Timing; m != nil {
		k.timeDecodeStep(m, start)
	} else {
		end := start
		end += k.Cfg.DecodeMs
		res.End = end
	}
	for _, r := range k.running {
		if !k.appendCheap(r) {
			k.appendOutput(r)
		}
		if !again {
			pushReq(&res.Emitted, r)
		}
	}
	k.decodeRun = true
	return res
}

// endsBlock reports whether n tokens fill a whole number of blocks,
// without a division when the block size is a power of two (most are; a
// 64-bit division is a runtime call under GOOS=js).
func (k *Rank) endsBlock(n int) bool {
	bs := k.Cfg.BlockSize
	if bs&(bs-1) == 0 {
		return n&(bs-1) == 0
	}
	return n%bs == 0
}

// timeDecodeStep is timeModelled for DecodeStep's batch of decode steps
// that all emit: as there, only the polynomial reads the emitters, and only
// the step models each step's context. A function of its own keeps fixed
// timing's DecodeStep as it was.
func (k *Rank) timeDecodeStep(m *timing.Model, now vtime.Time) {
	res := &k.res
	b := &k.batch
	b.Reset(m.NeedsSteps())
	if b.Steps {
		for _, sc := range res.Scheduled {
			b.DecodeStep(sc.Before)
		}
	} else {
		for _, sc := range res.Scheduled {
			b.DecodeStep(sc.Before)
			b.Emit(sc.Req.Len())
		}
	}
	d := m.Pass(b, true, true)
	res.End = now + d.Prefill + d.Decode
	res.Bound = d.Bound
}
