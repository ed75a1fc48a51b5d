package trace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kvsim/kvsim/core/vtime"
)

// This file reads the agentic_mooncake format
// (docs/model/config.md ("Traffic settings") and docs/model/agentic.md): the
// legacy flat rows of aisimulate's load_agentic_mooncake
// (crates/core/src/replay/loadgen/trace.rs, LegacyAgenticMooncakeRow). The
// versioned graph format with a schema header is not supported.
//
// A row has the mooncake fields (docs/traces.md; the same JSON rules and
// the same checks of hash_ids, input_length, output_length and
// output_token_ids) plus:
//
//   - request_id: required, a string that is not empty or only whitespace,
//     unique in the file.
//   - wait_for: optional array of request ids this request waits for. It
//     becomes ready when all of them have completed, plus delay, plus
//     tool_wait_ms. A dependency may appear later in the file than its
//     dependent. An empty array (like an absent or null one) makes a root.
//   - tool_wait_ms: optional number, finite and ≥ 0.
//
// Each row is a complete prompt (mooncake semantics, no accumulation).
//
// Plays. A play is a connected component of the dependency graph (rows
// linked by wait_for in either direction); a row that waits for nothing
// and that nothing waits for is a one-row play. Workload.Sessions are the
// plays ordered by their first row in the file; Session.Turns are the
// play's rows in file order; Turn.Deps are the indices in Session.Turns of
// the row's wait_for targets, in wait_for order. Session.ID is the
// session_id of the play's first row, or "play_<n>" (n = the play's
// 0-based index in Sessions) when that row has no or an empty session_id:
// session_id is informational and does not group rows, so two plays may
// share it.
//
// Timing. A root (a row without wait_for) arrives at its timestamp (absent
// = 0); after reading, the minimum root arrival of the whole file is
// subtracted from every root so the earliest is 0 (as for mooncake first
// turns, docs/model/traffic.md ("Turn timing")), and Session.ArrivalMs is the
// play's minimum root arrival. A root with a nonzero delay is an error (like a
// mooncake first turn); a root's tool_wait_ms is checked and then ignored
// (aisimulate adds it to dependency delays only, and a root has none), so
// roots have DelayMs and ToolWaitMs 0. A non-root row's timestamp is accepted
// and ignored (its arrival follows from its dependencies; aisimulate sets
// not_before 0); its DelayMs is delay or delay_ms (default 0) and its
// ToolWaitMs is tool_wait_ms (default 0). Non-root turns have ArrivalMs 0.
//
// Errors, besides the mooncake row errors, each at the line and column of
// the offending value: missing or blank request_id; a duplicate request_id
// (naming the line of the first); wait_for that is not an array of
// strings; a blank id, the row's own id or a repeated id in one wait_for;
// a nonzero delay on a root; a negative delay or tool_wait_ms. After the
// whole file: an unknown id in wait_for (the first in file order, at the
// reference), then a dependency cycle (its request ids in wait order,
// starting at the row of the cycle that comes first in the file, at that
// row's reference to the next one).
//
// Decisions where kvsim differs from aisimulate's legacy loader:
// empty hash_ids are accepted, as for mooncake (aisimulate rejects them
// here); null wait_for / tool_wait_ms mean absent, as null does for every
// known key (serde rejects null for those two non-Option fields); a root's
// nonzero delay is an error (aisimulate ignores it); plays are named from
// session_id rather than "legacy-play:<root request id>".

// agenticRow is what the builder keeps of an agentic row until finish.
type agenticRow struct {
	line      int
	reqID     string
	sessionID string    // "" when absent
	waitKey   string    // "wait_for" (the key as written, for messages)
	waitFor   []waitRef // empty for a root
}

// agenticBuilder accumulates agentic rows in file order; b.turns holds the
// matching turns.
type agenticBuilder struct {
	rows  []agenticRow
	byReq map[string]int32 // request id → row index
	refs  int              // total wait_for elements
	hasTS bool             // a root had a timestamp
}

const blankIDMsg = "request id must not be empty or only whitespace"

func blankID(id string) bool { return strings.TrimSpace(id) == "" }

// pushAgentic applies the agentic checks of one row (after the shared
// mooncake ones) and records it.
func (b *builder) pushAgentic(line int, r *rawRow, inputLength, outputLength int) *Error {
	a := b.ag
	if !r.present(fRequestID) {
		return b.errAt(line, 1, "request_id", "missing required field")
	}
	id := string(r.requestID)
	if blankID(id) {
		return b.errAt(line, r.col[fRequestID], r.key[fRequestID], blankIDMsg)
	}
	if first, dup := a.byReq[id]; dup {
		return b.errAt(line, r.col[fRequestID], r.key[fRequestID], fmt.Sprintf(
			"duplicate request id %q (first on line %d)", id, a.rows[first].line))
	}

	var seen map[string]int
	if len(r.waitFor) > 1 {
		seen = make(map[string]int, len(r.waitFor))
	}
	for i, ref := range r.waitFor {
		switch {
		case blankID(ref.id):
			return b.errAt(line, ref.col, elemField(r.key[fWaitFor], i), blankIDMsg)
		case ref.id == id:
			return b.errAt(line, ref.col, elemField(r.key[fWaitFor], i), fmt.Sprintf(
				"request %q waits for itself", id))
		}
		if seen != nil {
			if j, dup := seen[ref.id]; dup {
				return b.errAt(line, ref.col, elemField(r.key[fWaitFor], i), fmt.Sprintf(
					"duplicate request id %q (also %s)", ref.id, elemField(r.key[fWaitFor], j)))
			}
			seen[ref.id] = i
		}
	}
	root := len(r.waitFor) == 0

	var delay vtime.Time
	if r.present(fDelay) {
		if root {
			if r.delay != 0 {
				return b.errAt(line, r.col[fDelay], r.key[fDelay], fmt.Sprintf(
					"nonzero delay %s on root request %q (a request without wait_for)", fmtMs(r.delay), id))
			}
		} else {
			delay = r.delay
			if badMs(delay) {
				return b.errAt(line, r.col[fDelay], r.key[fDelay], fmt.Sprintf(
					"invalid delay %s: must be finite and non-negative", fmtMs(delay)))
			}
		}
	}
	var toolWait vtime.Time
	if r.present(fToolWaitMs) {
		if badMs(r.toolWaitMs) {
			return b.errAt(line, r.col[fToolWaitMs], r.key[fToolWaitMs], fmt.Sprintf(
				"invalid tool wait %s: must be finite and non-negative", fmtMs(r.toolWaitMs)))
		}
		if !root {
			toolWait = r.toolWaitMs
		}
	}

	content, out, err := b.content(line, r, inputLength)
	if err != nil {
		return err
	}

	var arrival vtime.Time
	if root && r.present(fTimestamp) {
		arrival = r.timestamp
		b.ag.hasTS = true
	}
	row := agenticRow{line: line, reqID: id}
	if r.present(fSessionID) {
		row.sessionID = string(r.sessionID)
	}
	if !root {
		row.waitKey = r.key[fWaitFor]
		row.waitFor = append([]waitRef(nil), r.waitFor...) // r.waitFor is reused by the scanner
		a.refs += len(r.waitFor)
	}
	a.byReq[id] = int32(len(a.rows))
	a.rows = append(a.rows, row)
	b.rows++
	b.turns = append(b.turns, Turn{
		RequestID:     id,
		Content:       content,
		RunLength:     b.blockSize,
		ContentLength: inputLength,
		OutputLength:  outputLength,
		OutputTokens:  out,
		DelayMs:       delay,
		ToolWaitMs:    toolWait,
		ArrivalMs:     arrival,
		Line:          line,
	})
	return nil
}

// finishAgentic resolves wait_for, rejects unknown ids and cycles, and
// groups the rows into plays.
func (b *builder) finishAgentic() (*Workload, *Error) {
	a := b.ag
	n := len(a.rows)

	// Resolve references, in file order.
	deps := make([][]int32, n)
	depBuf := make([]int32, a.refs)
	for i := range a.rows {
		row := &a.rows[i]
		if len(row.waitFor) == 0 {
			continue
		}
		ds := depBuf[:len(row.waitFor):len(row.waitFor)]
		depBuf = depBuf[len(row.waitFor):]
		for j, ref := range row.waitFor {
			d, ok := a.byReq[ref.id]
			if !ok {
				return nil, b.errAt(row.line, ref.col, elemField(row.waitKey, j), fmt.Sprintf(
					"unknown request id %q: no row has this request_id", ref.id))
			}
			ds[j] = d
		}
		deps[i] = ds
	}

	if cyc := findCycle(deps); cyc != nil {
		return nil, b.cycleError(cyc, deps)
	}

	// Plays: connected components (union-find over the undirected
	// edges), numbered by their first row.
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for i, ds := range deps {
		for _, d := range ds {
			if x, y := find(int32(i)), find(d); x != y {
				parent[max(x, y)] = min(x, y)
			}
		}
	}
	playOfComp := make([]int32, n)
	for i := range playOfComp {
		playOfComp[i] = -1
	}
	play := make([]int32, n)  // play of each row
	local := make([]int32, n) // index of each row in its play
	var sizes []int32
	var firstRow []int32
	for i := range n {
		c := find(int32(i))
		if playOfComp[c] < 0 {
			playOfComp[c] = int32(len(sizes))
			sizes = append(sizes, 0)
			firstRow = append(firstRow, int32(i))
		}
		p := playOfComp[c]
		play[i], local[i] = p, sizes[p]
		sizes[p]++
	}

	// Normalise root arrivals over the whole file.
	minArrival := vtime.Never
	for i := range n {
		if deps[i] == nil {
			minArrival = min(minArrival, b.turns[i].ArrivalMs)
		}
	}

	w := &Workload{
		Agentic:       true,
		Sessions:      make([]Session, len(sizes)),
		NumContentIDs: b.maxID,
		HasTimestamps: a.hasTS,
		Rows:          n,
	}
	all := make([]Turn, n)
	off := 0
	for p, size := range sizes {
		s := &w.Sessions[p]
		s.ID = a.rows[firstRow[p]].sessionID
		if s.ID == "" {
			s.ID = "play_" + strconv.Itoa(p)
		}
		s.ArrivalMs = vtime.Never
		s.Turns = all[off : off+int(size) : off+int(size)]
		off += int(size)
	}
	depLocal := make([]int32, a.refs)
	for i := range n {
		t := b.turns[i]
		s := &w.Sessions[play[i]]
		if ds := deps[i]; ds != nil {
			t.Deps = depLocal[:len(ds):len(ds)]
			depLocal = depLocal[len(ds):]
			for j, d := range ds {
				t.Deps[j] = local[d]
			}
		} else {
			t.ArrivalMs -= minArrival
			s.ArrivalMs = min(s.ArrivalMs, t.ArrivalMs)
		}
		s.Turns[local[i]] = t
	}
	return w, nil
}

// findCycle returns the rows of a dependency cycle, each waiting for the
// next and the last for the first, or nil when the graph is acyclic. The
// depth-first search is iterative (a long chain must not grow the stack)
// and visits rows and wait_for elements in file order, so the cycle found
// is deterministic.
func findCycle(deps [][]int32) []int32 {
	const (
		unvisited = iota
		onStack
		done
	)
	state := make([]uint8, len(deps))
	type frame struct {
		row  int32
		next int // index of the next wait_for element to follow
	}
	var stack []frame
	for start := range deps {
		if state[start] != unvisited {
			continue
		}
		state[start] = onStack
		stack = append(stack[:0], frame{row: int32(start)})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(deps[top.row]) {
				state[top.row] = done
				stack = stack[:len(stack)-1]
				continue
			}
			d := deps[top.row][top.next]
			top.next++
			switch state[d] {
			case unvisited:
				state[d] = onStack
				stack = append(stack, frame{row: d})
			case onStack:
				k := len(stack) - 1
				for stack[k].row != d {
					k--
				}
				cyc := make([]int32, 0, len(stack)-k)
				for _, f := range stack[k:] {
					cyc = append(cyc, f.row)
				}
				return cyc
			}
		}
	}
	return nil
}

// maxCycleNames bounds the request ids a cycle message lists.
const maxCycleNames = 16

// cycleError reports a cycle at its row that comes first in the file, at
// that row's wait_for element naming the next row of the cycle.
func (b *builder) cycleError(cyc []int32, deps [][]int32) *Error {
	first := 0
	for i, r := range cyc {
		if r < cyc[first] {
			first = i
		}
	}
	cyc = slices.Concat(cyc[first:], cyc[:first])
	var msg strings.Builder
	msg.WriteString("dependency cycle: ")
	for i, r := range cyc {
		if len(cyc) > maxCycleNames && i == maxCycleNames-1 {
			fmt.Fprintf(&msg, "… (%d more) … → ", len(cyc)-i)
			break
		}
		fmt.Fprintf(&msg, "%q → ", b.ag.rows[r].reqID)
	}
	fmt.Fprintf(&msg, "%q (each waits for the next)", b.ag.rows[cyc[0]].reqID)

	row := &b.ag.rows[cyc[0]]
	j := 0
	for k, d := range deps[cyc[0]] {
		if d == cyc[1%len(cyc)] {
			j = k
			break
		}
	}
	return b.errAt(row.line, row.waitFor[j].col, elemField(row.waitKey, j), msg.String())
}
