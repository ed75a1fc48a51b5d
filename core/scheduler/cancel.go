package scheduler

import (
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/vtime"
)

// Cancel aborts r on this rank (a client cancellation,
// docs/model/agentic.md ("Cancellation")): r leaves the waiting queue, the
// connector-waiter FIFO or the running list; its G2 load, queued or in
// flight, is dropped with its pins, loading marks and reserved slots
// (connector.Adapter.Cancel, which then runs the finish hook); its G1
// blocks are released last block first. It reports whether r was on the
// rank. It must not be called while the rank's pass is in flight.
func (k *Rank) Cancel(r *request.Request, now vtime.Time) bool {
	switch {
	case k.removeWaiting(r):
	case k.removeConnWaiting(r):
	case k.removeRunning(r):
	default:
		return false
	}
	k.runningChanged()
	if k.Host != nil {
		k.Host.Cancel(r, now)
	}
	k.release(r)
	r.Status = request.Canceled
	r.Asleep = false
	k.emit(Event{Kind: EvCancel, Req: r, At: now})
	return true
}

func (k *Rank) removeWaiting(r *request.Request) bool {
	for i := 0; i < k.waiting.len(); i++ {
		if k.waiting.at(i) == r {
			k.waiting.remove(i)
			return true
		}
	}
	return false
}

func (k *Rank) removeConnWaiting(r *request.Request) bool {
	for _, x := range k.connWaiting {
		if x == r {
			k.dequeue(r, true)
			return true
		}
	}
	return false
}

func (k *Rank) removeRunning(r *request.Request) bool {
	for i, x := range k.running {
		if x == r {
			k.running = append(k.running[:i], k.running[i+1:]...)
			return true
		}
	}
	return false
}
