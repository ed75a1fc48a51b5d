package config

import "github.com/kvsim/kvsim/core/internal/diag"

// An Error is a rejected configuration: where the offending text is, which
// field it concerns and why it was rejected.
type Error struct {
	// File is the config name given to Parse, or "--set PATH=VALUE" when
	// the offending text came from an override.
	File string
	// Line and Col are 1-based; both are 0 when there is no position (an
	// override, or a document with no nodes at all).
	Line, Col int
	// Path is the dotted field path, e.g.
	// engine.workers.aggregated.kv_cache.capacity.blocks; "" for errors that
	// concern no field (YAML syntax, a malformed --set).
	Path string
	Msg  string
}

// Error renders "file:line:col: path: msg", leaving out the parts that are
// not known.
func (e *Error) Error() string {
	return diag.Format(e.File, e.Line, e.Col, e.Path, e.Msg)
}

// bailout carries the first error out of the decoder. Decoding stops at
// the first problem (the order is the fixed decoding order, so the error
// is deterministic); unwinding with panic keeps every decode step free of
// error plumbing. Only Parse recovers it, and only this type.
type bailout struct{ err *Error }
