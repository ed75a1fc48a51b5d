package api

import (
	"errors"
	"net/http"

	"github.com/kvsim/kvsim/core/replay"
	"github.com/kvsim/kvsim/core/sweep"
)

// Error kinds: what an error concerns.
const (
	kindRequest  = "request"   // the HTTP request itself: method, content type, JSON, missing parts
	kindConfig   = "config"    // core/config rejected the config (or a --set)
	kindTrace    = "trace"     // core/trace rejected the trace
	kindLimit    = "limit"     // a Limits bound was hit
	kindSweep    = "sweep"     // core/sweep rejected the grid (a --vary or a point's config)
	kindStalled  = "stalled"   // the run stalled (docs/invariants.md E-1)
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

// coreError turns an error from core/replay or core/sweep into an answer
// carrying the core's message, kind and position: 422 for the job's
// problems, 500 for an internal error.
func coreError(err error) *apiError {
	if ae, ok := errors.AsType[*apiError](err); ok {
		return ae
	}
	if se, ok := errors.AsType[*sweep.Error](err); ok && se.Err == nil {
		return &apiError{Status: http.StatusUnprocessableEntity, Kind: kindSweep, Msg: err.Error()}
	}
	re := replay.AsError(err)
	e := &apiError{Status: http.StatusUnprocessableEntity, Kind: string(re.Kind), Msg: err.Error(),
		File: re.File, Line: re.Line, Col: re.Col, Path: re.Path}
	if re.Kind == replay.KindInternal {
		e.Status = http.StatusInternalServerError
	}
	return e
}
