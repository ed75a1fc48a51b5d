package scheduler

import (
	"slices"

	"github.com/kvsim/kvsim/core/connector"
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/vtime"
)

// Pass runs one scheduler pass starting at now (docs/model/pass.md) and
// returns what it did; the engine commits it at res.End. The result is
// reused by the next call.
func (k *Rank) Pass(now vtime.Time) *PassResult {
	k.runningChanged()
	res := &k.res
	res.Start, res.Changed = now, false
	res.Scheduled = res.Scheduled[:0]
	res.Emitted = res.Emitted[:0]
	res.Finished = res.Finished[:0]
	res.Rejected = res.Rejected[:0]
	res.Admissions = res.Admissions[:0]
	res.Preempted = res.Preempted[:0]
	res.PrefillTokens = 0
	res.Bound = timing.NoBound
	k.storeDue = k.storeDue[:0]

	budget := k.Cfg.MaxBatchedTokens
	preempted := false
	k.mark++

	// Running loop: every running request gets min(remaining, budget).
	for i := 0; i < len(k.running) && budget > 0; {
		r := k.running[i]
		switch k.schedule(r, false, 0, &budget, &preempted, now) {
		case scheduled:
			i++
		case blocked:
			i = len(k.running)
		case currentPreempted:
			// r left the running list; the next request moved into slot i.
		}
	}

	// Waiting loop, only when nothing was preempted. With G2 a lookup has
	// side effects, so none is made once the budget is spent.
	if !preempted {
		k.admitWaiting(now, &budget, &preempted)
	}

	// Stores, for every running request scheduled in this pass, in running
	// order (docs/model/pass.md ("Order of work in a pass")). schedule listed,
	// in that order, those with something to store (Adapter.StoreDue); a
	// preemption takes its victim out of the list.
	if k.Host != nil {
		for _, s := range k.storeDue {
			k.Host.ObserveCompletedBlocks(s.Req, s.Before, s.Req.Computed, now)
		}
	}

	k.time(now)
	k.emitTokens()
	if len(res.Scheduled) > 0 || len(res.Admissions) > 0 || len(res.Rejected) > 0 ||
		len(res.Preempted) > 0 || res.End > now {
		res.Changed = true
	}
	return res
}

func (k *Rank) scheduledOf(r *request.Request) *Scheduled {
	if r.PassMark != k.mark || int(r.PassSlot) >= len(k.res.Scheduled) || k.res.Scheduled[r.PassSlot].Req != r {
		return nil
	}
	return &k.res.Scheduled[r.PassSlot]
}

// time applies the fixed pass-timing rule (docs/model/pass.md ("Pass
// timing")): prefill time if any scheduled request does prefill work, decode
// time if any makes a pure decode step; a request that finishes its prefill
// emits its first token without decode time. A modelled timing goes to
// timeModelled.
func (k *Rank) time(now vtime.Time) {
	res := &k.res
	start := now
	if k.Host != nil {
		start = k.Host.ComputeStart(now)
	}
	res.ComputeStart = start
	if k.Cfg.Timing != nil {
		k.timeModelled(start)
		return
	}
	prefill, decode := false, false
	for _, s := range res.Scheduled {
		r := s.Req
		if s.Tokens >= 1 && (s.Before < r.PromptLen || s.Tokens > 1) {
			prefill = true
			res.PrefillTokens += int64(s.Tokens)
		} else if r.Computed == r.Len() && !k.generationComplete(r) {
			decode = true
		}
	}
	end := start
	if prefill && k.Cfg.Role != Decode {
		end += k.Cfg.PrefillMs
	}
	if decode && k.Cfg.Role != Prefill {
		end += k.Cfg.DecodeMs
	}
	res.End = end
}

// timeModelled is time with a modelled pass time
// (docs/model/timing.md ("The pass's work")): the same prefill work and
// decode steps, described to the model with each request's tokens; the
// requests that will emit a token form the polynomial's decode batch (only
// the polynomial reads it, so the step models skip asking a prefilling
// request whether it emits).
func (k *Rank) timeModelled(start vtime.Time) {
	res := &k.res
	b := &k.batch
	m := k.Cfg.Timing
	b.Reset(m.NeedsSteps())
	emitters := m.Kind == timing.Polynomial
	sched := res.Scheduled
	for i := range sched {
		s := &sched[i]
		r := s.Req
		if s.Tokens >= 1 && (s.Before < r.PromptLen || s.Tokens > 1) {
			res.PrefillTokens += int64(s.Tokens)
			b.Prefill(s.Before, s.Tokens, r.PromptLen)
			if emitters && r.Computed == r.Len() && !k.generationComplete(r) {
				b.Emit(r.Len())
			}
		} else if r.Computed == r.Len() && !k.generationComplete(r) {
			b.DecodeStep(s.Before)
			if emitters {
				b.Emit(r.Len())
			}
		}
	}
	d := m.Pass(b, k.Cfg.Role != Decode, k.Cfg.Role != Prefill)
	res.End = start + d.Prefill + d.Decode
	res.Bound = d.Bound
}

// emitTokens lets every running request whose known tokens all have KV
// produce one token at the pass end; requests that reach their output
// length (or the context limit) finish
// (docs/model/pass.md ("Emitting tokens and finishing")).
func (k *Rank) emitTokens() {
	res := &k.res
	kept := 0
	for i, r := range k.running {
		if r.Computed < r.Len() {
			k.keepRunning(i, &kept, r)
			continue
		}
		if !k.generationComplete(r) {
			if k.Cfg.Role == Prefill {
				// The prefill worker's one hidden token is never fed back
				// and never seen: it joins no sequence
				// (docs/model/pd.md ("Prefill side")).
				r.Output++
			} else {
				k.appendOutput(r)
			}
			pushReq(&res.Emitted, r)
		}
		if k.generationComplete(r) {
			k.finish(r, res.End)
			res.Finished = append(res.Finished, r)
			continue
		}
		k.keepRunning(i, &kept, r)
	}
	clear(k.running[kept:])
	k.running = k.running[:kept]
}

// keepRunning moves the running request at index i to index *kept, writing
// the pointer only when it moves (see pushReq).
func (k *Rank) keepRunning(i int, kept *int, r *request.Request) {
	if *kept != i {
		k.running[*kept] = r
	}
	*kept++
}

// pushReq appends r to a pass list that is reused from pass to pass. A
// pointer stored into the heap goes through the GC's write barrier while a
// collection is marking, which covers much of a run (the barrier cost 12 %
// of a §A (docs/model/cases.md) run natively and more under wasm, where the program has one
// thread). A pass mostly emits and schedules the same requests in the same
// order as the pass before, so the slot past the list's end usually holds r
// already and is then reused without a store. The list's pointer is kept by
// reslicing it in place, which the compiler stores without a barrier.
// Pointers left past a list's end keep nothing alive: every request stays in
// the engine's table for the whole run.
func pushReq(list *[]*request.Request, r *request.Request) {
	n := len(*list)
	if n == cap(*list) {
		*list = append(*list, r)
		return
	}
	*list = (*list)[:n+1]
	if (*list)[n] != r {
		(*list)[n] = r
	}
}

// pushScheduled is pushReq for a list of Scheduled.
func pushScheduled(list *[]Scheduled, s Scheduled) {
	n := len(*list)
	if n == cap(*list) {
		*list = append(*list, s)
		return
	}
	*list = (*list)[:n+1]
	d := &(*list)[n]
	if d.Req != s.Req {
		d.Req = s.Req
	}
	d.Before, d.Tokens, d.Admitted = s.Before, s.Tokens, s.Admitted
}

func (k *Rank) generationComplete(r *request.Request) bool {
	if r.Output >= r.MaxOutput {
		return true
	}
	return k.Cfg.ContextLength > 0 && r.Len() >= k.Cfg.ContextLength
}

// finish runs the finish hook and then releases the request's blocks, last
// block first (docs/model/pass.md ("Emitting tokens and finishing")).
func (k *Rank) finish(r *request.Request, at vtime.Time) {
	if k.Cfg.Role == Prefill {
		// Source hold: the blocks stay until the KV transfer ends; the
		// engine then calls ReleaseSource (the finish hook runs then, as item
		// 4 of docs/model/g2.md ("Differences from vLLM") says).
		r.Status = request.Finished
		k.emit(Event{Kind: EvFinish, Req: r, At: at})
		return
	}
	if k.Host != nil {
		k.Host.Finish(r, k.res.Start)
	}
	k.release(r)
	r.Status = request.Finished
	k.emit(Event{Kind: EvFinish, Req: r, At: at})
}

func (k *Rank) release(r *request.Request) {
	k.Pool.For(r.Index).ReleaseAll(r.Slots)
	r.Slots = r.Slots[:0]
}

// schedule gives r min(remaining, budget) tokens starting after cached
// tokens of reused prefix (waiting admissions) or its computed tokens
// (running requests), allocating G1 blocks and preempting the last running
// request while blocks are short.
func (k *Rank) schedule(r *request.Request, fromWaiting bool, cached int, budget *int, preempted *bool, now vtime.Time) outcome {
	bs := k.Cfg.BlockSize
	before := r.Computed + cached
	promptBefore := min(before, r.PromptLen)
	remaining := r.Len() - before
	if promptLeft := r.PromptLen - promptBefore; promptLeft > 0 && !k.Cfg.ChunkedPrefill && promptLeft > *budget {
		return blocked
	}
	n := min(remaining, *budget)
	if n == 0 && remaining > 0 && !(fromWaiting && k.Host == nil) {
		// Without G2 one waiting candidate is still admitted when the
		// budget is spent: it takes its cached blocks, becomes running
		// with nothing scheduled, and the waiting loop stops
		// (docs/model/pass.md ("Waiting loop")).
		return blocked
	}
	target := before + n
	// The multiplication spares most calls a division: a decode step
	// usually stays inside the last block (and under GOOS=js a signed
	// division is a runtime call).
	for target > len(r.Slots)*bs {
		need := (target+bs-1)/bs - len(r.Slots)
		start := len(r.Slots)
		slots, ok := k.Pool.For(r.Index).Alloc(need, r.Slots)
		if ok {
			r.Slots = slots
			if k.Host != nil {
				k.Host.FenceAllocation(r.Slots[start:], now)
			}
			break
		}
		if fromWaiting {
			// The admission test guarantees room; never preempt for a
			// waiting request.
			return blocked
		}
		victim := k.preemptLast(now)
		*preempted = true
		if victim == r {
			return currentPreempted
		}
	}
	// Blocks completed by this scheduling become cached at once, so a
	// request scheduled later in the same pass can hit them
	// (docs/model/g1.md ("Becoming cached")).
	if k.Cfg.PrefixCaching {
		from := before / bs
		to := from
		for (to+1)*bs <= target { // one division, not two (a runtime call under GOOS=js)
			to++
		}
		if from < to {
			k.Pool.FinalizeRun(r.Slots[from:to], r.Seq.IDs[from:to])
		}
	}
	r.Computed = target
	*budget -= n
	r.PassMark, r.PassSlot = k.mark, int32(len(k.res.Scheduled))
	pushScheduled(&k.res.Scheduled, Scheduled{Req: r, Before: before, Tokens: n, Admitted: fromWaiting})
	if !fromWaiting {
		k.noteStoreDue(r, before)
	}
	return scheduled
}

// noteStoreDue lists r for this pass's store hook when it has something to
// store. An admission asks only after the admission hook has moved the
// store cursor (docs/model/g2.md ("Store hook")): a readmitted request's
// cursor still stands where its preemption left it until then, and asking
// earlier skipped the stores its readmission pass owes.
func (k *Rank) noteStoreDue(r *request.Request, before int) {
	if k.Host != nil && k.Host.StoreDue(r, before, r.Computed) {
		pushScheduled(&k.storeDue, Scheduled{Req: r, Before: before})
	}
}

// preemptLast preempts the last running request (vLLM's LIFO recompute
// preemption, docs/model/pass.md ("Preemption")) and returns it.
func (k *Rank) preemptLast(now vtime.Time) *request.Request {
	v := k.running[len(k.running)-1]
	k.running[len(k.running)-1] = nil
	k.running = k.running[:len(k.running)-1]
	var fb, fa vtime.Time
	if k.Host != nil {
		fb = k.Host.ComputeStart(now)
		k.Host.Preempt(v, now)
		fa = k.Host.ComputeStart(now)
	}
	// Undo its work in this pass, if any.
	k.storeDue = slices.DeleteFunc(k.storeDue, func(s Scheduled) bool { return s.Req == v })
	for i, s := range k.res.Scheduled {
		if s.Req == v {
			k.res.Scheduled = append(k.res.Scheduled[:i], k.res.Scheduled[i+1:]...)
			for j := i; j < len(k.res.Scheduled); j++ {
				k.res.Scheduled[j].Req.PassSlot = int32(j)
			}
			break
		}
	}
	k.release(v)
	v.Computed = 0
	v.Preemptions++
	v.Status = request.Preempted
	k.waiting.pushFront(v)
	k.res.Preempted = append(k.res.Preempted, v)
	k.emit(Event{Kind: EvPreempt, Req: v, At: now, FenceBefore: fb, FenceAfter: fa})
	return v
}

// admitWaiting is the waiting loop of docs/model/pass.md ("Waiting loop").
func (k *Rank) admitWaiting(now vtime.Time, budget *int, preempted *bool) {
	bs := k.Cfg.BlockSize
	for len(k.running) < k.Cfg.MaxSequences && (k.Host == nil || *budget > 0) {
		r, fromConn := k.nextCandidate()
		if r == nil {
			return
		}
		if r.Materialized {
			// A P/D handoff owns its prompt KV already: no lookup, no
			// admission test (aisimulate's Materialized admission stage).
			if k.admitMaterialized(r, budget, preempted, now) != scheduled {
				return
			}
			continue
		}
		if k.Cfg.ContextLength > 0 && r.PromptLen >= k.Cfg.ContextLength {
			k.reject(r, fromConn, now, RejectContext)
			continue
		}
		if !k.Cfg.ChunkedPrefill && r.PromptLen > k.Cfg.MaxBatchedTokens {
			// Decision: without chunked prefill a prompt longer than the
			// token budget could never be scheduled and would block the
			// queue for good. vLLM refuses such a deployment at start-up
			// (max_num_batched_tokens must cover max_model_len), so the
			// nearest runnable vLLM rejects the prompt, as we do.
			k.reject(r, fromConn, now, RejectBudget)
			continue
		}
		known := r.Len() / bs
		hits, _ := k.Pool.Lookup(r.Seq.IDs[:known])
		ld := r.Host.Load
		frozen := ld != nil && ld.Done
		if frozen {
			// A consumed load fixes the cached prefix to exactly the loaded
			// prefix (docs/model/pass.md ("Waiting loop")).
			hits = ld.LoadedPrefix()
		}
		var hit []identity.ID
		g2Hit := false
		if k.Host != nil {
			res, h := k.Host.Lookup(r, hits, now)
			switch res {
			case connector.Defer:
				k.sleep(r, fromConn)
				continue
			case connector.Hit:
				hit, g2Hit = h, true
			}
		}
		// Admission test (docs/model/pass.md ("Admission test")).
		knownBlocks := r.KnownBlocks(bs)
		if knownBlocks > k.Cfg.Capacity {
			// A fresh request that cannot fit is rejected (vLLM). Decision:
			// so is a preempted one that has outgrown G1 while running: it
			// could never be admitted again and would block the queue.
			reason := RejectG1
			if r.Status != request.Waiting {
				reason = RejectOutgrewG1
			}
			k.reject(r, fromConn, now, reason)
			continue
		}
		capped := min(hits, (r.Len()-1)/bs)
		active := 0
		reserved := 0
		if frozen {
			active, reserved = capped, ld.LoadedPrefix()
		} else {
			for _, id := range r.Seq.IDs[:capped] {
				if !k.Pool.IsIdle(k.Pool.Copy(id)) {
					active++
				}
			}
		}
		needed := knownBlocks - max(active, reserved)
		headroom := 0
		if g2Hit {
			headroom = k.headroom()
		}
		available := k.Pool.Capacity() - k.Pool.NumInUse() - headroom
		if needed > available {
			k.emit(Event{Kind: EvAdmissionWait, Req: r, At: now, Needed: needed, Available: available, Headroom: headroom})
			return
		}
		if g2Hit {
			switch k.Host.StartLoad(r, hit, hits, now) {
			case connector.Queued, connector.Deferred:
				k.sleep(r, fromConn)
				continue
			case connector.CapacityBlocked:
				return
			}
		}
		if k.admit(r, fromConn, capped, frozen, budget, preempted, now) != scheduled {
			return
		}
		if last := k.res.Scheduled[len(k.res.Scheduled)-1]; last.Tokens == 0 && *budget == 0 {
			return // the one candidate admitted on a spent budget
		}
	}
}

// admitMaterialized admits a P/D handoff whose blocks the engine already
// placed in r.Slots with r.Computed = prompt length.
func (k *Rank) admitMaterialized(r *request.Request, budget *int, preempted *bool, now vtime.Time) outcome {
	out := k.schedule(r, true, 0, budget, preempted, now)
	if out != scheduled {
		return out
	}
	k.waiting.popFront()
	readmission := r.Admissions > 0
	r.Admissions++
	r.Status = request.Running
	r.Materialized = false
	k.running = append(k.running, r)
	a := Admission{Req: r, At: now, Reused: r.Computed, G1: r.Computed, Readmission: readmission, First: !readmission}
	if k.Host != nil {
		a.HasHost = true
		a.G1, a.Host, _ = k.Host.Admitted(r, 0)
		k.noteStoreDue(r, k.res.Scheduled[len(k.res.Scheduled)-1].Before)
	}
	k.res.Admissions = append(k.res.Admissions, a)
	k.emit(Event{Kind: EvAdmit, Req: r, At: now, Reused: r.Computed, G1: a.G1, Host: a.Host, Readmission: readmission, Handoff: true})
	return scheduled
}

// headroom is the G1 capacity promised to others that a G2-hit candidate
// must leave alone: the blocks running chunked prefills still need, and for
// every load queued or completed-not-admitted its footprint beyond the
// loaded prefix (docs/model/pass.md ("Admission test")).
func (k *Rank) headroom() int {
	bs := k.Cfg.BlockSize
	h := 0
	for _, r := range k.running {
		if r.Computed < r.PromptLen {
			h += r.KnownBlocks(bs) - len(r.Slots)
		}
	}
	for _, r := range k.connWaiting {
		if ld := r.Host.Load; ld != nil {
			h += max(0, ld.Footprint-ld.LoadedPrefix())
		}
	}
	return h
}

// admit builds r's block table from its cached prefix and schedules it.
func (k *Rank) admit(r *request.Request, fromConn bool, capped int, frozen bool, budget *int, preempted *bool, now vtime.Time) outcome {
	bs := k.Cfg.BlockSize
	r.Slots = r.Slots[:0]
	k.Pool.For(r.Index)
	if frozen {
		ld := r.Host.Load
		for _, s := range ld.PrefixSlots {
			k.Pool.Ref(s)
			k.Pool.Unpin(s)
		}
		r.Slots = append(r.Slots, ld.PrefixSlots...)
		r.Slots = append(r.Slots, ld.DestSlots...)
	} else {
		for _, id := range r.Seq.IDs[:capped] {
			r.Slots = append(r.Slots, k.Pool.Reference(id))
		}
	}
	cached := capped * bs
	out := k.schedule(r, true, cached, budget, preempted, now)
	if out != scheduled {
		// Unreachable while the admission test holds; undo the prefix.
		k.release(r)
		return out
	}
	k.dequeue(r, fromConn)
	readmission := r.Admissions > 0
	r.Admissions++
	r.Status = request.Running
	k.running = append(k.running, r)
	a := Admission{Req: r, At: now, Reused: cached, G1: cached, Readmission: readmission}
	if k.Host != nil {
		a.HasHost = true
		a.G1, a.Host, a.First = k.Host.Admitted(r, cached)
		k.noteStoreDue(r, cached)
	} else {
		a.First = !readmission
	}
	k.res.Admissions = append(k.res.Admissions, a)
	k.emit(Event{Kind: EvAdmit, Req: r, At: now, Reused: cached, G1: a.G1, Host: a.Host, Readmission: readmission})
	return scheduled
}

// nextCandidate picks the waiting loop's head: on a decode rank the first
// materialized handoff, then the first awake connector waiter whose load
// has completed, then the first other awake connector waiter, else the head
// of the waiting queue.
//
// Decision (docs/model/pass.md ("Choosing the next candidate"); aisimulate
// puts materialized handoffs first only on decode ranks with G2): every decode
// rank does. A handoff holds its prompt's blocks; a preempted request put back
// at the queue's front that needs those blocks stopped the loop in front of
// the handoffs that could free them, and the replay stalled (10 of 115 random
// P/D worlds in TestRandomWorldsRunClean). No acceptance figure changes.
//
// Decision (docs/model/pass.md ("Choosing the next candidate"); vLLM and
// aisimulate try ready connector waiters in FIFO order only): a completed load
// goes first because it holds G1 reservations, and the admission test's
// headroom promises its footprint to it. An earlier waiter that the admission
// check turns away for want of exactly that capacity would otherwise stop the
// loop in front of the one request that can release it, pass after pass, with
// nothing running: the replay stalled in 5 of 3,000 random worlds
// (TestRandomWorldsRunClean) and none of 20,000 with this order. aisimulate's
// core.rs tries waiters in plain FIFO order and would end such a run with its
// "dead end" replay error; only with G3 does it put a waiter holding a G1
// reservation first (its g1_owner rule), which this order generalises. Every
// acceptance figure and the passes.jsonl of the benchmark runs are unchanged
// by it.
func (k *Rank) nextCandidate() (*request.Request, bool) {
	if k.Cfg.Role == Decode {
		for i := 0; i < k.waiting.len(); i++ {
			if r := k.waiting.at(i); r.Materialized {
				if i > 0 {
					k.waiting.remove(i)
					k.waiting.pushFront(r)
				}
				return r, false
			}
		}
	}
	if k.awake > 0 {
		for _, r := range k.connWaiting {
			if !k.Cfg.FIFOWaiters && !r.Asleep && r.Host.Load != nil && r.Host.Load.Done {
				return r, true
			}
		}
		for _, r := range k.connWaiting {
			if !r.Asleep {
				return r, true
			}
		}
	}
	return k.waiting.front(), false
}

// sleep makes r a sleeping connector waiter, keeping its FIFO place if it
// already was one.
func (k *Rank) sleep(r *request.Request, fromConn bool) {
	if !fromConn {
		k.waiting.popFront()
		k.connWaiting = append(k.connWaiting, r)
	} else {
		k.awake--
	}
	r.Asleep = true
	k.res.Changed = true
}

func (k *Rank) dequeue(r *request.Request, fromConn bool) {
	if !fromConn {
		k.waiting.popFront()
		return
	}
	for i, x := range k.connWaiting {
		if x == r {
			k.connWaiting = append(k.connWaiting[:i], k.connWaiting[i+1:]...)
			break
		}
	}
	if !r.Asleep {
		k.awake--
	}
	r.Asleep = false
}

func (k *Rank) reject(r *request.Request, fromConn bool, now vtime.Time, reason string) {
	k.dequeue(r, fromConn)
	if k.Host != nil {
		k.Host.Cancel(r, now)
	}
	k.release(r)
	r.Status = request.Rejected
	k.res.Rejected = append(k.res.Rejected, r)
	k.emit(Event{Kind: EvReject, Req: r, At: now, Reason: reason})
}

// appendCheap is appendOutput for the common case of a decode step, a
// fresh token that completes no block, and reports whether r's token was
// that (else nothing changed). It inlines.
func (k *Rank) appendCheap(r *request.Request) bool {
	if r.OutputIDs != nil || !r.Seq.AppendCheap(k.tokens.Next, k.Cfg.BlockSize, true) {
		return false
	}
	k.tokens.Next++
	r.Known++
	r.Output++
	return true
}

// appendOutput gives r its next generated token (the trace's planned id,
// else a fresh one: Generated): one more known token and output, and the
// sequence's blocks it completes.
func (k *Rank) appendOutput(r *request.Request) {
	o := r.Output
	r.Known++
	r.Output++
	var x uint32
	fresh := r.OutputIDs == nil
	if fresh {
		x = k.tokens.Next
		k.tokens.Next++
	} else {
		x = r.OutputIDs[o]
	}
	switch {
	case r.Seq.AppendCheap(x, k.Cfg.BlockSize, fresh):
	case fresh:
		r.Seq.AppendFresh(k.ids, x, k.Cfg.BlockSize, r.Index)
	default:
		r.Seq.AppendToken(k.ids, x, k.Cfg.BlockSize, r.Index)
	}
}
