package trace

import "github.com/kvsim/kvsim/core/internal/diag"

// An Error is a trace problem with its position, rendered as
// "file:line:col: field: msg" so editors can jump to it.
//
// Line is 1-based (0 when the problem is not tied to a line, e.g. bad
// Options). Col is the 1-based byte column within the line of the
// offending value, or of the JSON syntax error; it is 1 when only the row
// is known (a missing field). Path is the key as written in the row (an
// alias such as "delay_ms" is reported as written), the canonical name for
// a missing field, and "" for syntax errors and whole-file problems; it is
// named as config.Error's Path is, since both say which field is wrong.
type Error struct {
	File string
	Line int
	Col  int
	Path string
	Msg  string
}

func (e *Error) Error() string {
	return diag.Format(e.File, e.Line, e.Col, e.Path, e.Msg)
}
