package report

import (
	"math"
	"slices"
	"sort"

	"github.com/kvsim/kvsim/core/vtime"
)

// Domain is one shared G2 pool's state at the end of the run.
type Domain struct {
	CapacityBlocks int
	ResidentBlocks int
	UsedBlocks     int
}

// G2 is the host tier's traffic over the run, summed over ranks.
type G2 struct {
	Lookups, LookupHits, LookupDefers  int64
	StoreJobs, StoreBlocks, StoreBytes int64
	LoadJobs, LoadBlocks, LoadBytes    int64
	Evictions                          int64
}

// Add adds h's counters to g's.
func (g *G2) Add(h G2) {
	g.Lookups += h.Lookups
	g.LookupHits += h.LookupHits
	g.LookupDefers += h.LookupDefers
	g.StoreJobs += h.StoreJobs
	g.StoreBlocks += h.StoreBlocks
	g.StoreBytes += h.StoreBytes
	g.LoadJobs += h.LoadJobs
	g.LoadBlocks += h.LoadBlocks
	g.LoadBytes += h.LoadBytes
	g.Evictions += h.Evictions
}

// Run is what the engine reports besides the per-request records.
type Run struct {
	CommittedPrefillTokens int64
	Preemptions            int64
	Passes                 int64
	// GPUs is Σ over roles of workers × GPUs per worker.
	GPUs    int
	G2      *G2      // nil without host offload
	Domains []Domain // shared pools only
	G3      *G3      // nil without G3
	// KVCR is set when a role enables kvcr; no routing policy produces a
	// peer hint, so its pull counter stays 0 (docs/model/kvcr.md).
	KVCR bool
	// Workers has one zeroed entry per worker of each pool when a pool
	// routes by a policy other than round robin and the run has more than
	// one worker; Summarize fills them from the records.
	Workers []WorkerLoad
}

// WorkerLoad is one worker's share of the run: the requests its pool
// routed to it and, for the aggregated or prefill pool, the input and
// reused tokens of those that completed (docs/model/report.md ("Per-worker
// load")).
type WorkerLoad struct {
	Pool                string // "agg", "prefill" or "decode"
	Worker              int
	Requests, Completed int
	InputTokens, Reused int64
	HasHost             bool
	FirstG1, FirstHost  int64
}

// Dist is one latency distribution.
type Dist struct {
	N                                               int
	Mean, Min, Max, Median, P75, P90, P95, P99, Std float64
}

// Summary is prediction.json's summary. Its times are statistics over the
// records (plain float64 ms: latencies, the last terminal time), taken
// from the records' vtime.Time values once.
type Summary struct {
	NumRequests, CompletedRequests       int
	TotalInputTokens, TotalOutputTokens  int64
	DurationMs                           float64
	RequestThroughputRPS                 float64
	InputThroughput, OutputThroughput    float64
	TotalThroughput                      float64
	PrefixCacheReusedRatio               float64
	FirstAdmissionPrefixCacheReusedRatio float64
	CommittedPrefillTokens               int64
	TTFT, TTST, TPOT, ITL, E2E           Dist
	MaxITL                               float64
	GPUHours                             float64
	Preemptions                          int64
	RejectedRequests                     int
	// FirstAdmissionG1Tokens and FirstAdmissionHostTokens sum the
	// first-admission attribution of completed requests (G2 runs only).
	FirstAdmissionG1Tokens, FirstAdmissionHostTokens int64
	G2                                               *G2
	Domains                                          []Domain
	KVCR                                             bool
	G3                                               *G3
	Workers                                          []WorkerLoad
	// Agentic holds the agentic load controls' sections (nil without them).
	Agentic *Agentic
}

// G3 is the storage tier's activity (docs/model/g3.md ("Report")).
type G3 struct {
	LookupProbes, LookupHits, LookupPending int64
	Read, Write                             G3Jobs
	Evictions                               int64
	CrossWorkerReadBlocks                   int64
	ResidentBlocks, PendingBlocks           int64
	BypassedRestores                        int64
}

// G3Jobs counts one direction's G3 jobs.
type G3Jobs struct {
	SubmittedJobs, CompletedJobs, CancelledJobs, CompletedBytes int64
	TransferMs                                                  float64
}

// Add accumulates one store's counts.
func (j *G3Jobs) Add(sub, done, cancelled, bytes int64, ms float64) {
	j.SubmittedJobs += sub
	j.CompletedJobs += done
	j.CancelledJobs += cancelled
	j.CompletedBytes += bytes
	j.TransferMs += ms
}

// Summarize computes the summary over completed requests
// (docs/model/report.md ("Summary keys")). dispatched counts the requests
// recorded.
func Summarize(recs []Request, dispatched int, run Run) Summary {
	s := Summary{NumRequests: dispatched, CommittedPrefillTokens: run.CommittedPrefillTokens,
		Preemptions: run.Preemptions, G2: run.G2, Domains: run.Domains, KVCR: run.KVCR, G3: run.G3}
	// One value per completed request at most: sized once, so a long run
	// does not regrow four lists (regrowing them was 5 % of the CPU
	// samples of a profiled pair of §E (docs/model/cases.md) runs).
	ttft, e2e := make([]float64, 0, len(recs)), make([]float64, 0, len(recs))
	ttst, tpot := make([]float64, 0, len(recs)), make([]float64, 0, len(recs))
	var reused, firstReused int64
	for i := range recs {
		r := &recs[i]
		if r.Status == StatusRejected {
			s.RejectedRequests++
		}
		if !r.Completed() {
			continue
		}
		s.CompletedRequests++
		s.TotalInputTokens += int64(r.InputLength)
		s.TotalOutputTokens += int64(r.Tokens)
		s.DurationMs = max(s.DurationMs, float64(r.TerminalMs))
		reused += int64(r.Reused)
		firstReused += int64(r.FirstReused)
		if r.HasHost {
			s.FirstAdmissionG1Tokens += int64(r.FirstG1)
			s.FirstAdmissionHostTokens += int64(r.FirstHost)
		}
		if r.Tokens >= 1 {
			ttft = append(ttft, float64(r.FirstTokenMs-r.ArrivalMs))
			e2e = append(e2e, float64(r.LastTokenMs-r.ArrivalMs))
		}
		if r.Tokens >= 2 {
			ttst = append(ttst, float64(r.SecondTokenMs-r.FirstTokenMs))
			tpot = append(tpot, float64(r.LastTokenMs-r.FirstTokenMs)/float64(r.Tokens-1))
		}
	}
	if s.DurationMs > 0 {
		sec := s.DurationMs / 1000
		s.RequestThroughputRPS = float64(s.CompletedRequests) / sec
		s.InputThroughput = float64(s.TotalInputTokens) / sec
		s.OutputThroughput = float64(s.TotalOutputTokens) / sec
		s.TotalThroughput = float64(s.TotalInputTokens+s.TotalOutputTokens) / sec
	}
	if s.TotalInputTokens > 0 {
		s.PrefixCacheReusedRatio = float64(reused) / float64(s.TotalInputTokens)
		s.FirstAdmissionPrefixCacheReusedRatio = float64(firstReused) / float64(s.TotalInputTokens)
	}
	s.TTFT, s.TTST, s.TPOT, s.E2E = dist(ttft), dist(ttst), dist(tpot), dist(e2e)
	s.ITL = itlDist(recs)
	s.MaxITL = s.ITL.Max
	s.GPUHours = float64(run.GPUs) * s.DurationMs / 3.6e6
	s.Workers = perWorker(recs, run.Workers)
	return s
}

// perWorker fills a copy of ws, the zeroed entries of Run.Workers, from
// each request's routing entries.
func perWorker(recs []Request, ws []WorkerLoad) []WorkerLoad {
	if len(ws) == 0 {
		return nil
	}
	out := slices.Clone(ws)
	find := func(pool string, w int) *WorkerLoad {
		for i := range out {
			if out[i].Pool == pool && out[i].Worker == w {
				return &out[i]
			}
		}
		return nil
	}
	for i := range recs {
		r := &recs[i]
		for j, h := range r.Routing {
			wl := find(h.Pool, int(h.Worker))
			if wl == nil {
				continue
			}
			wl.Requests++
			if !r.Completed() {
				continue
			}
			wl.Completed++
			if j == 0 { // the aggregated or prefill pool: the request's reuse
				wl.InputTokens += int64(r.InputLength)
				wl.Reused += int64(r.Reused)
				if r.HasHost {
					wl.HasHost = true
					wl.FirstG1 += int64(r.FirstG1)
					wl.FirstHost += int64(r.FirstHost)
				}
			}
		}
	}
	return out
}

// rank is the rounded-rank percentile index: floor((n−1)·p/100 + 0.5).
func rank(n int, p float64) int {
	return int(math.Floor(float64(n-1)*p/100 + 0.5))
}

func dist(v []float64) Dist {
	if len(v) == 0 {
		return Dist{}
	}
	slices.Sort(v)
	n := len(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(n)
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	at := func(p float64) float64 { return v[rank(n, p)] }
	return Dist{N: n, Mean: mean, Min: v[0], Max: v[n-1], Median: at(50), P75: at(75), P90: at(90),
		P95: at(95), P99: at(99), Std: math.Sqrt(ss / float64(n))}
}

// itlDist is the distribution of the inter-token gaps of the completed
// records. Records that share one table of gap values (a run's) are counted
// by value id in an array; others (records made one by one) by value.
func itlDist(recs []Request) Dist {
	var shared *GapValues
	for i := range recs {
		r := &recs[i]
		if !r.Completed() || (r.gapRun == 0 && len(r.gaps) == 0) {
			continue
		}
		if r.values == nil || (shared != nil && r.values != shared) {
			return histDist(gapHistogram(recs))
		}
		shared = r.values
	}
	if shared == nil {
		return Dist{}
	}
	counts := shared.completedCounts(recs)
	if counts == nil {
		counts = make([]int, 0, shared.Len())
		for i := range recs {
			if r := &recs[i]; r.Completed() {
				r.eachGapID(func(id uint32, n int) {
					for int(id) >= len(counts) {
						counts = append(counts, 0)
					}
					counts[id] += n
				})
			}
		}
	}
	h := make(map[float64]int, len(counts))
	keys := make([]float64, 0, len(counts))
	for id, n := range counts {
		if n > 0 {
			k := float64(shared.Value(uint32(id)))
			keys = append(keys, k)
			h[k] = n
		}
	}
	return sortedHistDist(keys, h)
}

// completedCounts is the gaps of the completed records of recs by value id
// from the table's counts and their open runs, when their closed runs are
// all the table counted (nil otherwise: other records, or records not in
// recs, had closed runs too). A §E run with modelled timing closes some 3.8
// M runs; reading them back from every record cost a tenth of the modelled
// timings' extra instructions.
func (v *GapValues) completedCounts(recs []Request) []int {
	var closed uint64
	for i := range recs {
		if r := &recs[i]; r.Completed() && r.values == v {
			closed += uint64(r.closedGaps)
		}
	}
	if closed != v.closed {
		return nil
	}
	counts := make([]int, len(v.counts))
	for id, n := range v.counts {
		counts[id] = int(n)
	}
	for i := range recs {
		if r := &recs[i]; r.Completed() && r.gapRun > 0 {
			id := v.id(r.gapMs) // r.values is v: itlDist checked
			for int(id) >= len(counts) {
				counts = append(counts, 0)
			}
			counts[id] += int(r.gapRun)
		}
	}
	return counts
}

// gapHistogram is the inter-token gaps of the completed records as value →
// count.
func gapHistogram(recs []Request) map[float64]int {
	itl := map[float64]int{}
	for i := range recs {
		if r := &recs[i]; r.Completed() {
			r.EachGap(func(ms vtime.Time, n int) { itl[float64(ms)] += n })
		}
	}
	return itl
}

// histDist is dist over samples given as value → count (inter-token gaps
// take few distinct values, so this stays exact and small).
func histDist(h map[float64]int) Dist {
	if len(h) == 0 {
		return Dist{}
	}
	keys := make([]float64, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	return sortedHistDist(keys, h)
}

// sortedHistDist is histDist with the keys of h given (in any order).
func sortedHistDist(keys []float64, h map[float64]int) Dist {
	if len(keys) == 0 {
		return Dist{}
	}
	// Sum in sorted order: map order would make the last bits vary by run.
	sort.Float64s(keys)
	n := 0
	sum := 0.0
	for _, k := range keys {
		n += h[k]
		sum += k * float64(h[k])
	}
	mean := sum / float64(n)
	ss := 0.0
	for _, k := range keys {
		ss += float64(h[k]) * (k - mean) * (k - mean)
	}
	at := func(p float64) float64 {
		idx := rank(n, p)
		for _, k := range keys {
			if idx < h[k] {
				return k
			}
			idx -= h[k]
		}
		return keys[len(keys)-1]
	}
	return Dist{N: n, Mean: mean, Min: keys[0], Max: keys[len(keys)-1], Median: at(50), P75: at(75),
		P90: at(90), P95: at(95), P99: at(99), Std: math.Sqrt(ss / float64(n))}
}
