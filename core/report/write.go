package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvsim/kvsim/core/config"
)

// SummaryJSON encodes the summary as one JSON object (no trailing newline).
// Key order is fixed; keys that do not apply to the run are omitted.
func SummaryJSON(s Summary) []byte {
	o := newObj(nil)
	o.int("num_requests", int64(s.NumRequests))
	o.int("completed_requests", int64(s.CompletedRequests))
	o.int("rejected_requests", int64(s.RejectedRequests))
	o.int("total_input_tokens", s.TotalInputTokens)
	o.int("total_output_tokens", s.TotalOutputTokens)
	o.num("duration_ms", s.DurationMs)
	o.num("request_throughput_rps", s.RequestThroughputRPS)
	o.num("input_throughput_tok_s", s.InputThroughput)
	o.num("output_throughput_tok_s", s.OutputThroughput)
	o.num("total_throughput_tok_s", s.TotalThroughput)
	o.num("prefix_cache_reused_ratio", s.PrefixCacheReusedRatio)
	o.num("first_admission_prefix_cache_reused_ratio", s.FirstAdmissionPrefixCacheReusedRatio)
	o.int("committed_prefill_tokens", s.CommittedPrefillTokens)
	o.int("num_ttft_samples", int64(s.TTFT.N))
	o.int("num_tpot_samples", int64(s.TPOT.N))
	o.int("num_e2e_latency_samples", int64(s.E2E.N))
	for _, m := range []struct {
		name string
		d    Dist
	}{{"ttft", s.TTFT}, {"ttst", s.TTST}, {"tpot", s.TPOT}, {"itl", s.ITL}, {"e2e_latency", s.E2E}} {
		d := m.d
		o.num("mean_"+m.name+"_ms", d.Mean)
		o.num("min_"+m.name+"_ms", d.Min)
		o.num("max_"+m.name+"_ms", d.Max)
		o.num("median_"+m.name+"_ms", d.Median)
		o.num("p75_"+m.name+"_ms", d.P75)
		o.num("p90_"+m.name+"_ms", d.P90)
		o.num("p95_"+m.name+"_ms", d.P95)
		o.num("p99_"+m.name+"_ms", d.P99)
		o.num("std_"+m.name+"_ms", d.Std)
	}
	o.num("gpu_hours", s.GPUHours)
	o.int("preemptions", s.Preemptions)
	if g := s.G2; g != nil {
		o.int("first_admission_g1_reused_input_tokens", s.FirstAdmissionG1Tokens)
		o.int("first_admission_host_reused_input_tokens", s.FirstAdmissionHostTokens)
		o.int("g2_lookups", g.Lookups)
		o.int("g2_lookup_hits", g.LookupHits)
		o.int("g2_lookup_defers", g.LookupDefers)
		o.int("g2_store_jobs", g.StoreJobs)
		o.int("g2_store_blocks", g.StoreBlocks)
		o.int("g2_store_bytes", g.StoreBytes)
		o.int("g2_load_jobs", g.LoadJobs)
		o.int("g2_load_blocks", g.LoadBlocks)
		o.int("g2_load_bytes", g.LoadBytes)
		o.int("g2_evictions", g.Evictions)
	}
	if g := s.G3; g != nil {
		jobs := func(j G3Jobs) []byte {
			return newObj(nil).int("submitted_jobs", j.SubmittedJobs).int("completed_jobs", j.CompletedJobs).
				int("cancelled_jobs", j.CancelledJobs).int("completed_bytes", j.CompletedBytes).
				num("transfer_ms", j.TransferMs).end()
		}
		g3o := newObj(nil).int("lookup_probes", g.LookupProbes).int("lookup_hits", g.LookupHits).
			int("lookup_pending", g.LookupPending).raw("read", jobs(g.Read)).raw("write", jobs(g.Write)).
			int("evictions", g.Evictions).int("cross_worker_read_blocks", g.CrossWorkerReadBlocks).
			int("resident_blocks", g.ResidentBlocks).int("pending_blocks", g.PendingBlocks)
		if g.BypassedRestores > 0 {
			g3o.int("bypassed_restores", g.BypassedRestores)
		}
		o.raw("g3_offload", g3o.end())
	}
	if s.KVCR {
		// kvcr is accepted but never pulls: no routing policy gives a peer hint.
		o.int("kvcr_pulls", 0)
		o.int("kvcr_pulled_blocks", 0)
	}
	if len(s.Domains) > 0 {
		b := []byte{'['}
		for i, d := range s.Domains {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = newObj(b).int("capacity_blocks", int64(d.CapacityBlocks)).
				int("resident_blocks", int64(d.ResidentBlocks)).int("used_blocks", int64(d.UsedBlocks)).end()
		}
		o.raw("g2_domains", append(b, ']'))
	}
	if len(s.Workers) > 0 {
		o.raw("workers", workersJSON(s.Workers))
	}
	return o.end()
}

// workersJSON encodes the per-worker load and reuse (routing policies
// other than round robin, more than one worker).
func workersJSON(ws []WorkerLoad) []byte {
	b := []byte{'['}
	for i, w := range ws {
		if i > 0 {
			b = append(b, ", "...)
		}
		wo := newObj(b).str("pool", w.Pool).int("worker", int64(w.Worker)).int("routed_requests", int64(w.Requests)).
			int("completed_requests", int64(w.Completed))
		if w.Pool != "decode" {
			ratio := 0.0
			if w.InputTokens > 0 {
				ratio = float64(w.Reused) / float64(w.InputTokens)
			}
			wo.int("input_tokens", w.InputTokens).int("reused_input_tokens", w.Reused).num("prefix_cache_reused_ratio", ratio)
			if w.HasHost {
				wo.int("first_admission_g1_reused_input_tokens", w.FirstG1).
					int("first_admission_host_reused_input_tokens", w.FirstHost)
			}
		}
		b = wo.end()
	}
	return append(b, ']')
}

// PredictionJSON encodes prediction.json.
func PredictionJSON(s Summary) []byte {
	o := newObj(nil)
	o.raw("summary", SummaryJSON(s))
	if s.Agentic != nil {
		appendAgentic(o, s.Agentic)
	}
	return append(o.end(), '\n')
}

// RequestsJSONL encodes requests.jsonl: one line per terminal request in
// order of terminal time, ties by request id.
func RequestsJSONL(recs []Request) []byte {
	idx := make([]int, 0, len(recs))
	for i := range recs {
		if recs[i].Status != "" {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ra, rb := &recs[a], &recs[b]
		if !ra.TerminalMs.Same(rb.TerminalMs) {
			if ra.TerminalMs < rb.TerminalMs {
				return -1
			}
			return 1
		}
		return strings.Compare(ra.RequestID, rb.RequestID)
	})
	var b []byte
	for _, i := range idx {
		b = appendRequest(b, &recs[i])
		b = append(b, '\n')
	}
	return b
}

// UUID is a request's deterministic uuid, derived from its position.
func UUID(index int) string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", index)
}

func appendRequest(b []byte, r *Request) []byte {
	o := newObj(b)
	o.str("request_id", r.RequestID)
	o.str("session_id", r.SessionID)
	o.int("turn_index", int64(r.Turn))
	o.str("uuid", UUID(r.Index))
	o.opt("arrival_time_ms", r.ArrivalMs)
	o.opt("dispatched_at_ms", r.DispatchedMs)
	o.opt("first_admit_ms", r.FirstAdmitMs)
	o.opt("terminal_time_ms", r.TerminalMs)
	o.opt("first_token_ms", r.FirstTokenMs)
	o.opt("last_token_ms", r.LastTokenMs)
	if r.Tokens >= 1 {
		o.num("ttft_ms", float64(r.FirstTokenMs-r.ArrivalMs))
	}
	if r.Tokens >= 2 {
		o.num("ttst_ms", float64(r.SecondTokenMs-r.FirstTokenMs))
	}
	if r.Tokens >= 1 {
		o.num("e2e_latency_ms", float64(r.LastTokenMs-r.ArrivalMs))
	}
	if r.Tokens >= 2 {
		o.num("itl_ms", float64(r.LastTokenMs-r.FirstTokenMs)/float64(r.Tokens-1))
	}
	o.int("input_length", int64(r.InputLength))
	o.int("requested_output_length", int64(r.RequestedOutput))
	o.int("output_length", int64(r.Tokens))
	o.int("reused_input_tokens", int64(r.Reused))
	if r.HasHost && r.FirstAdmitMs.IsSet() {
		o.int("first_admission_g1_reused_input_tokens", int64(r.FirstG1))
		o.int("first_admission_host_reused_input_tokens", int64(r.FirstHost))
	}
	if p := r.Prefill; p != nil {
		o.int("prefill_passes", int64(p.Passes))
		o.num("prefill_compute_bound_ms", float64(p.ComputeBoundMs))
		o.num("prefill_memory_bound_ms", float64(p.MemoryBoundMs))
	}
	if r.DecodeWorker >= 0 {
		o.int("prefill_worker_idx", int64(r.PrefillWorker))
		o.int("decode_worker_idx", int64(r.DecodeWorker))
		o.opt("prefill_admit_ms", r.PrefillAdmitMs)
		o.opt("source_held_ms", r.SourceHeldMs)
		o.opt("destination_reserved_ms", r.DestinationReservedMs)
		o.opt("destination_activated_ms", r.DestinationActivatedMs)
		o.opt("decode_admit_ms", r.DecodeAdmitMs)
		o.opt("source_released_ms", r.SourceReleasedMs)
		o.int("decode_reused_input_tokens", int64(r.DecodeReused))
	}
	rh := []byte{'['}
	for i, h := range r.Routing {
		if i > 0 {
			rh = append(rh, ", "...)
		}
		ro := newObj(rh).str("pool", h.Pool).str("outcome", h.Outcome).int("logical_worker_id", int64(h.Worker)).
			int("scheduler_id", int64(h.Schedule)).int("dp_rank", int64(h.DPRank))
		if h.Policy != 0 {
			ro.str("policy", config.RoutingPolicies[h.Policy]).int("overlap_blocks", int64(h.Overlap))
			if h.HasHost {
				ro.int("host_overlap_blocks", int64(h.HostOverlap))
			}
		}
		rh = ro.end()
	}
	o.raw("routing_history", append(rh, ']'))
	ah := []byte{'['}
	for i, a := range r.Admissions {
		if i > 0 {
			ah = append(ah, ", "...)
		}
		ao := newObj(ah).int("admission_ordinal", int64(a.Ordinal)).int("pool_admission_ordinal", int64(a.PoolOrdinal)).
			str("pool", a.Pool).num("at_ms", float64(a.AtMs)).int("reused_input_tokens", int64(a.Reused))
		if a.HasHost {
			ao.int("g1_reused_input_tokens", int64(a.G1)).int("host_reused_input_tokens", int64(a.Host))
		}
		ah = ao.bool("is_readmission", a.Readmission).end()
	}
	o.raw("admission_history", append(ah, ']'))
	o.int("admission_count", int64(len(r.Admissions)))
	o.int("readmission_count", int64(r.Readmissions))
	o.str("terminal_status", r.Status)
	return o.end()
}
