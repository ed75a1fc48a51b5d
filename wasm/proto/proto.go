// Package proto is the vocabulary the page and the simulation worker share:
// every message between them (wire.go: one Request or Reply, with a struct
// per kind) and what they carry, such as the view of one finished run that
// the bridge (package main in wasm/) computes and the UI (ui/) draws. It
// holds data only, imports nothing from the core, and is encoded with
// encoding/json on both sides, so the UI's wasm does not link the engine.
//
// Request rows, timelines and frames travel as binary payloads beside the
// JSON (EncodeRows, EncodeTimeline, frames), and report texts
// (prediction.json, requests.jsonl, passes.jsonl, a sweep's files) as
// JavaScript strings the page keeps without decoding them (docs/ui.md,
// "How the page and the worker talk").
package proto

// Reply types (Reply.Type) posted by the worker.
const (
	MsgReady    = "ready"    // the worker's Go runtime is up
	MsgProgress = "progress" // Progress: a run moves
	MsgResult   = "result"   // RunResult: a run's outcome per variant
	MsgChecked  = "checked"  // TraceInfo: a trace check
	MsgFile     = "file"     // FileReply: a report file
	MsgIndex    = "index"    // IndexReply: the pass index grows
	MsgFrame    = "frame"    // FrameReply: one pass per variant
	// MsgDead: the worker's Go program stopped (it exited, ran out of
	// memory, or a call into it threw) and cannot answer again; ID is the
	// request it was serving (0: none), Error says what sim-worker.js saw.
	// The page replaces the worker. sim-worker.js posts it, never the
	// bridge.
	MsgDead = "dead"
)

// Operations (Request.Op) the page asks of the worker.
const (
	OpRun   = "run"   // RunJob: run a config (all its variants)
	OpCheck = "check" // CheckJob: read an uploaded trace
	OpFile  = "file"  // FileJob: encode a report file of an earlier run
	OpIndex = "index" // IndexJob: index the kept run's passes a little further
	OpSeek  = "seek"  // SeekJob: one pass of the kept run, per variant
	OpMerge = "merge" // MergeJob: a run from the parts it was split into
)

// View is what the UI shows of one finished run (one variant of a job).
type View struct {
	Label string `json:"label"`
	// Restored is Σ first-admission host (G2) reused tokens, Recomputed is
	// the report's committed_prefill_tokens, G1Reused is Σ first-admission
	// G1 reused tokens (all first-admission reuse when the run has no G2).
	Restored   int64 `json:"restored"`
	Recomputed int64 `json:"recomputed"`
	G1Reused   int64 `json:"g1_reused"`
	// InputTokens is the completed requests' input tokens.
	InputTokens int64   `json:"input_tokens"`
	TTFTP50     float64 `json:"ttft_p50_ms"`
	TTFTP99     float64 `json:"ttft_p99_ms"`
	Requests    int     `json:"requests"`
	Completed   int     `json:"completed"`
	Rejected    int     `json:"rejected"`
	Preemptions int64   `json:"preemptions"`
	DurationMs  float64 `json:"duration_ms"`
	Passes      int64   `json:"passes"`
	// RankPasses is the most passes a DP rank ran (the bound of the pass
	// view's "show passes from" field).
	RankPasses int  `json:"rank_passes,omitempty"`
	HasHost    bool `json:"has_host"`
	// Connector is the run's G2 connector profile ("" without G2).
	Connector string `json:"connector,omitempty"`
	// PD: the run has prefill and decode roles.
	PD bool `json:"pd,omitempty"`
	// Workers is the aggregated run's worker count when it has more than
	// one (0 otherwise): the request table then names each request's.
	Workers int `json:"workers,omitempty"`
	// Bounds: the run's timing records what bounds each pass (roofline,
	// trained_physics), so every row carries its prefill time
	// (requests.jsonl's prefill_passes, prefill_compute_bound_ms and
	// prefill_memory_bound_ms) and the table shows it.
	Bounds bool `json:"bounds,omitempty"`
	// ElapsedMs is the wall time the worker spent in replay.Run.
	ElapsedMs float64 `json:"elapsed_ms"`
	// Agentic is an agentic run's load-control sections (nil without
	// agentic_snapshot).
	Agentic *Agentic `json:"agentic,omitempty"`
	// Rows travel separately, in the binary form of EncodeRows: decoding
	// thousands of JSON objects in the page's wasm would cost more than
	// the whole render.
	Rows  []Row  `json:"-"`
	Turns []Turn `json:"turns"`
}

// Agentic is what an agentic run with load controls reports beside its
// summary: prediction.json's agentic_snapshots, agentic_phases and
// agentic_profile (docs/model/agentic.md ("Report")). Warmup and Profile
// are nil when their control is off. Times are the report's: virtual ms
// from the run's start (absolute, not from the barrier); -1 is unset.
type Agentic struct {
	Seed uint64 `json:"seed"`
	// Lanes are the snapshot cuts, one per lane in lane order.
	Lanes   []AgenticLane   `json:"lanes"`
	Warmup  *AgenticWarmup  `json:"warmup,omitempty"`
	Profile *AgenticProfile `json:"profile,omitempty"`
}

// AgenticLane is one lane's snapshot cut (agentic_snapshots).
type AgenticLane struct {
	Lane int `json:"lane_id"`
	// Play is the source play's index in the corpus.
	Play    int     `json:"source_play"`
	TStarMs float64 `json:"t_star_ms"`
	// FirstMs and LastMs are the play's recorded request-start span.
	FirstMs   float64 `json:"recorded_start_ms"`
	LastMs    float64 `json:"recorded_last_start_ms"`
	History   int     `json:"history_requests"`
	Remaining int     `json:"remaining_requests"`
	Primers   int     `json:"primers"`
}

// AgenticWarmup is the warmup's preparation (agentic_phases).
type AgenticWarmup struct {
	// BarrierMs is where the barrier opened and measurement started
	// (profile_start_ms; -1: it never opened), QuiescentMs the last
	// preparation request's end.
	BarrierMs   float64 `json:"profile_start_ms"`
	QuiescentMs float64 `json:"preparation_quiescent_ms"`
	// Lanes count each lane's completed primers and warmup requests.
	Lanes []AgenticWarmupLane `json:"lanes"`
}

// AgenticWarmupLane is one lane's completed preparation requests.
type AgenticWarmupLane struct {
	Primers int `json:"primers_completed"`
	Warmups int `json:"warmup_completed"`
}

// AgenticProfile is a profile's lifecycle (agentic_profile).
type AgenticProfile struct {
	StartMs      float64 `json:"profile_start_ms"`
	CutoffMs     float64 `json:"admission_cutoff_ms"`
	GraceEndMs   float64 `json:"response_grace_deadline_ms"`
	FinishedAtMs float64 `json:"finished_at_ms"`
	// Closed: admission closed (the run reached its finish).
	Closed       bool `json:"admission_closed"`
	PlaysStarted int  `json:"plays_started"`
	// PlaysCompleted: started plays whose every request completed before
	// the cutoff.
	PlaysCompleted int `json:"plays_completed"`
	Issued         int `json:"issued_requests"`
	Successful     int `json:"successful_responses"`
	Canceled       int `json:"canceled_requests"`
	NeverIssued    int `json:"never_issued_requests"`
	// InFlight is client_in_flight_requests at the end (0: drained).
	InFlight   int `json:"client_in_flight_requests"`
	IdleShifts int `json:"idle_shifts"`
}

// Row is one request of the per-request table, in request order.
type Row struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	Turn    int    `json:"turn"`
	// TTFT is -1 when the request emitted no token.
	TTFT       float64 `json:"ttft"`
	Input      int     `json:"input"`
	G1         int     `json:"g1"`
	Host       int     `json:"host"`
	Recomputed int     `json:"recomputed"`
	Status     string  `json:"status"`
	// Prefill and Decode are the P/D workers that served the request
	// (their index in the prefill and decode pools); -1 without P/D.
	Prefill int `json:"prefill"`
	Decode  int `json:"decode"`
	// PrefillPasses, ComputeMs and MemoryMs are the request's prefill time
	// (report.PrefillTime): the passes that did its prefill work and
	// their step times by what bounded each; zero unless View.Bounds.
	PrefillPasses int     `json:"prefill_passes"`
	ComputeMs     float64 `json:"prefill_compute_bound_ms"`
	MemoryMs      float64 `json:"prefill_memory_bound_ms"`
}

// Turn sums the first admissions of every request with one turn index.
type Turn struct {
	Turn       int   `json:"turn"`
	Requests   int   `json:"requests"`
	G1         int64 `json:"g1"`
	Restored   int64 `json:"restored"`
	Recomputed int64 `json:"recomputed"`
}

// TraceInfo answers a trace check.
type TraceInfo struct {
	Name     string `json:"name"`
	Sessions int    `json:"sessions"`
	Requests int    `json:"requests"`
}

// Variant is one run of a compare job: a label and the --set overrides
// applied after the job's own.
type Variant struct {
	Label string   `json:"label"`
	Sets  []string `json:"sets"`
}
