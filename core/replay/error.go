package replay

import (
	"errors"
	"fmt"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/internal/diag"
	"github.com/kvsim/kvsim/core/trace"
)

// A Kind says what a job's error concerns, so that a front end can place
// it (a config field turns red, an upload is refused, an HTTP status).
type Kind string

// The kinds of Error.
const (
	// KindConfig: the config text, a --set override, or a config the
	// engine refuses (a mode it does not model yet).
	KindConfig Kind = "config"
	// KindTrace: a trace the config names is missing or malformed.
	KindTrace Kind = "trace"
	// KindLimit: the job is bigger than Limits allow (before the run), or
	// the run needed more passes than allowed (during it).
	KindLimit Kind = "limit"
	// KindStalled: the run reached a state where dispatched requests can
	// never finish (docs/invariants.md E-1).
	KindStalled Kind = "stalled"
	// KindInternal: a bug: a panic or a broken invariant inside the core.
	KindInternal Kind = "internal"
)

// An Error is the one error type Run returns: what went wrong, and where.
// Error() renders it as "file:line:col: path: msg" (the parts that are
// known), which is exactly what the CLI prints after "kvsim: " and what the
// page and the worker API show.
type Error struct {
	Kind Kind
	// File is the config or trace name the position refers to, or
	// "--set PATH=VALUE" for an override; "" when the error has no place.
	File string
	// Line and Col are 1-based; 0 when not known.
	Line, Col int
	// Path is the dotted config path (engine.workers.aggregated.…) for
	// config and limit errors, the row key for trace errors, "" otherwise.
	Path string
	Msg  string
	// err is the core error this one was made from (errors.Is/As see it).
	err error
}

func (e *Error) Error() string {
	if e.File == "" {
		if e.Path == "" {
			return e.Msg
		}
		return e.Path + ": " + e.Msg
	}
	return diag.Format(e.File, e.Line, e.Col, e.Path, e.Msg)
}

// Unwrap returns the core error this one was made from, if any.
func (e *Error) Unwrap() error { return e.err }

// AsError classifies an error from the core's packages (Run's errors are
// already classified; a sweep plan's config errors are not). It is the
// only classifier: front ends read Kind and the position instead of
// probing core error types. A nil error gives nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	e := &Error{Kind: KindInternal, Msg: err.Error(), err: err}
	if ce, ok := errors.AsType[*config.Error](err); ok {
		e.Kind, e.File, e.Line, e.Col, e.Path, e.Msg = KindConfig, ce.File, ce.Line, ce.Col, ce.Path, ce.Msg
	} else if te, ok := errors.AsType[*trace.Error](err); ok {
		e.Kind, e.File, e.Line, e.Col, e.Path, e.Msg = KindTrace, te.File, te.Line, te.Col, te.Path, te.Msg
	} else if errors.Is(err, engine.ErrTooManyPasses) {
		e.Kind = KindLimit
	} else if errors.Is(err, engine.ErrStalled) {
		e.Kind = KindStalled
	}
	return e
}

// limitError is a Limits refusal about a config path, placed at the text
// that wrote it.
func limitError(at *config.Places, path, format string, args ...any) *Error {
	ce := at.ErrorAt(path, fmt.Sprintf(format, args...))
	return &Error{Kind: KindLimit, File: ce.File, Line: ce.Line, Col: ce.Col, Path: ce.Path, Msg: ce.Msg}
}

// placed positions an error about a path of the config that has no
// position yet (the engine's refusals, a trace path that cannot be
// opened) at the text that wrote the path.
func placed(at *config.Places, e *Error) *Error {
	if at == nil || e.Line != 0 || e.Path == "" {
		return e
	}
	ce := at.Place(&config.Error{File: e.File, Path: e.Path, Msg: e.Msg})
	c := *e
	c.File, c.Line, c.Col = ce.File, ce.Line, ce.Col
	return &c
}

// internalError turns a recovered panic into an Error. The message names
// the panic but carries no stack: bad input must never show one.
func internalError(v any) *Error {
	return &Error{Kind: KindInternal, Msg: fmt.Sprintf("internal error: %v (a bug in kvsim: please report it with the config and trace)", v)}
}
