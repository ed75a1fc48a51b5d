package connector

import (
	"github.com/kvsim/kvsim/core/identity"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/vtime"
)

// EventKind names what happened (docs/model/record.md ("Event kinds")).
type EventKind uint8

const (
	EvLookup        EventKind = iota // a G2 lookup at waiting admission
	EvStorePrepared                  // a store's entries became pending
	EvStoreCursor                    // a request's store cursor moved
	EvSubmit                         // a copy entered its lane or pool
	EvComplete                       // a copy completed physically
	EvFence                          // compute start is held back
	EvHoldRelease                    // held G1 sources were released
	EvStartLoad                      // the start_load hook answered (Start, Reason)
	EvStoreRetry                     // a whole-range store did not fit; the cursor stays
)

// An Event is one connector happening, for the per-pass record.
type Event struct {
	Kind     EventKind
	Req      *request.Request
	Transfer *Transfer
	At       vtime.Time
	Result   LookupResult
	G1Hits   int
	Keys     []identity.ID
	Before   int
	After    int
	Reason   string
	Until    vtime.Time
	// Loaded marks a lookup event of a request whose completed G2 load is
	// consumed: no lookup is made (Result is Miss).
	Loaded bool
	// Start is a start_load event's answer.
	Start StartResult
	// A store retry's range is blocks [Before, After); Missing of them are
	// absent from G2, which has Room for that many new entries (free
	// entries and evictable ones).
	Missing, Room int
}

// Observer receives connector events.
type Observer interface {
	ConnectorEvent(ev Event)
}
