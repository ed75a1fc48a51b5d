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
}

// Observer receives connector events.
type Observer interface {
	ConnectorEvent(ev Event)
}
