package report

import (
	"math"
	"strconv"

	"github.com/kvsim/kvsim/core/vtime"
)

// obj writes one JSON object with keys in the order they are added. The
// report's key order is part of its format (golden files compare bytes).
type obj struct {
	b     []byte
	first bool
}

func newObj(b []byte) *obj {
	return &obj{b: append(b, '{'), first: true}
}

func (o *obj) key(k string) {
	if !o.first {
		o.b = append(o.b, ", "...)
	}
	o.first = false
	o.b = appendQuoted(o.b, k)
	o.b = append(o.b, ": "...)
}

// appendQuoted is strconv.AppendQuote(b, k). Printable ASCII without a
// quote or backslash (every key, most values) comes out as it is, so it is
// copied without AppendQuote's decoding rune by rune, which took a tenth
// of a Mooncake run's requests.jsonl under wasm.
func appendQuoted(b []byte, k string) []byte {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, k)
		}
	}
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"')
}

func (o *obj) str(k, v string) *obj {
	o.key(k)
	o.b = appendQuoted(o.b, v)
	return o
}

func (o *obj) int(k string, v int64) *obj {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
	return o
}

func (o *obj) bool(k string, v bool) *obj {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
	return o
}

// num writes a float the way encoding/json does (shortest round-trip
// form, exponent only for very small or large magnitudes); NaN and Inf,
// which JSON cannot hold, become 0.
func (o *obj) num(k string, v float64) *obj {
	o.key(k)
	o.b = appendFloat(o.b, v)
	return o
}

// opt writes time v unless it is unset (a time that did not happen is
// omitted).
func (o *obj) opt(k string, v vtime.Time) *obj {
	if !v.IsSet() {
		return o
	}
	return o.num(k, float64(v))
}

func (o *obj) raw(k string, v []byte) *obj {
	o.key(k)
	o.b = append(o.b, v...)
	return o
}

func (o *obj) end() []byte { return append(o.b, '}') }

func appendFloat(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '0')
	}
	abs := math.Abs(v)
	f := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		f = 'e'
	}
	return strconv.AppendFloat(b, v, f, -1, 64)
}
