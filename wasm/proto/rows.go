package proto

import (
	"encoding/binary"
	"errors"
	"math"
)

// EncodeRows packs the request table compactly: a count, then per row the
// numbers (little endian: turn, input, g1, host, recomputed, prefill and
// decode worker and prefill passes as int32, TTFT and the compute- and
// memory-bound prefill ms as float64, status as one byte), then the ids and
// sessions, each as a uvarint length and its bytes.
func EncodeRows(rows []Row) []byte {
	b := make([]byte, 4, 4+len(rows)*(rowFixed+16))
	binary.LittleEndian.PutUint32(b, uint32(len(rows)))
	for _, r := range rows {
		for _, v := range []int{r.Turn, r.Input, r.G1, r.Host, r.Recomputed, r.Prefill, r.Decode, r.PrefillPasses} {
			b = binary.LittleEndian.AppendUint32(b, uint32(int32(v)))
		}
		for _, f := range []float64{r.TTFT, r.ComputeMs, r.MemoryMs} {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
		}
		b = append(b, statusCode(r.Status))
	}
	for _, r := range rows {
		b = binary.AppendUvarint(b, uint64(len(r.ID)))
		b = append(b, r.ID...)
		b = binary.AppendUvarint(b, uint64(len(r.Session)))
		b = append(b, r.Session...)
	}
	return b
}

// DecodeRows reverses EncodeRows.
func DecodeRows(b []byte) ([]Row, error) {
	bad := errors.New("malformed request rows")
	if len(b) < 4 {
		return nil, bad
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n < 0 || len(b) < 4+n*rowFixed {
		return nil, bad
	}
	rows := make([]Row, n)
	p := b[4:]
	for i := range rows {
		r := &rows[i]
		var v [8]int
		for k := range v {
			v[k] = int(int32(binary.LittleEndian.Uint32(p[4*k:])))
		}
		r.Turn, r.Input, r.G1, r.Host, r.Recomputed, r.Prefill, r.Decode, r.PrefillPasses = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		f := func(k int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(p[32+8*k:])) }
		r.TTFT, r.ComputeMs, r.MemoryMs = f(0), f(1), f(2)
		r.Status = statusName(p[56])
		p = p[rowFixed:]
	}
	str := func() (string, bool) {
		l, k := binary.Uvarint(p)
		if k <= 0 || uint64(len(p)-k) < l {
			return "", false
		}
		s := string(p[k : k+int(l)])
		p = p[k+int(l):]
		return s, true
	}
	for i := range rows {
		var ok1, ok2 bool
		rows[i].ID, ok1 = str()
		rows[i].Session, ok2 = str()
		if !ok1 || !ok2 {
			return nil, bad
		}
	}
	if len(p) != 0 {
		return nil, bad
	}
	return rows, nil
}

// rowFixed is one row's numbers in bytes.
const rowFixed = 8*4 + 3*8 + 1

var statuses = []string{"", "completed", "rejected", "canceled", "failed"}

func statusCode(s string) byte {
	for i, x := range statuses {
		if x == s {
			return byte(i)
		}
	}
	return 255
}

func statusName(c byte) string {
	if int(c) < len(statuses) {
		return statuses[c]
	}
	return "other"
}
