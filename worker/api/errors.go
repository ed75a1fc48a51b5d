package api

import (
	"errors"
	"net/http"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/sweep"
	"github.com/kvsim/kvsim/core/trace"
)

// Error kinds: what an error concerns.
const (
	kindRequest  = "request"   // the HTTP request itself: method, content type, JSON, missing parts
	kindConfig   = "config"    // core/config rejected the config (or a --set)
	kindTrace    = "trace"     // core/trace rejected the trace
	kindLimit    = "limit"     // a Limits bound was hit
	kindSweep    = "sweep"     // core/sweep rejected the grid (a --vary or a point's config)
	kindRun      = "run"       // the engine refused the run (e.g. a mode it does not model)
	kindNotFound = "not_found" // unknown example or endpoint
	kindInternal = "internal"
)

// apiError is the JSON body of every error answer. Error is the message the
// CLI prints for the same problem (for config and trace errors,
// "file:line:col: path: msg"); File, Line, Col and Path repeat its parts.
// Path is the dotted config field for config errors and the row key for
// trace errors.
type apiError struct {
	Msg    string `json:"error"`
	Status int    `json:"status"`
	Kind   string `json:"kind"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Col    int    `json:"col,omitempty"`
	Path   string `json:"path,omitempty"`
	// Point is the sweep point whose config was rejected (sweep listing).
	Point *int `json:"point,omitempty"`
}

func (e *apiError) Error() string { return e.Msg }

func writeError(w http.ResponseWriter, e *apiError) { writeJSON(w, e.Status, e) }

func badRequest(msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Kind: kindRequest, Msg: msg}
}

func tooLarge(msg string) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Kind: kindLimit, Msg: msg}
}

func overLimit(path, msg string) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Kind: kindLimit, Path: path, Msg: msg}
}

// coreError turns an error from core/config, core/trace, core/replay or
// core/engine into a 422 carrying the core's message and position.
func coreError(err error) *apiError {
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae
	}
	e := &apiError{Status: http.StatusUnprocessableEntity, Kind: kindRun, Msg: err.Error()}
	if ce, ok := errors.AsType[*config.Error](err); ok {
		e.Kind, e.File, e.Line, e.Col, e.Path = kindConfig, ce.File, ce.Line, ce.Col, ce.Path
	} else if te, ok := errors.AsType[*trace.Error](err); ok {
		e.Kind, e.File, e.Line, e.Col, e.Path = kindTrace, te.File, te.Line, te.Col, te.Field
	} else if _, ok := errors.AsType[*sweep.Error](err); ok {
		e.Kind = kindSweep
	} else if errors.Is(err, engine.ErrTooManyPasses) {
		e.Kind = kindLimit
	}
	return e
}
