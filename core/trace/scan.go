package trace

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kvsim/kvsim/core/vtime"
)

// This file is a small JSON scanner for the one fixed row schema of
// mooncake traces. A hand-written scanner is used instead of encoding/json
// for two reasons: it reports the byte column of every offending value
// (encoding/json only knows offsets of syntax errors), and it parses a
// typical row in a few hundred nanoseconds without allocating (the
// benchmark reads 60,000 rows per run). It validates the whole row as JSON
// the way serde_json does for aisimulate's MooncakeRow (types.rs): unknown
// keys are allowed and their values are skipped but still validated,
// duplicate known keys (including an alias next to its primary name) are
// errors, null means absent for every known field, integer fields reject
// negative and fractional numbers, and nothing but whitespace may follow
// the object.

// Canonical row fields. Aliases map onto the same index, so giving both
// names is a duplicate, as with serde's #[serde(alias)].
const (
	fRequestID = iota
	fSessionID
	fInputLength
	fOutputLength
	fOutputTokenIDs
	fHashIDs
	fTimestamp
	fDelay
	// agentic_mooncake only; for the other formats these keys are unknown
	// and skipped like any other.
	fWaitFor
	fToolWaitMs
	numFields
)

var fieldNames = [numFields]string{
	"request_id", "session_id", "input_length", "output_length",
	"output_token_ids", "hash_ids", "timestamp", "delay",
	"wait_for", "tool_wait_ms",
}

// maxDepth bounds the nesting of skipped unknown values, like
// serde_json's recursion limit of 128.
const maxDepth = 128

// rawRow is one parsed row before the semantic checks. Slices alias the
// scanner's line or reusable buffers and are valid until the next row.
type rawRow struct {
	seen uint16 // bit per canonical field, set even when the value is null
	has  uint16 // bit per canonical field whose value was not null
	// key is the field name as written (primary or alias); col the 1-based
	// byte column of its value.
	key [numFields]string
	col [numFields]int

	requestID    []byte
	sessionID    []byte
	inputLength  uint64
	outputLength uint64
	outputIDs    []uint32
	hashIDs      []uint64
	timestamp    vtime.Time
	delay        vtime.Time
	waitFor      []waitRef  // agentic only
	toolWaitMs   vtime.Time // agentic only
}

// A waitRef is one wait_for element: a request id and the 1-based byte
// column of its string.
type waitRef struct {
	id  string
	col int
}

func (r *rawRow) present(f int) bool { return r.has&(1<<f) != 0 }

// scanner parses one line at a time.
type scanner struct {
	name    string
	agentic bool // wait_for and tool_wait_ms are known fields
	lineNo  int
	line    []byte
	pos     int

	// decoding buffers for strings with escapes, one per string field so a
	// row's request_id and session_id do not overwrite each other.
	keyBuf, reqBuf, sessBuf []byte
	idBuf                   []byte // a wait_for element being decoded
	hashBuf                 []uint64
	outBuf                  []uint32
	waitBuf                 []waitRef
}

func (s *scanner) errAt(pos int, field, msg string) *Error {
	return &Error{File: s.name, Line: s.lineNo, Col: pos + 1, Path: field, Msg: msg}
}

func (s *scanner) syntax(pos int, msg string) *Error {
	return s.errAt(pos, "", "invalid JSON: "+msg)
}

func (s *scanner) ws() {
	l, p := s.line, s.pos // locals: the loop stores nothing until it ends
	for p < len(l) && (l[p] == ' ' || l[p] == '\t' || l[p] == '\r' || l[p] == '\n') {
		p++
	}
	s.pos = p
}

// expected reports the right syntax error at s.pos: the line ended,
// or an unexpected byte appeared where want was expected.
func (s *scanner) expected(want string) *Error {
	if s.pos >= len(s.line) {
		return s.syntax(s.pos, "unexpected end of line, expected "+want)
	}
	return s.syntax(s.pos, fmt.Sprintf("expected %s, found %s", want, quoteByte(s.line[s.pos])))
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// kindAt names the JSON type of the value starting at s.pos, for type
// errors.
func (s *scanner) kindAt() string {
	if s.pos >= len(s.line) {
		return "end of line"
	}
	switch c := s.line[s.pos]; {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	}
	return "an invalid value"
}

// parseRow parses s.line into r.
func (s *scanner) parseRow(r *rawRow) *Error {
	r.seen, r.has = 0, 0
	r.requestID, r.sessionID = nil, nil
	r.outputIDs, r.hashIDs = nil, nil
	r.waitFor = nil
	s.pos = 0
	s.ws()
	if s.pos >= len(s.line) || s.line[s.pos] != '{' {
		if start := s.pos; start < len(s.line) {
			if k := s.kindAt(); k != "an invalid value" {
				// Validate first so "[1," reports the syntax error.
				if err := s.skipValue(0); err != nil {
					return err
				}
				return s.errAt(start, "", "row must be a JSON object, found "+k)
			}
		}
		return s.expected("'{'")
	}
	s.pos++
	s.ws()
	if s.pos < len(s.line) && s.line[s.pos] == '}' {
		s.pos++
	} else {
		for {
			s.ws()
			if s.pos >= len(s.line) || s.line[s.pos] != '"' {
				if s.pos < len(s.line) && s.line[s.pos] == '}' {
					return s.syntax(s.pos, "trailing comma before '}'")
				}
				return s.expected("a string key")
			}
			keyPos := s.pos
			key, err := s.str(&s.keyBuf, true)
			if err != nil {
				return err
			}
			s.ws()
			if s.pos >= len(s.line) || s.line[s.pos] != ':' {
				return s.expected("':' after the key")
			}
			s.pos++
			s.ws()
			if err := s.member(r, key, keyPos); err != nil {
				return err
			}
			s.ws()
			if s.pos < len(s.line) && s.line[s.pos] == ',' {
				s.pos++
				continue
			}
			if s.pos < len(s.line) && s.line[s.pos] == '}' {
				s.pos++
				break
			}
			return s.expected("',' or '}'")
		}
	}
	s.ws()
	if s.pos < len(s.line) {
		return s.syntax(s.pos, "trailing characters after the row object")
	}
	return nil
}

// member parses the value of one key.
func (s *scanner) member(r *rawRow, key []byte, keyPos int) *Error {
	if s.pos >= len(s.line) {
		return s.expected("a value")
	}
	f := -1
	var name string
	switch string(key) {
	case "request_id":
		f, name = fRequestID, "request_id"
	case "session_id":
		f, name = fSessionID, "session_id"
	case "input_length":
		f, name = fInputLength, "input_length"
	case "input_tokens":
		f, name = fInputLength, "input_tokens"
	case "output_length":
		f, name = fOutputLength, "output_length"
	case "output_tokens":
		f, name = fOutputLength, "output_tokens"
	case "output_token_ids":
		f, name = fOutputTokenIDs, "output_token_ids"
	case "hash_ids":
		f, name = fHashIDs, "hash_ids"
	case "timestamp":
		f, name = fTimestamp, "timestamp"
	case "created_time":
		f, name = fTimestamp, "created_time"
	case "delay":
		f, name = fDelay, "delay"
	case "delay_ms":
		f, name = fDelay, "delay_ms"
	case "wait_for":
		if !s.agentic {
			return s.skipValue(0)
		}
		f, name = fWaitFor, "wait_for"
	case "tool_wait_ms":
		if !s.agentic {
			return s.skipValue(0)
		}
		f, name = fToolWaitMs, "tool_wait_ms"
	default:
		// aisimulate's MooncakeRow does not deny unknown fields.
		return s.skipValue(0)
	}
	if r.seen&(1<<f) != 0 {
		msg := "duplicate field"
		if r.key[f] != name {
			msg = fmt.Sprintf("duplicate field: %q was already given and is the same field", r.key[f])
		}
		return s.errAt(keyPos, name, msg)
	}
	r.seen |= 1 << f
	r.key[f] = name
	r.col[f] = s.pos + 1
	if s.null() {
		return nil
	}
	var err *Error
	switch f {
	case fRequestID:
		r.requestID, err = s.stringField(&s.reqBuf, name)
	case fSessionID:
		r.sessionID, err = s.stringField(&s.sessBuf, name)
	case fInputLength:
		r.inputLength, err = s.uintField(name)
	case fOutputLength:
		r.outputLength, err = s.uintField(name)
	case fTimestamp:
		r.timestamp, err = s.msField(name)
	case fDelay:
		r.delay, err = s.msField(name)
	case fHashIDs:
		r.hashIDs, err = s.hashIDs(name)
	case fOutputTokenIDs:
		r.outputIDs, err = s.tokenIDs(name)
	case fWaitFor:
		r.waitFor, err = s.waitFor(name)
	case fToolWaitMs:
		r.toolWaitMs, err = s.msField(name)
	}
	if err != nil {
		return err
	}
	r.has |= 1 << f
	return nil
}

// null consumes a null literal if one is at s.pos.
func (s *scanner) null() bool {
	l := s.line[s.pos:]
	if len(l) >= 4 && l[0] == 'n' && l[1] == 'u' && l[2] == 'l' && l[3] == 'l' {
		s.pos += 4
		return true
	}
	return false
}

// typeError reports a value of the wrong JSON type for field, after
// validating it so a syntax error inside it wins (serde_json parses the
// whole value first only for numbers; reporting the syntax error is the
// more useful message either way).
func (s *scanner) typeError(field, want string) *Error {
	pos := s.pos
	kind := s.kindAt()
	if kind == "an invalid value" || kind == "end of line" {
		return s.expected("a value")
	}
	if err := s.skipValue(0); err != nil {
		return err
	}
	return s.errAt(pos, field, fmt.Sprintf("expected %s, found %s", want, kind))
}

func (s *scanner) stringField(buf *[]byte, field string) ([]byte, *Error) {
	if s.line[s.pos] != '"' {
		return nil, s.typeError(field, "a string or null")
	}
	return s.str(buf, true)
}

// numberText returns the literal of the number at [start,end) for
// messages, shortened when long.
func (s *scanner) numberText(start, end int) string {
	t := s.line[start:end]
	if len(t) > 32 {
		return string(t[:29]) + "..."
	}
	return string(t)
}

// uintField parses a non-negative integer that fits in an int.
func (s *scanner) uintField(field string) (uint64, *Error) {
	start := s.pos
	v, kind, ovf, err := s.number()
	if err != nil {
		return 0, err
	}
	if err := s.uintCheck(field, -1, start, v, kind, ovf, math.MaxInt); err != nil {
		return 0, err
	}
	return v, nil
}

// uintCheck reports a number that is not an integer in [0, max]. idx >= 0
// names an array element (the field name is built only on error).
func (s *scanner) uintCheck(field string, idx, start int, v uint64, kind numKind, ovf bool, max uint64) *Error {
	if kind == numUint && !ovf && v <= max {
		return nil
	}
	if idx >= 0 {
		field = elemField(field, idx)
	}
	switch {
	case kind == numTypeError:
		return s.typeError(field, "a non-negative integer or null")
	case kind != numUint:
		return s.errAt(start, field, "expected a non-negative integer, found "+s.numberText(start, s.pos))
	case ovf || v > max:
		return s.errAt(start, field, fmt.Sprintf("%s is out of range (largest allowed %d)", s.numberText(start, s.pos), max))
	}
	return nil
}

// msField parses a JSON number of virtual milliseconds (floatField).
func (s *scanner) msField(field string) (vtime.Time, *Error) {
	f, err := s.floatField(field)
	return vtime.Time(f), err
}

// floatField parses any JSON number as float64.
func (s *scanner) floatField(field string) (float64, *Error) {
	start := s.pos
	v, kind, ovf, err := s.number()
	if err != nil {
		return 0, err
	}
	switch kind {
	case numTypeError:
		return 0, s.typeError(field, "a number or null")
	case numUint:
		if !ovf && v <= 1<<53 {
			return float64(v), nil
		}
	case numNeg:
		if !ovf && v <= 1<<53 {
			if v == 0 {
				return math.Copysign(0, -1), nil
			}
			return -float64(v), nil
		}
	}
	f, perr := strconv.ParseFloat(string(s.line[start:s.pos]), 64)
	if perr != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return 0, s.errAt(start, field, s.numberText(start, s.pos)+" is out of range for a float64")
	}
	return f, nil
}

// array scans a JSON array whose first byte is at s.pos. elem is called
// once per element, with s.pos on its first byte; it reports ok=false,
// consuming nothing, when that byte cannot start the wanted kind, and array
// then names the problem: a trailing comma when the byte is the closing ']'
// after an element, otherwise a type error at field[i] wanting wantElem.
func (s *scanner) array(field, wantArray, wantElem string, elem func(i int) (ok bool, err *Error)) *Error {
	if s.line[s.pos] != '[' {
		return s.typeError(field, wantArray)
	}
	s.pos++
	s.ws()
	if s.pos < len(s.line) && s.line[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.ws()
		ok, err := elem(i)
		if err != nil {
			return err
		}
		if !ok {
			if s.pos < len(s.line) && s.line[s.pos] == ']' && i > 0 {
				return s.syntax(s.pos, "trailing comma before ']'")
			}
			return s.elemTypeError(field, i, wantElem)
		}
		s.ws()
		if s.pos < len(s.line) {
			switch s.line[s.pos] {
			case ',':
				s.pos++
				continue
			case ']':
				s.pos++
				return nil
			}
		}
		return s.expected("',' or ']'")
	}
}

// uintElem scans element i of an array of integers in [0, max]; ok is
// false when the element is not a number at all.
func (s *scanner) uintElem(field string, i int, max uint64) (v uint64, ok bool, err *Error) {
	start := s.pos
	v, kind, ovf, err := s.number()
	if err != nil {
		return 0, true, err
	}
	if kind == numTypeError {
		return 0, false, nil
	}
	if err := s.uintCheck(field, i, start, v, kind, ovf, max); err != nil {
		return 0, true, err
	}
	return v, true, nil
}

func (s *scanner) hashIDs(field string) ([]uint64, *Error) {
	ids := s.hashBuf[:0]
	defer func() { s.hashBuf = ids[:0] }()
	err := s.array(field, "an array of non-negative integers or null", "a non-negative integer", func(i int) (bool, *Error) {
		v, ok, err := s.uintElem(field, i, math.MaxUint64)
		if ok && err == nil {
			ids = append(ids, v)
		}
		return ok, err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

func (s *scanner) tokenIDs(field string) ([]uint32, *Error) {
	ids := s.outBuf[:0]
	defer func() { s.outBuf = ids[:0] }()
	err := s.array(field, "an array of token ids or null", "a token id (0 to 4294967295)", func(i int) (bool, *Error) {
		v, ok, err := s.uintElem(field, i, math.MaxUint32)
		if ok && err == nil {
			ids = append(ids, uint32(v))
		}
		return ok, err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// waitFor parses an array of request id strings. The ids are copied out
// of the line (agentic traces are small, so an allocation per id is fine);
// their checks (empty, self, duplicate, unknown) are semantic and happen
// later.
func (s *scanner) waitFor(field string) ([]waitRef, *Error) {
	refs := s.waitBuf[:0]
	defer func() { s.waitBuf = refs[:0] }()
	err := s.array(field, "an array of request id strings or null", "a request id string", func(int) (bool, *Error) {
		if s.pos >= len(s.line) || s.line[s.pos] != '"' {
			return false, nil
		}
		col := s.pos + 1
		id, err := s.str(&s.idBuf, true)
		if err != nil {
			return true, err
		}
		refs = append(refs, waitRef{id: string(id), col: col})
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return refs, nil
}

func elemField(field string, i int) string {
	return field + "[" + strconv.Itoa(i) + "]"
}

func (s *scanner) elemTypeError(field string, i int, want string) *Error {
	return s.typeError(elemField(field, i), want)
}

type numKind uint8

const (
	numUint      numKind = iota // digits only
	numNeg                      // '-' then digits only
	numFloat                    // fraction or exponent
	numTypeError                // not a number at all: nothing consumed
)

// number scans a JSON number at s.pos. For numUint and numNeg it also
// returns the magnitude (ovf when it exceeds uint64). When no number
// starts here it returns numTypeError without consuming anything; a
// malformed number is a syntax error.
func (s *scanner) number() (v uint64, kind numKind, ovf bool, err *Error) {
	l := s.line
	p := s.pos
	if p >= len(l) {
		return 0, numTypeError, false, nil
	}
	kind = numUint
	if l[p] == '-' {
		kind = numNeg
		p++
		if p >= len(l) {
			return 0, 0, false, s.syntax(p, "unexpected end of line in a number")
		}
	}
	c := l[p]
	switch {
	case c == '0':
		p++
		if p < len(l) && l[p] >= '0' && l[p] <= '9' {
			return 0, 0, false, s.syntax(p-1, "invalid number: leading zero")
		}
	case c >= '1' && c <= '9':
		for p < len(l) {
			d := l[p] - '0'
			if d > 9 {
				break
			}
			// Below MaxUint64/10, v*10+d cannot overflow: the exact test
			// (a division) only for the last digits of a huge number.
			if v >= math.MaxUint64/10 && v > (math.MaxUint64-uint64(d))/10 {
				ovf = true
			} else {
				v = v*10 + uint64(d)
			}
			p++
		}
	default:
		if kind == numNeg {
			return 0, 0, false, s.syntax(p, "invalid number: expected a digit after '-'")
		}
		return 0, numTypeError, false, nil
	}
	if p < len(l) && l[p] == '.' {
		kind = numFloat
		p++
		if p >= len(l) || l[p] < '0' || l[p] > '9' {
			return 0, 0, false, s.syntax(p, "invalid number: expected a digit after '.'")
		}
		for p < len(l) && l[p] >= '0' && l[p] <= '9' {
			p++
		}
	}
	if p < len(l) && (l[p] == 'e' || l[p] == 'E') {
		kind = numFloat
		p++
		if p < len(l) && (l[p] == '+' || l[p] == '-') {
			p++
		}
		if p >= len(l) || l[p] < '0' || l[p] > '9' {
			return 0, 0, false, s.syntax(p, "invalid number: expected a digit in the exponent")
		}
		for p < len(l) && l[p] >= '0' && l[p] <= '9' {
			p++
		}
	}
	s.pos = p
	return v, kind, ovf, nil
}

// str scans the string at s.pos (which must be '"'). With decode it
// returns the decoded bytes (aliasing the line when there are no
// escapes, else *buf) and rejects lone surrogates, as serde_json does when
// it deserializes into a String; without decode it only validates, and
// lone surrogates pass, as serde_json's ignore path lets them.
func (s *scanner) str(buf *[]byte, decode bool) ([]byte, *Error) {
	l := s.line
	start := s.pos + 1
	p := start
	for p < len(l) {
		c := l[p]
		if c == '"' {
			s.pos = p + 1
			return l[start:p], nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, s.syntax(p, "control character in a string")
		}
		p++
	}
	if p >= len(l) {
		return nil, s.syntax(p, "unexpected end of line in a string")
	}
	// Slow path: escapes.
	out := (*buf)[:0]
	if decode {
		out = append(out, l[start:p]...)
	}
	for p < len(l) {
		c := l[p]
		switch {
		case c == '"':
			s.pos = p + 1
			*buf = out
			return out, nil
		case c < 0x20:
			return nil, s.syntax(p, "control character in a string")
		case c != '\\':
			if decode {
				out = append(out, c)
			}
			p++
			continue
		}
		escPos := p
		p++
		if p >= len(l) {
			return nil, s.syntax(p, "unexpected end of line in a string")
		}
		var r rune
		switch l[p] {
		case '"':
			r = '"'
		case '\\':
			r = '\\'
		case '/':
			r = '/'
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			h, ok := hex4(l, p+1)
			if !ok {
				return nil, s.syntax(escPos, `invalid \u escape`)
			}
			p += 4
			r = rune(h)
			if utf16.IsSurrogate(r) {
				// A leading surrogate must be followed by \u and a
				// trailing one.
				if r < 0xdc00 && p+6 < len(l) && l[p+1] == '\\' && l[p+2] == 'u' {
					if h2, ok := hex4(l, p+3); ok && h2 >= 0xdc00 && h2 <= 0xdfff {
						r = utf16.DecodeRune(r, rune(h2))
						p += 6
						break
					}
				}
				if decode {
					return nil, s.syntax(escPos, `lone surrogate in a \u escape`)
				}
				r = utf8.RuneError
			}
		default:
			return nil, s.syntax(escPos, "invalid escape sequence")
		}
		if decode {
			out = utf8.AppendRune(out, r)
		}
		p++
	}
	return nil, s.syntax(p, "unexpected end of line in a string")
}

func hex4(l []byte, p int) (uint16, bool) {
	if p+4 > len(l) {
		return 0, false
	}
	var v uint16
	for _, c := range l[p : p+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(c)
	}
	return v, true
}

// skipValue validates and skips any JSON value at s.pos.
func (s *scanner) skipValue(depth int) *Error {
	if s.pos >= len(s.line) {
		return s.expected("a value")
	}
	switch c := s.line[s.pos]; {
	case c == '"':
		var none []byte
		_, err := s.str(&none, false)
		return err
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return s.syntax(s.pos, "nesting deeper than 128 levels")
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.pos++
		s.ws()
		if s.pos < len(s.line) && s.line[s.pos] == closer {
			s.pos++
			return nil
		}
		for {
			s.ws()
			if c == '{' {
				if s.pos >= len(s.line) || s.line[s.pos] != '"' {
					if s.pos < len(s.line) && s.line[s.pos] == '}' {
						return s.syntax(s.pos, "trailing comma before '}'")
					}
					return s.expected("a string key")
				}
				var none []byte
				if _, err := s.str(&none, false); err != nil {
					return err
				}
				s.ws()
				if s.pos >= len(s.line) || s.line[s.pos] != ':' {
					return s.expected("':' after the key")
				}
				s.pos++
				s.ws()
			} else if s.pos < len(s.line) && s.line[s.pos] == ']' {
				return s.syntax(s.pos, "trailing comma before ']'")
			}
			if err := s.skipValue(depth + 1); err != nil {
				return err
			}
			s.ws()
			if s.pos < len(s.line) {
				switch s.line[s.pos] {
				case ',':
					s.pos++
					continue
				case closer:
					s.pos++
					return nil
				}
			}
			return s.expected(fmt.Sprintf("',' or '%c'", closer))
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		_, kind, _, err := s.number()
		if err != nil {
			return err
		}
		if kind == numTypeError {
			return s.expected("a value")
		}
		return nil
	}
}

func (s *scanner) literal(word string) *Error {
	l := s.line[s.pos:]
	if len(l) >= len(word) && string(l[:len(word)]) == word {
		s.pos += len(word)
		return nil
	}
	return s.syntax(s.pos, "invalid literal, expected "+word)
}
