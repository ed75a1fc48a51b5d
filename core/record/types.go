// Package record owns the per-pass block-state record: what every G1 slot
// and G2 entry held at every pass of every DP rank, and what happened in
// that pass (docs/model/record.md). The engine feeds a Recorder at every state
// change; the Recorder stores a delta log with periodic checkpoints, so the
// state at any pass is rebuilt quickly without storing a snapshot per pass.
// passes.jsonl (Record.WriteJSONL) is its exported form and Decode reads it
// back, so the CLI's inspect/diff and the browser app share one
// reconstruction.
package record

import "github.com/kvsim/kvsim/core/vtime"

// Slot states, one character each in passes.jsonl and `kvsim inspect`.
const (
	SlotFree     byte = '.' // unoccupied
	SlotPrivate  byte = 'p' // owned by one request, no identity yet
	SlotActive   byte = 'A' // cached and in use by a request
	SlotIdle     byte = 'i' // cached and idle: in the eviction queue
	SlotHeld     byte = 'h' // cached, kept only by a store still copying it
	SlotReserved byte = 'r' // reserved as a load destination, or pinned for a load
)

// G2 entry states.
const (
	EntryPending  byte = 'P' // a store is in flight
	EntryResident byte = 'R' // resident and evictable
	EntryPinned   byte = 'N' // resident and pinned by a load or lookup
)

// A Block is a block identity named for people: the request and block
// index where it was first computed (docs/model/record.md ("Names")).
type Block struct {
	Name    string // e.g. "s3t2#17"
	Request string // "s3t2"
	Index   int    // 17
	Session string // "s3"
}

// RankID names one DP rank of one worker.
type RankID struct {
	Worker, Rank int
	Role         string // "aggregated", "prefill", "decode"
}

// Slot is one G1 slot's state at a pass end.
type Slot struct {
	State byte
	Block int32 // index into Record.Blocks, -1 when none
	// Owner is the request (index into Record.Requests) a private or
	// reserved slot belongs to, or one request using an active copy; -1.
	Owner int32
	// QueuePos is the position in the eviction queue (0 = next victim) of
	// an idle copy, -1 otherwise.
	QueuePos int32
	// Since is the pass in which the slot entered its current state and
	// block (its age is the current pass minus Since).
	Since int32
}

// Entry is one G2 entry's state at a pass end.
type Entry struct {
	Block int32
	State byte
	// Order is the eviction rank among evictable entries (0 = next victim),
	// -1 for entries that cannot be evicted now.
	Order int32
}

// Scheduled is one request's work in a pass.
type Scheduled struct {
	Request string `json:"request"`
	Tokens  int    `json:"tokens"`
	Prefill int    `json:"prefill"` // prompt tokens among Tokens
}

// Event is one happening inside a pass (docs/model/record.md ("Event kinds")).
// Only the fields its kind uses are set.
type Event struct {
	Kind       string      `json:"kind"`
	Request    string      `json:"request,omitempty"`
	Block      string      `json:"block,omitempty"`
	Blocks     []string    `json:"blocks,omitempty"`
	Indices    []int       `json:"indices,omitempty"`
	Slot       *int        `json:"slot,omitempty"`
	Transfer   int         `json:"transfer,omitempty"`
	AtMs       *vtime.Time `json:"at_ms,omitempty"`
	DeadlineMs *vtime.Time `json:"deadline_ms,omitempty"`
	UntilMs    *vtime.Time `json:"until_ms,omitempty"`
	Result     string      `json:"result,omitempty"`
	G1Hits     *int        `json:"g1_hit_blocks,omitempty"`
	Reused     *int        `json:"reused,omitempty"`
	G1         *int        `json:"g1,omitempty"`
	Host       *int        `json:"host,omitempty"`
	Cursor     *int        `json:"cursor,omitempty"`
	Before     *int        `json:"before,omitempty"`
	After      *int        `json:"after,omitempty"`
	Readmit    *bool       `json:"readmission,omitempty"`
	AtFinish   *bool       `json:"at_finish,omitempty"`
	FenceFrom  *vtime.Time `json:"fence_before_ms,omitempty"`
	FenceTo    *vtime.Time `json:"fence_after_ms,omitempty"`
	Reason     string      `json:"reason,omitempty"`
	Handoff    *bool       `json:"handoff,omitempty"`
	// admission_wait: blocks needed and available, and what holds G1's
	// blocks in use: headroom promised to loads and chunked prefills (a
	// G2-hit candidate must leave it), blocks in use by requests
	// (referenced or private), reserved or pinned for loads, held for
	// copies.
	Needed    *int `json:"needed,omitempty"`
	Available *int `json:"available,omitempty"`
	Headroom  *int `json:"headroom,omitempty"`
	InUse     *int `json:"in_use,omitempty"`
	Reserved  *int `json:"reserved,omitempty"`
	Held      *int `json:"held,omitempty"`
	// store_retry: the block range [from, to) the store asked for, how
	// many of them G2 lacks, and G2's room (free and evictable entries).
	From    *int `json:"from,omitempty"`
	To      *int `json:"to,omitempty"`
	Missing *int `json:"missing,omitempty"`
	Room    *int `json:"room,omitempty"`
}

// PassInfo describes one pass of one rank. Pass counts from 1 per rank.
type PassInfo struct {
	Pass           int
	Rank           RankID
	StartMs        vtime.Time
	ComputeStartMs vtime.Time
	EndMs          vtime.Time
	// Bound is what limited a roofline or trained_physics pass ("compute"
	// or "memory"; "" otherwise).
	Bound     string
	Scheduled []Scheduled
	// Final marks the extra line that carries changes after the rank's
	// last pass (transfers that complete while the rank idles to the end).
	Final bool
}

// Snapshot is a rank's state at the end of one pass (after the boundary),
// with that pass's events.
type Snapshot struct {
	Info   PassInfo
	G1     []Slot
	G2     []Entry // the rank's G2 domain (shared pools: the pool), in eviction order first
	Events []Event
}
