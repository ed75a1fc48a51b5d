package replay

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/core/report"
	"github.com/kvsim/kvsim/core/request"
	"github.com/kvsim/kvsim/core/timing"
	"github.com/kvsim/kvsim/core/trace"
)

// Limits bound the work one job may ask for. A zero field sets no bound.
//
// Every job is checked first against DefaultLimits and then against its
// own Limits, in the order of the fields below, so a job over the default
// limits is refused with the same message by every front end (the CLI, the
// page and the worker API), whatever tighter budget a front end adds.
type Limits struct {
	// MaxRanks bounds the DP ranks of all roles (replicas × attention_data).
	MaxRanks int `json:"max_ranks,omitempty"`
	// MaxG1Blocks bounds one DP rank's G1 capacity in blocks.
	MaxG1Blocks int64 `json:"max_g1_blocks,omitempty"`
	// MaxG2Blocks bounds one G2 tier's capacity in blocks.
	MaxG2Blocks int64 `json:"max_g2_blocks,omitempty"`
	// MaxRequests bounds the requests of the workload (trace rows, or the
	// requests a synthetic source makes).
	MaxRequests int64 `json:"max_requests,omitempty"`
	// MaxMemoryBytes bounds the memory the run is estimated to keep live
	// (Size.MemoryBytes).
	MaxMemoryBytes float64 `json:"max_memory_bytes,omitempty"`
	// MaxRequestRows bounds the requests of a job that captures
	// requests.jsonl.
	MaxRequestRows int64 `json:"max_request_rows,omitempty"`
	// MaxRecordRequests bounds the requests of a job that captures the
	// per-pass record (Capture.Passes; see Capture.SkipLargeRecord).
	MaxRecordRequests int64 `json:"max_record_requests,omitempty"`
	// MaxPasses bounds the scheduler group passes of the run; the run stops
	// with a KindLimit error once it needs more.
	MaxPasses int64 `json:"max_passes,omitempty"`
	// MaxRecordBytes bounds the estimated size of passes.jsonl for a job
	// that captures the per-pass record (Capture.Passes), whole or the
	// Capture.Window of it. Checking it runs the job once without the
	// record to count its passes, or those in the window (RecordBytes);
	// the CLI sets it to RecordBytesLimit.
	MaxRecordBytes float64 `json:"max_record_bytes,omitempty"`
}

// RecordBytesLimit is the CLI's bound on a whole per-pass record
// (Limits.MaxRecordBytes; `kvsim predict --capture-passes`, docs/cli.md):
// 2 GiB of passes.jsonl. The Mooncake conversation trace on 4 ranks of
// 40,000 G1 blocks is estimated at about 516 GiB and was measured writing
// 39 GB for its first 546 s of 3,547.
const RecordBytesLimit = 2 << 30

// RecordBytes estimates passes.jsonl's size for a run of passes group
// passes: a line per pass of each DP rank of a worker, each line about
// 256 bytes plus 16 per G1 slot and G2 entry of its rank (a line that
// changes G1 or G2 lists every idle block and every G2 entry by name, and
// names run from 8 bytes, "s3t2#17", to 20, "request_4920-0#288").
// Measured: the Mooncake conversation trace's passes 100,000 to 100,099
// (40,000 G1 blocks, pools full) take a median 674 KB a line against 640
// KB estimated; the 39 GB of its first 546 s are about 290 KB a line; §A's (docs/model/cases.md)
// small pools, rarely full, are overestimated (2.5 MB written).
func RecordBytes(cfg *config.Config, passes int64) (bytes, perLine float64) {
	perRank := 0
	for _, r := range cfg.Roles() {
		perRank = max(perRank, r.Parallelism.AttentionData)
		g2 := 0
		if ho := r.KVCache.HostOffload; ho != nil {
			g2 = ho.NumHostBlocks
		}
		perLine = max(perLine, 256+16*float64(r.KVCache.CapacityBlocks+g2))
	}
	return float64(passes) * float64(max(perRank, 1)) * perLine, perLine
}

// DefaultLimits are the bounds every job meets, in every front end. They
// are set where a run stops being one a machine can hold (the browser's
// Web Worker has 4 GiB of wasm memory, and Go needs room beside the live
// heap to collect it), not where it stops being interesting.
func DefaultLimits() Limits {
	return Limits{
		// 64 replicas × 16 attention-data ranks.
		MaxRanks: 1024,
		// An H200's 141 GB holds 4.3 M blocks only if each is 32 KiB; real
		// models' blocks are 10–100× larger.
		MaxG1Blocks: 1 << 22,
		// 16.8 M host blocks of 32 KiB already fill 512 GiB of host RAM.
		MaxG2Blocks: 1 << 24,
		// 1.5 GiB of estimated peak live heap: the Mooncake conversation
		// trace (12,031 requests, 149 M tokens) with a 200,000-block G2
		// tier on each of its 4 ranks is estimated at 256 MiB and fits;
		// the page's Web Worker (4 GiB of wasm memory, the collector's
		// headroom, the records it keeps) could not hold much more.
		MaxMemoryBytes: 3 << 29,
	}
}

// A Size is what a job needs, as far as Limits bound it. It is computed
// from the config alone for synthetic sources (before the workload is
// built) and from the workload for traces.
type Size struct {
	Ranks    int
	G1Blocks int64 // the largest per-rank G1 capacity
	G2Blocks int64 // the largest G2 tier capacity
	Requests int64
	// Tokens are the tokens the engine holds: a session's whole history
	// once when turns accumulate, every request's prompt and output
	// otherwise.
	Tokens float64
	// KVSlots are the block-table slots sized for the requests (each for
	// its prompt with history plus output).
	KVSlots float64
	// Identities bounds the distinct block identities the run can create.
	Identities float64
	G1Total    float64 // Σ G1 blocks over all ranks
	G2Total    float64 // Σ G2 blocks over all tiers
	Indexes    int     // identity-indexed tables (one per rank and per G2 tier)
	PD         bool
	// GapRuns are the inter-token gap runs the records have room for
	// beyond the two of bytesPerRequest: with a modelled pass time, one per
	// output token up to 1,024 per request (engine.gapCapacities).
	GapRuns float64
}

// Per-item byte costs of the estimate: the structures the engine sizes up
// front (engine.New), the identities it creates as requests arrive, and
// the G1 and G2 tables. The engine holds no token arrays (a sequence keeps
// only its partial last block's tokens; docs/performance.md ("Dispatch
// without token arrays")), so a token costs only its share of a
// block-identity list; the identity-indexed tables of the G1 pools and G2
// tiers hold pages of 64 consecutive identities (index.Map), counted per
// block of capacity with half of each page used (real runs fill 48 to 51 of
// 64: docs/performance.md ("Identity-paged indexes")), plus a directory
// entry per 64 identities in each table.
const (
	bytesPerToken    = 4.0 / 16     // a token's share of a block-identity list (int32 per 16-token block)
	bytesPerSlot     = 4            // one int32 block-table slot
	bytesPerGap      = 8            // one report.Gap
	bytesPerIdentity = 16 + 2       // an identity trie node and its share of the origin runs and wide children
	bytesPerDirEntry = 4.0 / 64     // an identity's share of one table's page directory
	bytesPerG1Block  = 40 + 4 + 2*8 // a G1 slot, its free-list entry, its index entry in a half-used page
	bytesPerG2Block  = 32 + 8 + 2*4 // a G2 entry, its policy bookkeeping, its index entry in a half-used page
)

// bytesPerRequest is one request's fixed cost: its scheduler state, its
// report record (with room for one admission and routing and two gaps) and
// its trace turn; P/D doubles the first three.
var bytesPerRequest = float64(unsafe.Sizeof(request.Request{}) + unsafe.Sizeof(report.Request{}) +
	unsafe.Sizeof(report.Admission{}) + unsafe.Sizeof(report.Routing{}) + 2*unsafe.Sizeof(report.Gap{}) +
	unsafe.Sizeof(trace.Turn{}))

// MemoryBytes estimates the run's peak live heap: every table the engine
// sizes from the workload, the tokens it holds, the identity table and its
// per-rank indexes, and the G1 and G2 tables at capacity. The process needs
// more (Go's collector lets the heap grow to about twice the live data).
// TestMemoryEstimate compares it with the peak live heap of real runs.
func (s *Size) MemoryBytes() float64 {
	reqs := float64(s.Requests)
	slots := s.KVSlots
	if s.PD {
		reqs *= 2
		slots *= 2
	}
	return reqs*bytesPerRequest + s.GapRuns*bytesPerGap + s.Tokens*bytesPerToken + slots*bytesPerSlot +
		s.Identities*(bytesPerIdentity+float64(s.Indexes)*bytesPerDirEntry) + s.G1Total*bytesPerG1Block +
		s.G2Total*bytesPerG2Block
}

// engineSize is the part of Size the config alone decides: ranks, G1 and
// G2 capacities.
func engineSize(cfg *config.Config) Size {
	var s Size
	s.PD = cfg.Engine.Mode == config.ModeDisaggregated
	for _, r := range cfg.Roles() {
		n := r.Parallelism.Replicas * r.Parallelism.AttentionData
		s.Ranks += n
		s.Indexes += n
		s.G1Blocks = max(s.G1Blocks, int64(r.KVCache.CapacityBlocks))
		s.G1Total += float64(n) * float64(r.KVCache.CapacityBlocks)
		if ho := r.KVCache.HostOffload; ho != nil {
			tiers := n
			if ho.Scope == config.ScopeClusterShared {
				tiers = 1
			}
			s.Indexes += tiers
			s.G2Blocks = max(s.G2Blocks, int64(ho.NumHostBlocks))
			s.G2Total += float64(tiers) * float64(ho.NumHostBlocks)
		}
	}
	return s
}

// syntheticSize adds what a synthetic source will generate, computed as
// the trace package generates it.
func syntheticSize(cfg *config.Config, s *Size) {
	src, stop := cfg.Traffic.Source, cfg.Traffic.Stop
	bs := float64(blockSize(cfg))
	switch src.Type {
	case config.SourceSynthetic:
		reqs := float64(stop.Requests)
		per := float64(src.InputTokens) + float64(src.OutputTokens)
		s.GapRuns = modelledGapRuns(cfg, reqs, src.OutputTokens)
		s.Requests = int64(stop.Requests)
		s.Tokens = reqs * per
		s.KVSlots = reqs * (math.Floor(per/bs) + 1)
		s.Identities = s.KVSlots
	case config.SourceSyntheticSession:
		t := float64(src.Session.Turns)
		sessions := float64(stop.Sessions)
		per := float64(src.NewInputTokensPerTurn) + float64(src.OutputTokensPerTurn)
		s.Requests = int64(min(sessions*t, math.MaxInt64/2))
		s.GapRuns = modelledGapRuns(cfg, sessions*t, src.OutputTokensPerTurn)
		s.Tokens = sessions * t * per
		// Turn k (from 1) of a session is sized for k × per tokens.
		s.KVSlots = sessions*per*t*(t+1)/2/bs + sessions*t
		s.Identities = sessions * (t*per/bs + 1)
	}
}

// workloadSize adds what a built workload needs, sized the way engine.New
// sizes its buffers: every turn for its prompt (with history when turns
// accumulate) plus its output. Identities are bounded by the distinct
// content the trace interned (each id a run of RunLength tokens) plus every
// request's output blocks.
func workloadSize(cfg *config.Config, wl *trace.Workload, s *Size) {
	bs := float64(blockSize(cfg))
	s.Requests = int64(wl.Rows)
	var slots, content, outputs float64
	modelled := modelledGapRuns(cfg, 1, 3) > 0 // Roles allocates: ask once, not per turn
	for i := range wl.Sessions {
		known := 0.0
		for _, t := range wl.Sessions[i].Turns {
			if !wl.Accumulate {
				known = 0
			}
			known += float64(t.ContentLength) + float64(t.OutputLength)
			slots += math.Floor(known/bs) + 1
			outputs += math.Floor(float64(t.OutputLength)/bs) + 1
			if modelled {
				s.GapRuns += float64(max(min(t.OutputLength, 1024)-2, 0))
			}
			content = max(content, float64(max(t.RunLength, 1)))
			if !wl.Accumulate {
				s.Tokens += known
			}
		}
		if wl.Accumulate {
			s.Tokens += known
		}
	}
	s.KVSlots = slots
	s.Identities = min(slots, float64(wl.NumContentIDs)*math.Ceil(content/bs)+outputs)
}

func blockSize(cfg *config.Config) int {
	for _, r := range cfg.Roles() {
		return max(r.KVCache.BlockSize, 1)
	}
	return 64
}

// checkEngine refuses a config whose engine is over lim: ranks, then each
// role's G1 and G2 capacity.
func checkEngine(cfg *config.Config, at *config.Places, s *Size, lim Limits) *Error {
	if lim.MaxRanks > 0 && s.Ranks > lim.MaxRanks {
		return limitError(at, "engine.workers", "%s DP ranks (replicas × attention_data over all roles) exceed the limit of %s",
			numfmt.Thousands(int64(s.Ranks)), numfmt.Thousands(int64(lim.MaxRanks)))
	}
	for _, r := range cfg.Roles() {
		kv := "engine.workers." + r.Name + ".kv_cache"
		if n := int64(r.KVCache.CapacityBlocks); lim.MaxG1Blocks > 0 && n > lim.MaxG1Blocks {
			return limitError(at, written(at, kv+".capacity.blocks", kv+".capacity.bytes", kv+".capacity"), "%s G1 blocks per DP rank exceed the limit of %s",
				numfmt.Thousands(n), numfmt.Thousands(lim.MaxG1Blocks))
		}
		if ho := r.KVCache.HostOffload; ho != nil && lim.MaxG2Blocks > 0 && int64(ho.NumHostBlocks) > lim.MaxG2Blocks {
			return limitError(at, kv+".host_offload.num_host_blocks", "%s host blocks exceed the limit of %s per G2 tier",
				numfmt.Thousands(int64(ho.NumHostBlocks)), numfmt.Thousands(lim.MaxG2Blocks))
		}
	}
	return nil
}

// checkWorkload refuses a workload over lim: its requests, then its memory.
func checkWorkload(cfg *config.Config, at *config.Places, s *Size, lim Limits) *Error {
	path := workloadPath(cfg, at)
	if lim.MaxRequests > 0 && s.Requests > lim.MaxRequests {
		return limitError(at, path, "the workload has %s requests, more than the limit of %s",
			numfmt.Thousands(s.Requests), numfmt.Thousands(lim.MaxRequests))
	}
	if m := s.MemoryBytes(); lim.MaxMemoryBytes > 0 && m > lim.MaxMemoryBytes {
		return limitError(at, path, "the run would need about %s of memory (%s requests, %s tokens, %s G1 and %s G2 blocks), more than the limit of %s",
			numfmt.Bytes(m), thousandsF(float64(s.Requests)), thousandsF(s.Tokens), thousandsF(s.G1Total), thousandsF(s.G2Total),
			numfmt.Bytes(lim.MaxMemoryBytes))
	}
	return nil
}

// checkCapture refuses captures over lim (a per-pass record over the
// bound is dropped instead when the job says so: see Capture).
func checkCapture(cfg *config.Config, s *Size, c Capture, lim Limits) (*Error, string) {
	if c.Requests && lim.MaxRequestRows > 0 && s.Requests > lim.MaxRequestRows {
		return &Error{Kind: KindLimit, Msg: fmt.Sprintf("the per-request rows (requests.jsonl) are kept for runs of at most %s requests; this one has %s",
			numfmt.Thousands(lim.MaxRequestRows), numfmt.Thousands(s.Requests))}, ""
	}
	if c.Passes && lim.MaxRecordRequests > 0 && s.Requests > lim.MaxRecordRequests {
		msg := fmt.Sprintf("the per-pass record is kept for runs of at most %s requests; this one has %s",
			numfmt.Thousands(lim.MaxRecordRequests), numfmt.Thousands(s.Requests))
		if c.SkipLargeRecord {
			return nil, msg
		}
		return &Error{Kind: KindLimit, Msg: msg}, ""
	}
	return nil, ""
}

// written is the first of paths the config wrote (the last one when none
// was).
func written(at *config.Places, paths ...string) string {
	for _, p := range paths {
		if at.Written(p) {
			return p
		}
	}
	return paths[len(paths)-1]
}

// workloadPath is the config path that decides the workload's size.
func workloadPath(cfg *config.Config, at *config.Places) string {
	switch cfg.Traffic.Source.Type {
	case config.SourceSynthetic:
		return written(at, "traffic.stop.requests", "traffic.stop.requests_per_load_unit", "traffic.stop")
	case config.SourceSyntheticSession:
		return written(at, "traffic.stop.sessions", "traffic.stop.sessions_per_load_unit", "traffic.stop")
	}
	return "traffic.source.paths[0]"
}

// thousandsF writes a float count with separators (counts past int64
// are written in full as well).
func thousandsF(v float64) string {
	if v < math.MaxInt64 {
		return numfmt.Thousands(int64(v))
	}
	return fmt.Sprintf("%.3g", v)
}

// modelledGapRuns is the gap runs beyond two that n requests of out output
// tokens have room for: none with fixed timing everywhere.
func modelledGapRuns(cfg *config.Config, n float64, out int) float64 {
	for _, r := range cfg.Roles() {
		if r.Timing.Kind != timing.Fixed {
			return n * float64(max(min(out, 1024)-2, 0))
		}
	}
	return 0
}
