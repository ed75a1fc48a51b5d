package state

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/core/numfmt"
	"github.com/kvsim/kvsim/wasm/proto"
)

// Thousands writes n with comma separators: 15568 → "15,568".
func Thousands(n int64) string { return numfmt.Thousands(n) }

// Ms writes a time in milliseconds with at most 3 decimals ("–" for a
// missing value, written as a negative number).
func Ms(v float64) string {
	if v < 0 || math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// Duration writes a wall time given in milliseconds for people: whole
// milliseconds below 10 s ("194 ms", "1,467 ms"), seconds with one decimal
// above ("14.2 s"); "–" for a missing value.
func Duration(ms float64) string {
	switch {
	case ms < 0 || math.IsNaN(ms):
		return "–"
	case ms < 10000:
		return numfmt.Thousands(int64(math.Round(ms))) + " ms"
	}
	return strconv.FormatFloat(math.Round(ms/100)/10, 'f', 1, 64) + " s"
}

// Percent writes part/whole as a percentage with one decimal.
func Percent(part, whole int64) string {
	if whole <= 0 {
		return "–"
	}
	return strconv.FormatFloat(math.Round(float64(part)*1000/float64(whole))/10, 'f', 1, 64) + "%"
}

// A Column is one column of the request table.
type Column struct{ Key, Label string }

// Columns are the request table's columns.
var Columns = []Column{
	{"id", "request"}, {"turn", "turn"}, {"input", "input"}, {"ttft", "TTFT ms"},
	{"g1", "G1 reused"}, {"host", "restored"}, {"recomputed", "recomputed"},
}

// PDColumn is the extra column of a P/D run: the prefill and the decode
// worker of each request.
var PDColumn = Column{"pd", "prefill → decode"}

// WorkerColumn is the extra column of an aggregated run on more than one
// worker: the worker each request was routed to.
var WorkerColumn = Column{"worker", "worker"}

// WorkerCell is a row's "worker" cell in an aggregated run ("W2"; "–"
// when it was never placed).
func WorkerCell(r proto.Row) string {
	if r.Prefill < 0 {
		return "–"
	}
	return "W" + strconv.Itoa(r.Prefill)
}

// BoundColumns are the extra columns of a run whose timing records what
// bounds each pass (roofline, trained_physics): each request's prefill
// passes and their step times by bound (requests.jsonl's prefill_passes,
// prefill_compute_bound_ms, prefill_memory_bound_ms).
var BoundColumns = []Column{{"passes", "prefill passes"}, {"compute", "compute-bound ms"}, {"memory", "memory-bound ms"}}

// TableColumns are the columns of a run's table (pd: the run has P/D
// roles; workers: an aggregated run's workers when more than one, else 0;
// bounds: the run records its prefill time by bound).
func TableColumns(pd bool, workers int, bounds bool) []Column {
	cols := Columns
	if bounds {
		cols = append(slices.Clip(cols), BoundColumns...)
	}
	switch {
	case pd:
		return append(slices.Clip(cols), PDColumn)
	case workers > 1:
		return append(slices.Clip(cols), WorkerColumn)
	}
	return cols
}

// PDCell is a row's "prefill → decode" cell: the workers' indices in their
// pools ("–" without P/D).
func PDCell(r proto.Row) string {
	if r.Decode < 0 {
		return "–"
	}
	return "P" + strconv.Itoa(r.Prefill) + " → D" + strconv.Itoa(r.Decode)
}

// SortRows sorts a copy of rows by a column; ties keep request order.
func SortRows(rows []proto.Row, key string, desc bool) []proto.Row {
	out := slices.Clone(rows)
	by := func(a, b proto.Row) int {
		switch key {
		case "turn":
			return cmp.Compare(a.Turn, b.Turn)
		case "input":
			return cmp.Compare(a.Input, b.Input)
		case "ttft":
			return cmp.Compare(a.TTFT, b.TTFT)
		case "g1":
			return cmp.Compare(a.G1, b.G1)
		case "host":
			return cmp.Compare(a.Host, b.Host)
		case "recomputed":
			return cmp.Compare(a.Recomputed, b.Recomputed)
		case "passes":
			return cmp.Compare(a.PrefillPasses, b.PrefillPasses)
		case "compute":
			return cmp.Compare(a.ComputeMs, b.ComputeMs)
		case "memory":
			return cmp.Compare(a.MemoryMs, b.MemoryMs)
		case "pd", "worker":
			return cmp.Or(cmp.Compare(a.Prefill, b.Prefill), cmp.Compare(a.Decode, b.Decode))
		}
		return 0 // "id": request order
	}
	slices.SortStableFunc(out, func(a, b proto.Row) int {
		if desc {
			return by(b, a)
		}
		return by(a, b)
	})
	return out
}

// MaxSweepWorkers bounds the sweep view's Web Workers.
const MaxSweepWorkers = 8

// SweepWorkers reads the sweep view's Web Workers field: a whole number
// from 1 to MaxSweepWorkers.
func SweepWorkers(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > MaxSweepWorkers {
		return 0, fmt.Errorf("Web Workers: %q is not a whole number from 1 to %d", v, MaxSweepWorkers)
	}
	return n, nil
}

// A PlacementRow is one session of the "where each session went" table:
// the worker of each turn ("W2"; "–" for a turn never placed).
type PlacementRow struct {
	Session string
	Workers []string
}

// SessionPlacement is where each session's turns went in an aggregated
// run on several workers: the first maxSessions sessions (in request
// order), their first maxTurns turns; more tells whether any was left
// out; turns is the widest row's turn count.
func SessionPlacement(rows []proto.Row, maxSessions, maxTurns int) (out []PlacementRow, turns int, more bool) {
	at := map[string]int{}
	for _, r := range rows {
		i, ok := at[r.Session]
		if !ok {
			if len(out) == maxSessions {
				more = true
				continue
			}
			i = len(out)
			at[r.Session] = i
			out = append(out, PlacementRow{Session: r.Session})
		}
		if r.Turn >= maxTurns {
			more = true
			continue
		}
		p := &out[i]
		for len(p.Workers) <= r.Turn {
			p.Workers = append(p.Workers, "–")
		}
		p.Workers[r.Turn] = WorkerCell(r)
		turns = max(turns, len(p.Workers))
	}
	return out, turns, more
}

// TurnHeaders are the placement table's turn columns: "t0", "t1", ….
func TurnHeaders(n int) []string {
	h := make([]string, n)
	for i := range h {
		h[i] = "t" + strconv.Itoa(i)
	}
	return h
}

// workerTints are light Okabe–Ito tints, one per worker (cycled).
var workerTints = []string{"#fbe3b8", "#cfe6f6", "#c9ece0", "#f9f3bf", "#c6dcf0", "#f8d5c2", "#efd6e6"}

// WorkerStyle is a placement cell's background: one tint per worker.
func WorkerStyle(cell string) string {
	n, err := strconv.Atoi(strings.TrimPrefix(cell, "W"))
	if err != nil || !strings.HasPrefix(cell, "W") {
		return ""
	}
	return "background:" + workerTints[n%len(workerTints)]
}
