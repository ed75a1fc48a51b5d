package record

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// A Window selects the lines a windowed passes.jsonl keeps (docs/record.md,
// "Windowed records"): a range of each rank's pass numbers, or of virtual
// time. The zero Window is the whole run.
type Window struct {
	// Spec is the window as written ("1000:2000", "120s:130s"); "" for
	// the whole run.
	Spec string
	// Time says From and To are virtual milliseconds; otherwise they are
	// pass numbers. Both bounds are inclusive; an open end is ±Inf.
	Time     bool
	From, To float64
}

// Whole reports whether w keeps every line.
func (w Window) Whole() bool { return w.Spec == "" }

// ParseWindow reads a window "A:B": A and B are both pass numbers (1000,
// counted per rank from 1) or both virtual times with a unit (120s,
// 1500ms, 2.5s); either may be left out for an open end ("5000:",
// ":90s"). A pass is in a time window when it overlaps it: it ends at or
// after A and starts at or before B.
func ParseWindow(s string) (Window, error) {
	bad := func(format string, args ...any) (Window, error) {
		return Window{}, fmt.Errorf("window %q: "+format+" (want A:B with pass numbers, like 1000:2000, or virtual times, like 120s:130s or 1500ms:2500ms; either end may be left out)", append([]any{s}, args...)...)
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return bad("no ':'")
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == "" && b == "" {
		return bad("both ends are left out")
	}
	w := Window{Spec: s, From: math.Inf(-1), To: math.Inf(1)}
	kind := -1 // 0 passes, 1 time
	for i, end := range []string{a, b} {
		if end == "" {
			continue
		}
		v, k, err := windowEnd(end)
		if err != nil {
			return bad("%v", err)
		}
		if kind >= 0 && k != kind {
			return bad("one end is a pass number and the other a time")
		}
		kind = k
		if i == 0 {
			w.From = v
		} else {
			w.To = v
		}
	}
	w.Time = kind == 1
	if w.From > w.To {
		return bad("it ends before it starts")
	}
	return w, nil
}

// windowEnd reads one end: a pass number (kind 0) or a time in ms (kind 1).
func windowEnd(s string) (float64, int, error) {
	num, scale := s, 0.0
	switch {
	case strings.HasSuffix(s, "ms"):
		num, scale = strings.TrimSuffix(s, "ms"), 1
	case strings.HasSuffix(s, "s"):
		num, scale = strings.TrimSuffix(s, "s"), 1000
	}
	if scale == 0 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return 0, 0, fmt.Errorf("%q is neither a pass number (1 or more) nor a time with a unit (s, ms)", s)
		}
		return float64(n), 0, nil
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, 0, fmt.Errorf("%q is not a time of 0 or more", s)
	}
	return v * scale, 1, nil
}

// has reports whether pass p of a rank, entry pe, is in the window.
func (w Window) has(pe *passEntry, p int) bool {
	if w.Whole() {
		return true
	}
	if w.Time {
		return float64(pe.end) >= w.From && float64(pe.start) <= w.To
	}
	return float64(p) >= w.From && float64(p) <= w.To
}

// past reports whether pass p of a rank, entry pe, and every later pass of
// the rank are after the window.
func (w Window) past(pe *passEntry, p int) bool {
	if w.Whole() {
		return false
	}
	if w.Time {
		return float64(pe.start) > w.To
	}
	return float64(p) > w.To
}

// Windowed is the window the record was written with ("" when it holds the
// whole run: a live record, or one decoded from a full passes.jsonl).
func (r *Record) Windowed() string { return r.window }

// FirstPass is the first pass of rank the record holds: 1, or in a windowed
// record the first pass of the window (Seek, Info and Events refuse the
// passes before it).
func (r *Record) FirstPass(rank int) int {
	if rank < 0 || rank >= len(r.ranks) {
		return 1
	}
	return max(r.ranks[rank].first, 1)
}

// checkPass says why pass of rank is not in the record, or nil.
func (r *Record) checkPass(rank, pass int) error {
	if rank < 0 || rank >= len(r.ranks) {
		return fmt.Errorf("no rank %d (the record has %d)", rank, len(r.ranks))
	}
	rl := r.ranks[rank]
	if first := r.FirstPass(rank); pass < first && pass >= 1 && pass <= rl.lines() {
		return fmt.Errorf("rank %d: pass %d is before the window this record keeps (--capture-window %s: passes %d to %d)",
			rank, pass, r.window, first, rl.lines())
	}
	if pass < 1 || pass > rl.lines() {
		return fmt.Errorf("rank %d has passes 1 to %d; no pass %d", rank, rl.lines(), pass)
	}
	return nil
}

// baseG1 is the base line's G1 state as changes that rebuild it from an
// empty pool: the slots that are not free, idle ones last in queue order
// (head first) so that applying them rebuilds the eviction queue.
func baseG1(r *Record, st *g1State, names *nameList) [][4]any {
	var out [][4]any
	add := func(i int32) {
		names.req(st.owner[i])
		out = append(out, [4]any{i, string(stateChars[st.code[i]]), names.block(st.block[i]), r.Request(st.owner[i])})
	}
	for i, c := range st.code {
		if c != codeFree && c != codeIdle {
			add(int32(i))
		}
	}
	for q := st.head; q >= 0; q = st.next[q] {
		add(q)
	}
	return out
}

// baseOps are the operations that rebuild st from an empty domain: every
// entry's state in the order the entries were added (so entries outside
// the policy list keep their relative order), then the list in eviction
// order.
func (st *g2State) baseOps() []g2Op {
	var ents []int32
	for i, k := range st.byBlock.keys {
		if k >= 0 {
			ents = append(ents, st.byBlock.vals[i])
		}
	}
	sort.Slice(ents, func(i, j int) bool { return st.added[ents[i]] < st.added[ents[j]] })
	var ops []g2Op
	for _, e := range ents {
		ops = append(ops, g2Op{block: st.blocks[e], op: st.state[e]})
	}
	for e := st.head; e >= 0; e = st.next[e] {
		ops = append(ops, g2Op{block: st.blocks[e], op: opListIn})
	}
	return ops
}
