package main

import "github.com/kvsim/kvsim/ui/state"

// ErrText is an error message on the page: the message itself, or, for an
// internal error (a panic's or the runtime's text), a short note and the
// original text collapsed under "details" (state.SplitError). No stack
// trace or panic text is shown open.
type ErrText struct {
	Msg string
}

func (c *ErrText) short() string { s, _ := state.SplitError(c.Msg); return state.Clip(s, maxErrText) }

func (c *ErrText) detail() string { _, d := state.SplitError(c.Msg); return state.Clip(d, maxErrText) }

// maxErrText bounds a message on the page (vugu sends a text in one
// instruction of a 16 KB buffer; a longer one would end the page).
const maxErrText = 4000
