package report

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/kvsim/kvsim/core/vtime"
)

// EncodeRecords encodes the records for which keep is true (all of them
// when keep is nil), so that another process can take them into a merged
// report (DecodeRecords): a run split across processes, each simulating
// some of its workers (docs/model/engine.md ("Sharded runs")). Nothing a
// report reads is lost: prediction.json and requests.jsonl of the decoded
// records are those of the encoded ones. The encoding is written out
// field by field (a reflect codec took about 0.3 s a merge of the Mooncake
// run's records under wasm); TestRecordsRoundTrip sets every exported
// field, so a field added to Request and not here fails it.
func EncodeRecords(recs []Request, keep func(*Request) bool) ([]byte, error) {
	w := &writer{}
	n := 0
	for i := range recs {
		if keep == nil || keep(&recs[i]) {
			n++
		}
	}
	w.int(int64(n))
	for i := range recs {
		if r := &recs[i]; keep == nil || keep(r) {
			w.request(r)
		}
	}
	return w.b, nil
}

// DecodeRecords reads what EncodeRecords wrote. The records share one new
// table of gap values. Bytes that are not such an encoding give an error.
func DecodeRecords(b []byte) ([]Request, error) {
	rd := &reader{b: b}
	n := rd.int()
	if rd.err != nil || n < 0 || n > int64(len(b)) {
		return nil, errRecords
	}
	values := NewGapValues()
	out := make([]Request, n)
	for i := range out {
		rd.request(&out[i], values)
		if rd.err != nil {
			return nil, rd.err
		}
	}
	if len(rd.b) != 0 {
		return nil, errRecords
	}
	return out, nil
}

var errRecords = errors.New("decoding records: not an encoding of records")

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
