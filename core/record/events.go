package record

import (
	"math"

	"github.com/kvsim/kvsim/core/connector"
	"github.com/kvsim/kvsim/core/scheduler"

	"github.com/kvsim/kvsim/core/vtime"
)

// Event kinds (docs/model/record.md ("Event kinds")).
const (
	evLookup uint8 = iota
	evAdmit
	evPreempt
	evFinish
	evReject
	evG1Evict
	evStorePrepared
	evStoreCursor
	evD2HSubmit
	evH2DSubmit
	evD2HComplete
	evH2DComplete
	evG2Evict
	evFence
	evHoldRelease
	evAdmissionWait
	evStartLoad
	evStoreRetry
)

var kindNames = [...]string{"lookup", "admit", "preempt", "finish", "reject", "g1_evict", "store_prepared",
	"store_cursor", "d2h_submit", "h2d_submit", "d2h_complete", "h2d_complete", "g2_evict", "fence", "hold_release",
	"admission_wait", "start_load", "store_retry"}

func kindOf(name string) (uint8, bool) {
	for i, n := range kindNames {
		if n == name {
			return uint8(i), true
		}
	}
	return 0, false
}

// rawEvent is an event as stored: small and pointer-light, turned into an
// Event only when someone looks.
type rawEvent struct {
	kind   uint8 // kindDecoded set: a decoded event, Record.pub[a]
	flag   bool
	reason uint8 // index into reasons
	req    int32
	// a–d mean what each kind says: lookup a hits, b result, c/d its
	// blocks in Record.arena; admit a–d; transfer kinds a the transfer,
	// c/d a submit's deadline (t2); preempt c/d its second time (t2);
	// evictions a the block, b the slot; admission_wait a needed, b
	// available, c/d its holders in the arena (headroom, in use by
	// requests, reserved, held); start_load a the transfer (queued), b the
	// result, c/d its blocks; store_retry a–d from, to, missing, room.
	// An admit's reason is 1 for a P/D handoff.
	a, b, c, d int32
	t1         vtime.Time
}

// kindDecoded marks an event read back from passes.jsonl, kept as it was
// decoded. With a–d shared between kinds an event is 32 bytes: G1
// evictions alone are millions per large run.
const kindDecoded = 0x80

func (e *rawEvent) t2() vtime.Time {
	return vtime.Time(math.Float64frombits(uint64(uint32(e.c)) | uint64(uint32(e.d))<<32))
}

func (e *rawEvent) setT2(v vtime.Time) {
	b := math.Float64bits(float64(v))
	e.c, e.d = int32(uint32(b)), int32(uint32(b>>32))
}

// reasons are the strings events carry (rejections, fences, loads that did
// not start). The list is fixed: recorders of parallel runs share it.
var reasons = [...]string{"", scheduler.RejectContext, scheduler.RejectG1, connector.FenceStoreSource, connector.FencePreempt,
	scheduler.RejectOutgrewG1, scheduler.RejectBudget, connector.ReasonLoading, connector.ReasonG1Blocks, scheduler.CancelClient}

// reasonOther stands for a reason missing from the list (none: the list
// names every reason the scheduler and the connector give).
const reasonOther = 255

func reasonCode(s string) uint8 {
	for i, r := range reasons {
		if r == s {
			return uint8(i)
		}
	}
	return reasonOther
}

func reasonText(c uint8) string {
	if int(c) < len(reasons) {
		return reasons[c]
	}
	return "unknown"
}

// loadResults are start_load's answers in rawEvent.b.
var loadResults = [...]string{"queued", "deferred", "blocked"}

// Lookup results in rawEvent.b ("loaded": the request's completed G2 load
// is consumed; no lookup is made).
var results = [...]string{"miss", "hit", "defer", "loaded"}

func (r *Record) events(rank, pass int) []Event {
	rl := r.ranks[rank]
	from, to := rl.eventSpan(pass)
	out := make([]Event, 0, to-from)
	for i := from; i < to; i++ {
		e := rl.events.at(i)
		out = append(out, r.event(&e))
	}
	return out
}

func ip(v int32) *int             { x := int(v); return &x }
func tp(v vtime.Time) *vtime.Time { return &v }
func bp(v bool) *bool             { return &v }

func (r *Record) arenaNames(off, n int32) []string {
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.BlockName(r.arena.at(int(off) + i))
	}
	return out
}

func (r *Record) names32(bs []int32) []string {
	if len(bs) == 0 {
		return nil
	}
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = r.BlockName(b)
	}
	return out
}

func (r *Record) event(e *rawEvent) Event {
	if e.kind&kindDecoded != 0 {
		return r.pub[e.a]
	}
	ev := Event{Kind: kindNames[e.kind], Request: r.Request(e.req)}
	switch e.kind {
	case evLookup:
		ev.G1Hits, ev.Result, ev.Blocks = ip(e.a), results[e.b], r.arenaNames(e.c, e.d)
	case evAdmit:
		ev.Reused, ev.G1, ev.Host, ev.Cursor, ev.Readmit = ip(e.a), ip(e.b), ip(e.c), ip(e.d), bp(e.flag)
		if e.reason == 1 {
			ev.Handoff = bp(true)
		}
	case evAdmissionWait:
		ev.Needed, ev.Available = ip(e.a), ip(e.b)
		ev.Headroom, ev.InUse = ip(r.arena.at(int(e.c))), ip(r.arena.at(int(e.c)+1))
		ev.Reserved, ev.Held = ip(r.arena.at(int(e.c)+2)), ip(r.arena.at(int(e.c)+3))
	case evStartLoad:
		ev.Result, ev.Blocks, ev.Reason = loadResults[e.b], r.arenaNames(e.c, e.d), reasonText(e.reason)
		ev.Transfer = int(e.a)
	case evStoreRetry:
		ev.From, ev.To, ev.Missing, ev.Room = ip(e.a), ip(e.b), ip(e.c), ip(e.d)
	case evPreempt:
		ev.FenceFrom, ev.FenceTo = tp(e.t1), tp(e.t2())
	case evReject:
		ev.Reason = reasonText(e.reason)
	case evG1Evict:
		ev.Block, ev.Slot = r.BlockName(e.a), ip(e.b)
	case evStorePrepared:
		tr := r.trs[e.a]
		ev.Transfer, ev.Blocks, ev.AtFinish = int(e.a), r.names32(tr.blocks), bp(e.flag)
		for _, x := range tr.indices {
			ev.Indices = append(ev.Indices, int(x))
		}
	case evStoreCursor:
		ev.Before, ev.After = ip(e.a), ip(e.b)
	case evD2HSubmit, evH2DSubmit:
		ev.Transfer, ev.Blocks, ev.AtMs = int(e.a), r.names32(r.trs[e.a].blocks), tp(e.t1)
		ev.Request = r.Request(r.trs[e.a].req)
		if e.flag {
			ev.DeadlineMs = tp(e.t2())
		}
	case evD2HComplete, evH2DComplete, evHoldRelease:
		ev.Transfer, ev.Blocks, ev.AtMs = int(e.a), r.names32(r.trs[e.a].blocks), tp(e.t1)
		ev.Request = r.Request(r.trs[e.a].req)
	case evG2Evict:
		ev.Block = r.BlockName(e.a)
	case evFence:
		ev.Reason, ev.UntilMs = reasonText(e.reason), tp(e.t1)
	}
	return ev
}
