package trace

import "github.com/kvsim/kvsim/core/vtime"

// A Workload is the request population of one run: sessions in file (or
// generation) order, each an ordered list of turns. It is immutable once
// built and may be reused across runs.
type Workload struct {
	// Agentic is true for agentic_mooncake: each Session is one play (a
	// connected dependency graph of requests), and a turn becomes ready when
	// every turn in its Deps has completed, plus DelayMs and ToolWaitMs; a
	// turn without Deps (a root) is ready at its own ArrivalMs.
	Agentic bool
	// Accumulate is true for mooncake-delta and synthetic-session: a turn's
	// prompt is the previous prompt + the previous turn's output + this
	// turn's own content. Otherwise each turn's content is its whole prompt.
	Accumulate bool
	Sessions   []Session
	// NumContentIDs is one more than the largest token id used by any
	// turn's content (interned hash ids and synthetic fresh ids). Output
	// token ids chosen by the engine start at or above GeneratedTokenBase,
	// which is always larger.
	NumContentIDs uint32
	// HasTimestamps tells whether any first turn (agentic: any root)
	// carried a timestamp (informational; arrivals are already normalised).
	HasTimestamps bool
	Rows          int // number of turns in all sessions
	// BlockSize is the block size a weka corpus embeds (0 for other formats).
	BlockSize int
	// NestedTimestampBasis is the weka basis used for subagent requests
	// (absolute, relative or not_applicable; "" for other formats).
	NestedTimestampBasis string
}

// GeneratedTokenBase is the first token id the engine may use for
// generated output tokens; content ids stay below it.
const GeneratedTokenBase uint32 = 1 << 31

// A Session is one conversation: at most one of its turns is in flight.
// In an agentic workload it is one play instead, whose turns run as their
// dependencies allow (several may be in flight).
type Session struct {
	ID string
	// ArrivalMs is the first turn's arrival for open-loop / trace_timestamps
	// load, normalised so the earliest session starts at 0 (before speedup).
	// For a play it is the earliest ArrivalMs of its roots.
	ArrivalMs vtime.Time
	Turns     []Turn
	// Edges, when not nil (weka), gives each turn's Deps their own trigger
	// and delay (Edges[t][j] for Turns[t].Deps[j]); DelayMs and ToolWaitMs
	// are then 0. When nil, every dependency triggers on completion and the
	// wait is DelayMs + ToolWaitMs after the last of them. (Kept out of Turn,
	// whose size the memory estimate counts per request.)
	Edges [][]Edge
	// APIMs, when not nil (weka), is each turn's recorded service time
	// (api_time): its recorded interval is [ArrivalMs, ArrivalMs+APIMs].
	APIMs []vtime.Time
	// Conv, when not nil (weka), is each turn's conversation (its stream)
	// within the play; nil means the play is one conversation.
	Conv []int32
}

// A Turn is one request's worth of input.
type Turn struct {
	RequestID string // as in the trace; "" means the engine derives one
	// Content is this turn's own tokens, run-length encoded: each id stands
	// for RunLength consecutive copies of that token id; the expansion is
	// truncated to ContentLength tokens. (For mooncake rows, the ids are the
	// interned hash ids and RunLength the trace block size.)
	Content       []uint32
	RunLength     int
	ContentLength int
	OutputLength  int
	// OutputTokens are explicit output token ids (len == OutputLength) or nil.
	OutputTokens []uint32
	// DelayMs is the wait after the previous turn completes (0 for turn 0);
	// for agentic turns, the wait after the last of Deps completes.
	DelayMs vtime.Time
	// Deps are the indices (in the same Session) of the turns an agentic
	// turn waits for; nil for roots and for non-agentic workloads.
	Deps []int32
	// ToolWaitMs is extra agentic wait (tool execution) added to DelayMs.
	ToolWaitMs vtime.Time
	// ArrivalMs is an agentic root's arrival, normalised like sessions'
	// (the earliest root of the file is at 0). For any other agentic turn
	// it is a not-before gate from the play's start (weka: its recorded
	// start; agentic_mooncake: 0); 0 for non-agentic turns.
	ArrivalMs vtime.Time
	// Line is the 1-based line of the trace row (0 for generated turns).
	Line int
}

// An Edge says when one dependency releases its dependent: DelayMs after
// the dependency completes or, with OnDispatch, after it is dispatched.
type Edge struct {
	DelayMs    vtime.Time
	OnDispatch bool
}
