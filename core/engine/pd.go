package engine

import (
	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/vtime"
)

// P/D disaggregation (docs/model/pd.md): a request prefills on a prefill
// rank with one hidden token, keeps its blocks there (source hold) while a
// decode rank reserves room for its prompt (reusing any resident prefix),
// the KV moves, the source is freed and the decode rank admits the request
// as materialized, without prefill work, and emits every visible token.

type handoff struct {
	at  vtime.Time
	seq int64
	src *request.Request // prefill side
	dst *request.Request // decode side
	sr  *Rank
	dr  *Rank
	hit int // blocks reused on the decode rank
}

// KV transfers are ordered by completion, then start order.
func (a handoff) before(b handoff) bool {
	return a.at < b.at || (a.at.Same(b.at) && a.seq < b.seq)
}

// sourceHeld handles a prefill that completed at t: the decode side is
// placed and asks for a reservation.
func (e *Engine) sourceHeld(src *Rank, r *request.Request, t vtime.Time) {
	rec := &e.Records[r.Index]
	rec.SourceHeldMs = t
	dr, h := e.decodePlace.route(r, "decode")
	d := &e.reqsD[r.Index]
	*d = request.Request{Index: r.Index, Session: r.Session, Turn: r.Turn, Known: r.PromptLen,
		Seq: r.Seq, PromptLen: r.PromptLen, MaxOutput: e.wl.Sessions[r.Session].Turns[r.Turn].OutputLength,
		OutputIDs: r.OutputIDs, Order: dr.NextOrder(), Slots: d.Slots[:0]}
	e.srcRank[r.Index] = src
	rec.DecodeWorker = int(h.Worker)
	rec.Routing = append(rec.Routing, h)
	e.pending[dr.Index] = append(e.pending[dr.Index], d)
	e.tryReservations(dr, t)
}

// tryReservations reserves decode room for pending destinations of rk in
// arrival order while rk runs fewer than max_sequences requests; the first
// that does not fit waits for capacity to free. Every decode rank of a group
// retries at the group's pass end (completePass), planned or not, and, with
// G2, when copies finish while its worker is idle (tickIdle): a finished
// store releases the G1 blocks it held or fenced. Decision
// (docs/model/pd.md ("Retrying reservations"); aisimulate retries at pass
// ends, finishes and cancellations only): without those retries a reservation
// refused against held blocks waited forever on a decode rank that had nothing
// else to do.
func (e *Engine) tryReservations(rk *Rank, t vtime.Time) {
	q := e.pending[rk.Index]
	for len(q) > 0 && len(rk.Running()) < rk.Cfg.MaxSequences {
		d := q[0]
		hit, ok, reject := e.reserve(rk, d)
		if reject {
			q = q[1:]
			rec := &e.Records[d.Index]
			rec.Status = report.StatusRejected
			rec.TerminalMs = t
			src := e.srcRank[d.Index]
			src.ReleaseSource(&e.reqs[d.Index], t)
			e.workers[src.Worker].poked = true
			e.turnDone(d, t, false)
			continue
		}
		if !ok {
			break
		}
		q = q[1:]
		rec := &e.Records[d.Index]
		rec.DestinationReservedMs = t
		rec.DecodeReused = hit * rk.Cfg.BlockSize
		kt := e.cfg.Engine.KVTransfer
		tokens := d.PromptLen
		if kt.TimingMode != config.TransferFullPrompt {
			tokens = (len(d.Slots) - hit) * rk.Cfg.BlockSize
		}
		var dur vtime.Time
		if kt.BandwidthGBps > 0 {
			dur = vtime.Time(float64(tokens) * float64(kt.BytesPerToken) / (kt.BandwidthGBps * 1e6))
		}
		e.handoffSeq++
		e.handoffs.push(handoff{at: t + dur, seq: e.handoffSeq, src: &e.reqs[d.Index], dst: d,
			sr: e.srcRank[d.Index], dr: rk, hit: hit})
	}
	e.pending[rk.Index] = q
}

// reserve tries to reserve rk's G1 for d's prompt: resident full prefix
// blocks are pinned, the rest fresh, never taking capacity a store still
// reads (docs/model/pd.md ("Decode ranks with G2")).
func (e *Engine) reserve(rk *Rank, d *request.Request) (hit int, ok, reject bool) {
	bs := rk.Cfg.BlockSize
	total := (d.PromptLen + bs - 1) / bs
	if total > rk.Pool.Capacity() {
		return 0, false, true // "destination prompt exceeds the KV pool capacity"
	}
	p := rk.Pool.For(d.Index)
	if rk.Cfg.PrefixCaching {
		hit, _ = p.Lookup(d.Seq.IDs[:d.PromptLen/bs])
	}
	slots := d.Slots[:0]
	for j := 0; j < hit; j++ {
		s := p.Copy(d.Seq.IDs[j])
		p.Pin(s)
		slots = append(slots, s)
	}
	avoid := func(s int32) bool { return false }
	if rk.Host != nil {
		avoid = func(s int32) bool { return p.Dep(s) != 0 }
	}
	start := len(slots)
	slots, ok = p.AllocAvoiding(total-hit, slots, avoid)
	if !ok {
		for j := hit - 1; j >= 0; j-- {
			p.Unpin(slots[j])
		}
		return 0, false, false
	}
	p.MarkReserved(slots[start:])
	d.Slots = slots
	return hit, true, false
}

// completeHandoff ends a KV transfer: the prefill rank frees the source (its
// finish hook runs now) and the decode rank queues the request as
// materialized, its prompt blocks cached.
func (e *Engine) completeHandoff(h handoff, t vtime.Time) {
	rec := &e.Records[h.dst.Index]
	h.sr.ReleaseSource(h.src, t)
	e.workers[h.sr.Worker].poked = true
	rec.SourceReleasedMs = t
	e.srcRank[h.dst.Index] = nil

	d, rk := h.dst, h.dr
	p := rk.Pool.For(d.Index)
	bs := rk.Cfg.BlockSize
	full := d.PromptLen / bs
	for j, s := range d.Slots {
		switch {
		case j < h.hit:
			p.Ref(s)
			p.Unpin(s)
		case j < full && rk.Cfg.PrefixCaching:
			p.Finalize(s, d.Seq.IDs[j])
		default:
			p.Claim(s)
		}
	}
	d.Computed = d.PromptLen
	if rec.Status == report.StatusCanceled {
		// Canceled during the transfer: the KV arrived, the request is
		// dropped; its blocks are released last first (the prompt stays
		// cached).
		p.For(d.Index)
		for j := len(d.Slots) - 1; j >= 0; j-- {
			p.Release(d.Slots[j])
		}
		d.Slots = d.Slots[:0]
		e.workers[rk.Worker].poked = true
		return
	}
	rk.EnqueueMaterialized(d)
	rec.DestinationActivatedMs = t
	e.workers[rk.Worker].poked = true
	if !rec.DispatchedMs.IsSet() {
		rec.DispatchedMs = t
	}
}
