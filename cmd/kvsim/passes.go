package main

import (
	"io"

	"github.com/kvsim/kvsim/core/config"
	"github.com/kvsim/kvsim/core/engine"
	"github.com/kvsim/kvsim/core/record"
)

// passCapture is what `predict --capture-passes` needs from the per-pass
// record (docs/model/record.md): an observer attached to the run, and
// after the run the writer of DIR/passes.jsonl.
type passCapture struct {
	Observer   engine.Observer
	WriteJSONL func(w io.Writer) error
}

// newPassCapture returns the per-pass recorder of one run.
func newPassCapture(cfg *config.Config) (*passCapture, error) {
	r := record.NewRecorder()
	return &passCapture{Observer: r, WriteJSONL: func(w io.Writer) error { return r.Record().WriteJSONL(w) }}, nil
}
