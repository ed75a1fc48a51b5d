package proto

import (
	"encoding/binary"
	"errors"
	"math"
)

// EncodeRows packs the request table compactly: a count, then per row the
// numbers (little endian: turn, input, g1, host, recomputed, prefill and
// decode worker as int32, TTFT as float64, status as one byte), then the ids and sessions, each as a
// uvarint length and its bytes.
func EncodeRows(rows []Row) []byte {
	const fixed = 7*4 + 8 + 1
	b := make([]byte, 4, 4+len(rows)*(fixed+16))
	binary.LittleEndian.PutUint32(b, uint32(len(rows)))
	for _, r := range rows {
		for _, v := range []int{r.Turn, r.Input, r.G1, r.Host, r.Recomputed, r.Prefill, r.Decode} {
			b = binary.LittleEndian.AppendUint32(b, uint32(int32(v)))
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.TTFT))
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
	const fixed = 7*4 + 8 + 1
	if n < 0 || len(b) < 4+n*fixed {
		return nil, bad
	}
	rows := make([]Row, n)
	p := b[4:]
	for i := range rows {
		r := &rows[i]
		var v [7]int
		for k := range v {
			v[k] = int(int32(binary.LittleEndian.Uint32(p[4*k:])))
		}
		r.Turn, r.Input, r.G1, r.Host, r.Recomputed, r.Prefill, r.Decode = v[0], v[1], v[2], v[3], v[4], v[5], v[6]
		r.TTFT = math.Float64frombits(binary.LittleEndian.Uint64(p[28:]))
		r.Status = statusName(p[36])
		p = p[fixed:]
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
