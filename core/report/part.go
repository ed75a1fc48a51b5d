package report

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/kvsim/kvsim/core/vtime"
)

// A Part is one engine's share of a run split across processes, each
// simulating some of its workers (docs/model/engine.md ("Sharded runs")):
// its records (all of them, or those it routed), its counters and what
// the merge checks. Encode and DecodePart move it between processes:
// nothing a report reads is lost (prediction.json and requests.jsonl of
// decoded records are those of the encoded ones). The encoding is
// written out field by field (a reflect codec took about 0.3 s a merge of
// the Mooncake run's records under wasm); TestPartRoundTrip sets every
// exported field, so a field added to Request or Run and not here fails
// it.
type Part struct {
	Of, Index  int
	HeldBack   bool
	Dispatched int
	RankPasses int
	Stats      Run
	Records    []Request
}

// partFormat starts an encoded Part; DecodePart refuses anything else.
const partFormat = "kvsim run part 1"

// Encode encodes the part with the records for which keep is true (all of
// them when keep is nil).
func (p *Part) Encode(keep func(*Request) bool) []byte {
	w := &writer{}
	w.str(partFormat)
	for _, x := range []int{p.Of, p.Index, p.Dispatched, p.RankPasses} {
		w.int(int64(x))
	}
	w.bool(p.HeldBack)
	w.run(&p.Stats)
	n := 0
	for i := range p.Records {
		if keep == nil || keep(&p.Records[i]) {
			n++
		}
	}
	w.int(int64(n))
	for i := range p.Records {
		if r := &p.Records[i]; keep == nil || keep(r) {
			w.request(r)
		}
	}
	return w.b
}

// DecodePart reads what Encode wrote. The records share one new table of
// gap values. Bytes that are not such an encoding give an error.
func DecodePart(b []byte) (*Part, error) {
	rd := &reader{b: b}
	if rd.str() != partFormat {
		return nil, errRecords
	}
	p := &Part{}
	for _, x := range []*int{&p.Of, &p.Index, &p.Dispatched, &p.RankPasses} {
		*x = int(rd.int())
	}
	p.HeldBack = rd.bool()
	rd.run(&p.Stats)
	n := rd.int()
	if rd.err != nil || n < 0 || n > int64(len(rd.b)) {
		return nil, errRecords
	}
	values := NewGapValues()
	p.Records = make([]Request, n)
	for i := range p.Records {
		rd.request(&p.Records[i], values)
		if rd.err != nil {
			return nil, rd.err
		}
	}
	if len(rd.b) != 0 {
		return nil, errRecords
	}
	return p, nil
}

var errRecords = errors.New("not an encoded part of a split run")

type writer struct{ b []byte }

func (w *writer) int(x int64)  { w.b = binary.AppendVarint(w.b, x) }
func (w *writer) str(s string) { w.int(int64(len(s))); w.b = append(w.b, s...) }
func (w *writer) time(t vtime.Time) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(float64(t)))
}
func (w *writer) bool(x bool) {
	if x {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

// list writes a slice's length, with nil apart from empty (-1).
func (w *writer) list(n int, isNil bool) {
	if isNil {
		n = -1
	}
	w.int(int64(n))
}

func (w *writer) request(r *Request) {
	w.int(int64(r.Index))
	w.str(r.RequestID)
	w.str(r.SessionID)
	w.int(int64(r.Turn))
	for _, t := range []vtime.Time{r.ArrivalMs, r.DispatchedMs, r.FirstAdmitMs, r.TerminalMs, r.FirstTokenMs, r.SecondTokenMs, r.LastTokenMs} {
		w.time(t)
	}
	w.int(int64(r.Tokens))
	w.time(r.gapMs)
	w.int(int64(r.gapRun))
	for _, x := range []int{r.InputLength, r.RequestedOutput, r.Reused, r.FirstReused, r.FirstG1, r.FirstHost} {
		w.int(int64(x))
	}
	w.bool(r.HasHost)
	w.int(int64(r.PrefillWorker))
	w.int(int64(r.DecodeWorker))
	for _, t := range []vtime.Time{r.PrefillAdmitMs, r.SourceHeldMs, r.DestinationReservedMs, r.DestinationActivatedMs, r.DecodeAdmitMs, r.SourceReleasedMs} {
		w.time(t)
	}
	w.int(int64(r.DecodeReused))
	w.bool(r.Prefill != nil)
	if p := r.Prefill; p != nil {
		w.int(int64(p.Passes))
		w.time(p.ComputeBoundMs)
		w.time(p.MemoryBoundMs)
	}
	w.list(len(r.Routing), r.Routing == nil)
	for i := range r.Routing {
		x := &r.Routing[i]
		w.str(x.Pool)
		w.str(x.Outcome)
		for _, v := range []int32{x.Worker, x.Schedule, x.DPRank, x.Overlap, x.HostOverlap} {
			w.int(int64(v))
		}
		w.int(int64(x.Policy))
		w.bool(x.HasHost)
	}
	w.list(len(r.Admissions), r.Admissions == nil)
	for i := range r.Admissions {
		a := &r.Admissions[i]
		w.int(int64(a.Ordinal))
		w.int(int64(a.PoolOrdinal))
		w.str(a.Pool)
		w.time(a.AtMs)
		for _, v := range []int{a.Reused, a.G1, a.Host} {
			w.int(int64(v))
		}
		w.bool(a.HasHost)
		w.bool(a.Readmission)
	}
	w.int(int64(r.Readmissions))
	w.str(r.Status)
	// The closed gap runs by value (the ids are the run's table's).
	w.int(int64(len(r.gaps)))
	for _, g := range r.gaps {
		w.time(r.values.Value(g.ID))
		w.int(int64(g.Count))
	}
}

func (w *writer) run(r *Run) {
	for _, x := range []int64{r.CommittedPrefillTokens, r.Preemptions, r.Passes, int64(r.GPUs)} {
		w.int(x)
	}
	w.bool(r.G2 != nil)
	if g := r.G2; g != nil {
		for _, x := range []int64{g.Lookups, g.LookupHits, g.LookupDefers, g.StoreJobs, g.StoreBlocks, g.StoreBytes,
			g.LoadJobs, g.LoadBlocks, g.LoadBytes, g.Evictions} {
			w.int(x)
		}
	}
	w.list(len(r.Domains), r.Domains == nil)
	for _, d := range r.Domains {
		for _, x := range []int{d.CapacityBlocks, d.ResidentBlocks, d.UsedBlocks} {
			w.int(int64(x))
		}
	}
	w.bool(r.G3 != nil)
	if g := r.G3; g != nil {
		for _, x := range []int64{g.LookupProbes, g.LookupHits, g.LookupPending} {
			w.int(x)
		}
		for _, j := range []*G3Jobs{&g.Read, &g.Write} {
			for _, x := range []int64{j.SubmittedJobs, j.CompletedJobs, j.CancelledJobs, j.CompletedBytes} {
				w.int(x)
			}
			w.time(vtime.Time(j.TransferMs))
		}
		for _, x := range []int64{g.Evictions, g.CrossWorkerReadBlocks, g.ResidentBlocks, g.PendingBlocks, g.BypassedRestores} {
			w.int(x)
		}
	}
	w.bool(r.KVCR)
	w.list(len(r.Workers), r.Workers == nil)
	for i := range r.Workers {
		l := &r.Workers[i]
		w.str(l.Pool)
		for _, x := range []int64{int64(l.Worker), int64(l.Requests), int64(l.Completed), l.InputTokens, l.Reused} {
			w.int(x)
		}
		w.bool(l.HasHost)
		w.int(l.FirstG1)
		w.int(l.FirstHost)
	}
}

// reader reads what writer wrote; the first error sticks and every later
// read gives zero.
type reader struct {
	b   []byte
	err error
}

func (rd *reader) int() int64 {
	x, n := binary.Varint(rd.b)
	if n <= 0 {
		rd.fail()
		return 0
	}
	rd.b = rd.b[n:]
	return x
}

func (rd *reader) fail() { rd.err, rd.b = errRecords, nil }

func (rd *reader) str() string {
	n := rd.int()
	if n < 0 || n > int64(len(rd.b)) {
		rd.fail()
		return ""
	}
	s := string(rd.b[:n])
	rd.b = rd.b[n:]
	return s
}

func (rd *reader) time() vtime.Time {
	if len(rd.b) < 8 {
		rd.fail()
		return 0
	}
	t := vtime.Time(math.Float64frombits(binary.LittleEndian.Uint64(rd.b)))
	rd.b = rd.b[8:]
	return t
}

func (rd *reader) bool() bool {
	if len(rd.b) < 1 {
		rd.fail()
		return false
	}
	x := rd.b[0] != 0
	rd.b = rd.b[1:]
	return x
}

// list reads a slice length: -1 for nil; the length is bounded by the
// bytes left (every element takes one at least).
func (rd *reader) list() int {
	n := rd.int()
	if n < -1 || n > int64(len(rd.b)) {
		rd.fail()
		return -1
	}
	return int(n)
}

func (rd *reader) run(r *Run) {
	for _, x := range []*int64{&r.CommittedPrefillTokens, &r.Preemptions, &r.Passes} {
		*x = rd.int()
	}
	r.GPUs = int(rd.int())
	if rd.bool() {
		g := &G2{}
		for _, x := range []*int64{&g.Lookups, &g.LookupHits, &g.LookupDefers, &g.StoreJobs, &g.StoreBlocks, &g.StoreBytes,
			&g.LoadJobs, &g.LoadBlocks, &g.LoadBytes, &g.Evictions} {
			*x = rd.int()
		}
		r.G2 = g
	}
	if n := rd.list(); n >= 0 {
		r.Domains = make([]Domain, n)
		for i := range r.Domains {
			d := &r.Domains[i]
			for _, x := range []*int{&d.CapacityBlocks, &d.ResidentBlocks, &d.UsedBlocks} {
				*x = int(rd.int())
			}
		}
	}
	if rd.bool() {
		g := &G3{}
		for _, x := range []*int64{&g.LookupProbes, &g.LookupHits, &g.LookupPending} {
			*x = rd.int()
		}
		for _, j := range []*G3Jobs{&g.Read, &g.Write} {
			for _, x := range []*int64{&j.SubmittedJobs, &j.CompletedJobs, &j.CancelledJobs, &j.CompletedBytes} {
				*x = rd.int()
			}
			j.TransferMs = float64(rd.time())
		}
		for _, x := range []*int64{&g.Evictions, &g.CrossWorkerReadBlocks, &g.ResidentBlocks, &g.PendingBlocks, &g.BypassedRestores} {
			*x = rd.int()
		}
		r.G3 = g
	}
	r.KVCR = rd.bool()
	if n := rd.list(); n >= 0 {
		r.Workers = make([]WorkerLoad, n)
		for i := range r.Workers {
			l := &r.Workers[i]
			l.Pool = rd.str()
			l.Worker, l.Requests, l.Completed = int(rd.int()), int(rd.int()), int(rd.int())
			l.InputTokens, l.Reused = rd.int(), rd.int()
			l.HasHost = rd.bool()
			l.FirstG1, l.FirstHost = rd.int(), rd.int()
		}
	}
}

func (rd *reader) request(r *Request, values *GapValues) {
	r.Index = int(rd.int())
	r.RequestID = rd.str()
	r.SessionID = rd.str()
	r.Turn = int(rd.int())
	for _, t := range []*vtime.Time{&r.ArrivalMs, &r.DispatchedMs, &r.FirstAdmitMs, &r.TerminalMs, &r.FirstTokenMs, &r.SecondTokenMs, &r.LastTokenMs} {
		*t = rd.time()
	}
	r.Tokens = int(rd.int())
	r.gapMs = rd.time()
	r.gapRun = uint32(rd.int())
	for _, x := range []*int{&r.InputLength, &r.RequestedOutput, &r.Reused, &r.FirstReused, &r.FirstG1, &r.FirstHost} {
		*x = int(rd.int())
	}
	r.HasHost = rd.bool()
	r.PrefillWorker = int(rd.int())
	r.DecodeWorker = int(rd.int())
	for _, t := range []*vtime.Time{&r.PrefillAdmitMs, &r.SourceHeldMs, &r.DestinationReservedMs, &r.DestinationActivatedMs, &r.DecodeAdmitMs, &r.SourceReleasedMs} {
		*t = rd.time()
	}
	r.DecodeReused = int(rd.int())
	if rd.bool() {
		r.Prefill = &PrefillTime{Passes: int(rd.int()), ComputeBoundMs: rd.time(), MemoryBoundMs: rd.time()}
	}
	if n := rd.list(); n >= 0 {
		r.Routing = make([]Routing, n)
		for i := range r.Routing {
			x := &r.Routing[i]
			x.Pool, x.Outcome = rd.str(), rd.str()
			for _, v := range []*int32{&x.Worker, &x.Schedule, &x.DPRank, &x.Overlap, &x.HostOverlap} {
				*v = int32(rd.int())
			}
			x.Policy = uint8(rd.int())
			x.HasHost = rd.bool()
		}
	}
	if n := rd.list(); n >= 0 {
		r.Admissions = make([]Admission, n)
		for i := range r.Admissions {
			a := &r.Admissions[i]
			a.Ordinal, a.PoolOrdinal = int(rd.int()), int(rd.int())
			a.Pool = rd.str()
			a.AtMs = rd.time()
			for _, v := range []*int{&a.Reused, &a.G1, &a.Host} {
				*v = int(rd.int())
			}
			a.HasHost, a.Readmission = rd.bool(), rd.bool()
		}
	}
	r.Readmissions = int(rd.int())
	r.Status = rd.str()
	n := rd.list()
	if n > 0 || r.gapRun > 0 {
		r.values = values
	}
	if n > 0 {
		r.gaps = make([]Gap, 0, n)
	}
	for range max(n, 0) {
		ms, count := rd.time(), uint32(rd.int())
		id := values.id(ms)
		values.counts[id] += uint64(count)
		values.closed += uint64(count)
		r.closedGaps += count
		r.gaps = append(r.gaps, Gap{ID: id, Count: count})
	}
}
