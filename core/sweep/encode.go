package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Header is the CSV header: one column per axis (named by its path as
// written), then the summary columns.
func (r *Result) Header() []string {
	h := make([]string, 0, len(r.Plan.Axes)+len(r.Columns))
	for _, a := range r.Plan.Axes {
		h = append(h, a.Path)
	}
	return append(h, r.Columns...)
}

// CSV encodes sweep.csv: the header, then one row per point in point
// order. A summary column that a point lacks is empty.
func (r *Result) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(r.Header())
	for i, row := range r.Rows {
		rec := r.Plan.Values(i)
		for _, c := range r.Columns {
			rec = append(rec, row[c])
		}
		w.Write(rec)
	}
	w.Flush()
	return b.Bytes()
}

// JSON encodes sweep.json: the config, the --set overrides, the axes with
// the full paths they set, then one object per point with its values and
// its summary as the report encodes it. One point per line.
func (r *Result) JSON() []byte {
	p := r.Plan
	var b bytes.Buffer
	b.WriteString("{\n  \"config\": ")
	b.Write(jsonString(p.Spec.Name))
	b.WriteString(",\n  \"set\": [")
	for i, s := range p.Spec.Sets {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(jsonString(s))
	}
	b.WriteString("],\n  \"vary\": [")
	for i, a := range p.Axes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    {\"path\": ")
		b.Write(jsonString(a.Path))
		b.WriteString(", \"targets\": [")
		for j, t := range a.Targets {
			if j > 0 {
				b.WriteString(", ")
			}
			b.Write(jsonString(t))
		}
		b.WriteString("], \"values\": [")
		for j, v := range a.Values {
			if j > 0 {
				b.WriteString(", ")
			}
			b.Write(jsonValue(v))
		}
		b.WriteString("]}")
	}
	b.WriteString("\n  ],\n  \"points\": [")
	for i, s := range r.Summaries {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    {\"point\": ")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(", \"values\": {")
		for a, v := range p.Values(i) {
			if a > 0 {
				b.WriteString(", ")
			}
			b.Write(jsonString(p.Axes[a].Path))
			b.WriteString(": ")
			b.Write(jsonValue(v))
		}
		b.WriteString("}, \"summary\": ")
		b.Write(s)
		b.WriteByte('}')
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes()
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// jsonValue is a varied value in sweep.json: a number when it is one, true,
// false or null for those YAML words, and otherwise the text as written.
func jsonValue(v string) []byte {
	switch v {
	case "null", "~", "Null", "NULL":
		return []byte("null")
	case "true", "false":
		return []byte(v)
	}
	if f, ok := number(v); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return strconv.AppendInt(nil, n, 10)
		}
		b, _ := json.Marshal(f)
		return b
	}
	return jsonString(v)
}

// number parses a varied value as a decimal number. Hex, octal (0o17, and
// 017 which YAML 1.1 reads as octal), digit separators and words such as
// .inf are left out: YAML and this parser might read them differently.
func number(v string) (float64, bool) {
	digits := strings.TrimLeft(v, "+-")
	if strings.ContainsAny(v, "_xXoO") || len(digits) > 1 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9' {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// Number returns a summary column's value at point i, and whether the
// point has it as a number.
func (r *Result) Number(i int, column string) (float64, bool) {
	s, ok := r.Rows[i][column]
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// XAxis picks a plot's x axis: the first numeric axis with more than one
// value, else the first numeric axis; -1 when no axis is numeric.
func (p *Plan) XAxis() int {
	x := -1
	for i := range p.Axes {
		if !p.Axes[i].Numeric() {
			continue
		}
		if len(p.Axes[i].Values) > 1 {
			return i
		}
		if x < 0 {
			x = i
		}
	}
	return x
}

// A Series is one line of a plot: the points that share their values on
// every axis but the x axis, in the x axis's order.
type Series struct {
	// Name is the other axes' values, joined with ", " and each written
	// as path=value when there are several other axes; "" when the x axis
	// is the only one.
	Name string
	X, Y []float64
}

// Series returns column against axis x, one series per combination of the
// other axes' values, in point order. Points that lack the column are left
// out.
func (r *Result) Series(x int, column string) []Series {
	p := r.Plan
	var out []Series
	index := map[string]int{}
	for i := range r.Rows {
		vals := p.Values(i)
		xv, ok := number(vals[x])
		if !ok {
			continue
		}
		var parts []string
		for a, v := range vals {
			if a == x {
				continue
			}
			if len(p.Axes) > 2 {
				v = p.Axes[a].Path + "=" + v
			}
			parts = append(parts, v)
		}
		name := strings.Join(parts, ", ")
		k, ok := index[name]
		if !ok {
			k = len(out)
			index[name] = k
			out = append(out, Series{Name: name})
		}
		if y, ok := r.Number(i, column); ok {
			out[k].X = append(out[k].X, xv)
			out[k].Y = append(out[k].Y, y)
		}
	}
	for k := range out {
		s := &out[k]
		idx := make([]int, len(s.X))
		for j := range idx {
			idx[j] = j
		}
		sort.SliceStable(idx, func(a, b int) bool { return s.X[idx[a]] < s.X[idx[b]] })
		xs, ys := make([]float64, len(idx)), make([]float64, len(idx))
		for j, o := range idx {
			xs[j], ys[j] = s.X[o], s.Y[o]
		}
		s.X, s.Y = xs, ys
	}
	return out
}

// Summary columns the sizing plots use (docs/model/cases.md: "restored"
// is the first-admission G2 reuse, "recomputed" the committed prefill tokens).
const (
	ColumnRestored   = "first_admission_host_reused_input_tokens"
	ColumnRecomputed = "committed_prefill_tokens"
	ColumnTTFTP50    = "median_ttft_ms"
	ColumnTTFTP99    = "p99_ttft_ms"
)
