package trace

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/kvsim/kvsim/core/vtime"
)

// Trace formats accepted by Read.
const (
	FormatMooncake      = "mooncake"
	FormatMooncakeDelta = "mooncake-delta"
	// FormatAgenticMooncake is aisimulate's legacy agentic rows: mooncake
	// rows plus request_id, wait_for and tool_wait_ms, grouped into plays
	// (rules at the top of agentic.go and in docs/traces.md).
	FormatAgenticMooncake = "agentic_mooncake"
	// FormatWeka is the AgentX corpus: nested session objects lowered to
	// plays (weka.go).
	FormatWeka = "weka"
)

// Options says how to read a trace.
type Options struct {
	// Name is the file name used in error positions ("<trace>" if empty).
	Name string
	// Format is FormatMooncake (also when empty), FormatMooncakeDelta or
	// FormatAgenticMooncake. All three share the mooncake row schema;
	// mooncake-delta sets Workload.Accumulate, agentic_mooncake adds
	// request_id (required), wait_for and tool_wait_ms and sets
	// Workload.Agentic (see agentic.go).
	Format string
	// BlockSize is the trace block size (traffic.source.block_size): the
	// number of tokens one hash id stands for. It must be positive, except
	// for weka, whose corpus embeds it: there 0 takes the embedded size and
	// a positive value must equal it.
	BlockSize int
	// NestedTimestampBasis is weka's traffic.source.nested_timestamp_basis:
	// auto (also when empty), absolute or relative.
	NestedTimestampBasis string
}

// Read parses a mooncake or mooncake-delta JSONL trace
// (docs/model/traffic.md), or an agentic_mooncake trace
// (docs/model/agentic.md; its own rules are listed at the top of agentic.go),
// into a Workload.
//
// Rules, with their source (see docs/traces.md for the full list):
//   - One JSON object per line; lines that are empty or only whitespace
//     are skipped, a trailing "\r" is dropped (Rust's lines(), used by
//     aisimulate's Trace::from_mooncake). Lines are numbered physically,
//     blank lines included.
//   - Rows of a session are its turns in file order; rows need not be
//     contiguous; sessions are ordered by first appearance. A row without
//     session_id is its own session "request_<line>" (trace.rs
//     MooncakeTraceBuilder::push). Like there, an explicit session_id that
//     equals such a generated name joins that session.
//   - Hash ids are interned in first-seen order over the whole file, all
//     ids of a row included even when input_length truncates the row
//     (trace.rs HashIdInterner::intern_all). Turn.Content keeps only the
//     ids the truncated expansion uses: ceil(ContentLength / BlockSize).
//   - Delays and the timestamp rules follow trace.rs push: a later turn
//     without delay but with a timestamp takes the difference to the most
//     recent earlier timestamp of its session (rows without a timestamp do
//     not reset it) and is an error when there is none.
//   - Arrivals: turn 0's timestamp (absent = 0) minus the minimum over all
//     sessions (docs/model/traffic.md ("Turn timing"); aisimulate's
//     normalize_session_starts ignores absent timestamps when taking the
//     minimum, but the published examples need absent = 0: a Decision).
//   - A row with input_length 0 or empty hash_ids is accepted: aisimulate's
//     predict path (new_trace / new_concurrency) does not run the stricter
//     Trace::validate.
//   - An empty trace (no rows) is an error ("did not contain any
//     requests" in trace.rs).
//
// Errors are *Error values with the line and byte column of the offending
// value, except an error returned by r itself, which is wrapped. Read never
// panics on any input.
func Read(r io.Reader, opt Options) (*Workload, error) {
	name := opt.Name
	if name == "" {
		name = "<trace>"
	}
	switch opt.Format {
	case "", FormatMooncake, FormatMooncakeDelta, FormatAgenticMooncake, FormatWeka:
	default:
		return nil, &Error{File: name, Path: "format", Msg: fmt.Sprintf("unsupported trace format %q (want %q, %q, %q or %q)",
			opt.Format, FormatMooncake, FormatMooncakeDelta, FormatAgenticMooncake, FormatWeka)}
	}
	if opt.BlockSize <= 0 && !(opt.Format == FormatWeka && opt.BlockSize == 0) {
		return nil, &Error{File: name, Path: "block_size", Msg: fmt.Sprintf("trace block size must be positive, got %d", opt.BlockSize)}
	}
	if r == nil {
		return nil, &Error{File: name, Msg: "nil reader"}
	}
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: reading trace: %w", name, err)
	}
	if opt.Format == FormatWeka {
		return readWeka(name, data, opt)
	}
	b := newBuilder(name, opt, bytes.Count(data, []byte{'\n'})+1)
	sc := &scanner{name: name, agentic: b.ag != nil}
	var row rawRow
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if blank(line) {
			continue
		}
		sc.lineNo = lineNo
		sc.line = line
		if !utf8.Valid(line) {
			return nil, sc.errAt(invalidUTF8At(line), "", "invalid UTF-8")
		}
		if err := sc.parseRow(&row); err != nil {
			return nil, err
		}
		if err := b.push(lineNo, &row); err != nil {
			return nil, err
		}
	}
	if b.rows == 0 {
		return nil, &Error{File: name, Msg: "trace contains no rows"}
	}
	if b.ag != nil {
		w, err := b.finishAgentic()
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	return b.finish(), nil
}

// blank reports whether a line is empty or only whitespace (the ASCII
// whitespace Rust's str::trim removes; other Unicode spaces are not
// expected in traces and are reported as invalid JSON).
func blank(line []byte) bool {
	for _, c := range line {
		switch c {
		case ' ', '\t', '\r', '\n', '\v', '\f':
		default:
			return false
		}
	}
	return true
}

func invalidUTF8At(line []byte) int {
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

// sessionState is what the builder tracks per session while reading.
type sessionState struct {
	id      string
	turns   int
	firstTS vtime.Time // turn 0's timestamp, 0 when absent
	lastTS  vtime.Time // most recent timestamp of any row of the session
	hasTS   bool       // lastTS is set
	hasTS0  bool       // turn 0 had a timestamp
}

// builder accumulates rows in file order.
type builder struct {
	name      string
	blockSize int
	accum     bool

	sessions  []sessionState
	byID      map[string]int32
	turns     []Turn  // file order
	turnSess  []int32 // session index of each turn
	rows      int
	interned  interner
	maxID     uint32 // one more than the largest content id stored
	ids       arena
	strs      []byte // request ids, concatenated; turned into one string at the end
	reqOffset []int

	nameBuf []byte

	ag *agenticBuilder // non-nil for agentic_mooncake
}

func newBuilder(name string, opt Options, rowsHint int) *builder {
	if rowsHint > 1<<20 {
		rowsHint = 1 << 20 // a hint only; a bad file must not reserve huge memory
	}
	if opt.Format == FormatAgenticMooncake {
		return &builder{
			name:      name,
			blockSize: opt.BlockSize,
			turns:     make([]Turn, 0, rowsHint),
			ag:        &agenticBuilder{byReq: make(map[string]int32)},
		}
	}
	return &builder{
		name:      name,
		blockSize: opt.BlockSize,
		accum:     opt.Format == FormatMooncakeDelta,
		byID:      make(map[string]int32, rowsHint/4+1),
		turns:     make([]Turn, 0, rowsHint),
		turnSess:  make([]int32, 0, rowsHint),
		reqOffset: make([]int, 0, 2*rowsHint),
	}
}

func (b *builder) errAt(line, col int, field, msg string) *Error {
	return &Error{File: b.name, Line: line, Col: col, Path: field, Msg: msg}
}

func fmtMs(t vtime.Time) string { return strconv.FormatFloat(float64(t), 'g', -1, 64) }

// badMs reports whether v is not a usable delay: not finite, or negative.
func badMs(v vtime.Time) bool {
	return math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < 0
}

// push applies the semantic checks of one row, in the order of
// aisimulate's MooncakeTraceBuilder::push, and records the turn. The
// checks up to output_token_ids are shared with agentic_mooncake, whose
// rows then continue in pushAgentic.
func (b *builder) push(line int, r *rawRow) *Error {
	if !r.present(fHashIDs) {
		return b.errAt(line, 1, "hash_ids", "missing required field")
	}
	hi, lo := bits.Mul64(uint64(len(r.hashIDs)), uint64(b.blockSize))
	if hi != 0 || lo > math.MaxInt {
		return b.errAt(line, r.col[fHashIDs], r.key[fHashIDs], "hash_ids capacity overflows")
	}
	capacity := int(lo)
	inputLength := capacity
	if r.present(fInputLength) {
		inputLength = int(r.inputLength) // uintField bounded it by MaxInt
		if inputLength > capacity {
			return b.errAt(line, r.col[fInputLength], r.key[fInputLength], fmt.Sprintf(
				"%d exceeds the hash_ids capacity %d (%d hash ids × block size %d)",
				inputLength, capacity, len(r.hashIDs), b.blockSize))
		}
	}
	if !r.present(fOutputLength) {
		return b.errAt(line, 1, "output_length", "missing required field")
	}
	outputLength := int(r.outputLength)
	if r.present(fOutputTokenIDs) && len(r.outputIDs) != outputLength {
		return b.errAt(line, r.col[fOutputTokenIDs], r.key[fOutputTokenIDs], fmt.Sprintf(
			"has %d ids but %s is %d", len(r.outputIDs), r.key[fOutputLength], outputLength))
	}
	if b.ag != nil {
		return b.pushAgentic(line, r, inputLength, outputLength)
	}

	// Session.
	var si int32
	if r.present(fSessionID) {
		var ok bool
		if si, ok = b.byID[string(r.sessionID)]; !ok {
			si = b.newSession(string(r.sessionID))
		}
	} else {
		b.nameBuf = strconv.AppendInt(append(b.nameBuf[:0], "request_"...), int64(line), 10)
		var ok bool
		if si, ok = b.byID[string(b.nameBuf)]; !ok {
			si = b.newSession(string(b.nameBuf))
		}
	}
	st := &b.sessions[si]

	// Delay.
	hasTS := r.present(fTimestamp)
	var delay vtime.Time
	derived := false
	switch {
	case st.turns == 0:
		if r.present(fDelay) && r.delay != 0 {
			return b.errAt(line, r.col[fDelay], r.key[fDelay], fmt.Sprintf(
				"nonzero delay %s on the first turn of session %q", fmtMs(r.delay), st.id))
		}
	case r.present(fDelay):
		delay = r.delay
	case hasTS:
		if !st.hasTS {
			return b.errAt(line, r.col[fTimestamp], r.key[fTimestamp], fmt.Sprintf(
				"cannot derive the delay of turn %d of session %q: no earlier row of the session has a timestamp",
				st.turns, st.id))
		}
		delay = r.timestamp - st.lastTS
		derived = true
	}
	if badMs(delay) {
		if derived {
			return b.errAt(line, r.col[fTimestamp], r.key[fTimestamp], fmt.Sprintf(
				"invalid delay %s (timestamp %s minus the previous timestamp %s of session %q): must be finite and non-negative",
				fmtMs(delay), fmtMs(r.timestamp), fmtMs(st.lastTS), st.id))
		}
		return b.errAt(line, r.col[fDelay], r.key[fDelay], fmt.Sprintf(
			"invalid delay %s: must be finite and non-negative", fmtMs(delay)))
	}

	content, out, err := b.content(line, r, inputLength)
	if err != nil {
		return err
	}

	// Request id: offsets into b.strs, resolved in finish.
	reqStart := len(b.strs)
	if r.present(fRequestID) {
		b.strs = append(b.strs, r.requestID...)
	}
	b.reqOffset = append(b.reqOffset, reqStart, len(b.strs))

	if st.turns == 0 {
		st.hasTS0 = hasTS
		if hasTS {
			st.firstTS = r.timestamp
		}
	}
	if hasTS {
		st.lastTS = r.timestamp
		st.hasTS = true
	}
	st.turns++
	b.rows++
	b.turns = append(b.turns, Turn{
		Content:       content,
		RunLength:     b.blockSize,
		ContentLength: inputLength,
		OutputLength:  outputLength,
		OutputTokens:  out,
		DelayMs:       delay,
		Line:          line,
	})
	b.turnSess = append(b.turnSess, si)
	return nil
}

// content interns every hash id of a row in order and returns the ids the
// truncated expansion uses, and the row's explicit output ids (or nil).
func (b *builder) content(line int, r *rawRow, inputLength int) (content, out []uint32, err *Error) {
	used := 0
	if inputLength > 0 {
		used = (inputLength-1)/b.blockSize + 1
	}
	content = b.ids.alloc(used)
	for i, h := range r.hashIDs {
		id, ok := b.interned.lookup(h)
		if !ok {
			if b.interned.n >= GeneratedTokenBase {
				return nil, nil, b.errAt(line, r.col[fHashIDs], r.key[fHashIDs], "more distinct hash ids than token ids below GeneratedTokenBase")
			}
			id = b.interned.add(h)
		}
		if i < used {
			content[i] = id
			if id >= b.maxID {
				b.maxID = id + 1
			}
		}
	}
	if r.present(fOutputTokenIDs) {
		out = b.ids.alloc(len(r.outputIDs))
		copy(out, r.outputIDs)
	}
	return content, out, nil
}

func (b *builder) newSession(id string) int32 {
	si := int32(len(b.sessions))
	b.sessions = append(b.sessions, sessionState{id: id})
	b.byID[id] = si
	return si
}

func (b *builder) finish() *Workload {
	w := &Workload{
		Accumulate:    b.accum,
		Sessions:      make([]Session, len(b.sessions)),
		NumContentIDs: b.maxID,
		Rows:          b.rows,
	}
	strs := string(b.strs)
	for i := range b.turns {
		if a, z := b.reqOffset[2*i], b.reqOffset[2*i+1]; z > a {
			b.turns[i].RequestID = strs[a:z]
		}
	}
	// Sessions carve one backing array of turns. When every session's rows
	// are contiguous in the file (session indices never decrease, the
	// usual layout), b.turns already is that array; otherwise the turns
	// are regrouped into a new one.
	all := b.turns
	grouped := true
	for i := 1; i < len(b.turnSess); i++ {
		if b.turnSess[i] < b.turnSess[i-1] {
			grouped = false
			break
		}
	}
	if !grouped {
		all = make([]Turn, len(b.turns))
	}
	off := 0
	minArrival := vtime.Never
	for i := range b.sessions {
		st := &b.sessions[i]
		n := 0
		if grouped {
			n = st.turns
		}
		w.Sessions[i] = Session{ID: st.id, ArrivalMs: st.firstTS, Turns: all[off : off+n : off+st.turns]}
		off += st.turns
		if st.firstTS < minArrival {
			minArrival = st.firstTS
		}
		if st.hasTS0 {
			w.HasTimestamps = true
		}
	}
	for i := range w.Sessions {
		w.Sessions[i].ArrivalMs -= minArrival
	}
	if !grouped {
		for i := range b.turns {
			s := &w.Sessions[b.turnSess[i]]
			s.Turns = append(s.Turns, b.turns[i])
		}
	}
	return w
}

// readAll is io.ReadAll with one allocation when the reader knows its
// size (bytes.Reader, strings.Reader, bytes.Buffer, or a file's Stat).
func readAll(r io.Reader) ([]byte, error) {
	size := -1
	switch v := r.(type) {
	case interface{ Len() int }:
		size = v.Len()
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < 1<<40 {
			size = int(fi.Size())
		}
	}
	if size < 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, 0, size+1) // +1 so the final Read sees io.EOF without growing
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// arena hands out uint32 slices from large chunks so a trace of many
// small rows does not allocate per row. Slices are capped (full slice
// expressions) so an append by a caller cannot spill into a neighbour.
type arena struct{ buf []uint32 }

const arenaChunk = 1 << 16

func (a *arena) alloc(n int) []uint32 {
	if n == 0 {
		return nil
	}
	if cap(a.buf)-len(a.buf) < n {
		size := arenaChunk
		if n > size/4 {
			return make([]uint32, n)
		}
		a.buf = make([]uint32, 0, size)
	}
	l := len(a.buf)
	a.buf = a.buf[:l+n]
	return a.buf[l : l+n : l+n]
}

// interner assigns token ids 0, 1, … to hash ids in first-seen order.
//
// Mooncake traces usually number hash ids densely from 0 or 1, so ids
// below a bound live in a slice indexed by the hash id (a cache-friendly
// lookup instead of a hash-map probe, which dominated the read time);
// sparse ids (e.g. 64-bit hashes) go to a map. The slice grows only while
// it stays within a constant factor of the number of distinct ids, so a
// sparse trace cannot make it large. An id stored in the map before the
// slice grew over it is still found: a slice miss falls back to the map.
type interner struct {
	dense  []uint32 // token id + 1 per hash id; 0 = not seen
	sparse map[uint64]uint32
	n      uint32 // distinct hash ids so far
}

func (in *interner) lookup(h uint64) (uint32, bool) {
	if h < uint64(len(in.dense)) {
		if v := in.dense[h]; v != 0 {
			return v - 1, true
		}
	}
	if len(in.sparse) > 0 {
		v, ok := in.sparse[h]
		return v, ok
	}
	return 0, false
}

// add interns a hash id that lookup did not find.
func (in *interner) add(h uint64) uint32 {
	id := in.n
	in.n++
	if h >= uint64(len(in.dense)) {
		limit := 8*uint64(in.n) + 1<<16
		if h < limit {
			size := max(uint64(2*len(in.dense)), h+1, 1<<12)
			size = min(size, limit)
			grown := make([]uint32, size)
			copy(grown, in.dense)
			in.dense = grown
		}
	}
	if h < uint64(len(in.dense)) {
		in.dense[h] = id + 1
		return id
	}
	if in.sparse == nil {
		in.sparse = make(map[uint64]uint32)
	}
	in.sparse[h] = id
	return id
}
