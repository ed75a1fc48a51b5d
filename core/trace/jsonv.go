package trace

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A jval is one parsed JSON value with the position of its first byte,
// for formats whose rows nest (weka): every error can then name the line,
// the column and the field path of the value that is wrong.
type jval struct {
	kind jkind
	line int
	col  int
	str  string  // jString; the literal for jNumber
	num  float64 // jNumber
	arr  []*jval
	keys []string // jObject, in file order
	vals []*jval
}

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

func (k jkind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// get returns the value of key in an object (the first occurrence), or nil.
func (v *jval) get(key string) *jval {
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// maxJSONDepth bounds nesting so that a hostile file cannot grow the stack.
const maxJSONDepth = 64

// jparser reads a stream of JSON values separated by whitespace.
type jparser struct {
	name      string
	data      []byte
	pos       int
	line      int
	lineStart int
}

func newJParser(name string, data []byte) *jparser {
	return &jparser{name: name, data: data, line: 1}
}

func (p *jparser) errHere(msg string) *Error {
	return &Error{File: p.name, Line: p.line, Col: p.pos - p.lineStart + 1, Msg: msg}
}

func (p *jparser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '\n':
			p.line++
			p.lineStart = p.pos + 1
		case ' ', '\t', '\r':
		default:
			return
		}
		p.pos++
	}
}

// next returns the next top-level value, or nil at the end of the input.
func (p *jparser) next() (*jval, *Error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, nil
	}
	return p.value(0)
}

func (p *jparser) value(depth int) (*jval, *Error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, p.errHere("unexpected end of input: expected a JSON value")
	}
	if depth > maxJSONDepth {
		return nil, p.errHere("JSON nested too deeply")
	}
	v := &jval{line: p.line, col: p.pos - p.lineStart + 1}
	switch c := p.data[p.pos]; {
	case c == '{':
		return v, p.object(v, depth)
	case c == '[':
		return v, p.array(v, depth)
	case c == '"':
		s, err := p.string()
		v.kind, v.str = jString, s
		return v, err
	case c == '-' || c >= '0' && c <= '9':
		return v, p.number(v)
	default:
		for _, lit := range [...]struct {
			word string
			kind jkind
		}{{"null", jNull}, {"true", jBool}, {"false", jBool}} {
			if len(p.data)-p.pos >= len(lit.word) && string(p.data[p.pos:p.pos+len(lit.word)]) == lit.word {
				p.pos += len(lit.word)
				v.kind, v.str = lit.kind, lit.word
				return v, nil
			}
		}
		return nil, p.errHere("invalid JSON: expected a value")
	}
}

func (p *jparser) object(v *jval, depth int) *Error {
	v.kind = jObject
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return p.errHere("invalid JSON: expected a string key")
		}
		k, err := p.string()
		if err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return p.errHere("invalid JSON: expected ':' after an object key")
		}
		p.pos++
		x, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		v.keys, v.vals = append(v.keys, k), append(v.vals, x)
		if done, err := p.sep('}'); done || err != nil {
			return err
		}
	}
}

func (p *jparser) array(v *jval, depth int) *Error {
	v.kind = jArray
	p.pos++
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return nil
	}
	for {
		x, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		v.arr = append(v.arr, x)
		if done, err := p.sep(']'); done || err != nil {
			return err
		}
	}
}

// sep reads ',' (more to come) or the closing byte (done).
func (p *jparser) sep(closing byte) (done bool, err *Error) {
	p.skipSpace()
	if p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ',':
			p.pos++
			return false, nil
		case closing:
			p.pos++
			return true, nil
		}
	}
	return true, p.errHere("invalid JSON: expected ',' or '" + string(closing) + "'")
}

func (p *jparser) string() (string, *Error) {
	p.pos++ // opening quote
	var out []byte
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			out = append(out, p.data[start:p.pos]...)
			p.pos++
			return string(out), nil
		case c < 0x20:
			return "", p.errHere("invalid JSON: control character in a string")
		case c == '\\':
			out = append(out, p.data[start:p.pos]...)
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			out = utf8.AppendRune(out, r)
			start = p.pos
		default:
			p.pos++
		}
	}
	return "", p.errHere("invalid JSON: unterminated string")
}

// escape reads one backslash escape (a surrogate pair counts as one).
func (p *jparser) escape() (rune, *Error) {
	if p.pos+1 >= len(p.data) {
		return 0, p.errHere("invalid JSON: unterminated escape")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	if i := indexByte(`"\/bfnrt`, c); i >= 0 {
		return rune("\"\\/\b\f\n\r\t"[i]), nil
	}
	if c != 'u' {
		return 0, p.errHere("invalid JSON: bad escape")
	}
	r, ok := p.hex4()
	if !ok {
		return 0, p.errHere("invalid JSON: bad \\u escape")
	}
	if utf16.IsSurrogate(r) && p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
		save := p.pos
		p.pos += 2
		if r2, ok := p.hex4(); ok {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, nil
			}
		}
		p.pos = save
	}
	return r, nil
}

func (p *jparser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(n), true
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func (p *jparser) number(v *jval) *Error {
	start := p.pos
	for p.pos < len(p.data) && indexByte("+-0123456789.eE", p.data[p.pos]) >= 0 {
		p.pos++
	}
	lit := string(p.data[start:p.pos])
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || lit[len(lit)-1] == '.' || lit == "-" {
		p.pos = start
		return p.errHere("invalid JSON number " + strconv.Quote(lit))
	}
	v.kind, v.num, v.str = jNumber, f, lit
	return nil
}
