package main

import "github.com/kvsim/kvsim/ui/state"

// ErrText is an error message on the page: the message itself, or, for an
// internal error (a panic's or the runtime's text), a short note and the
// original text collapsed under "details" (state.SplitError). No stack
// trace or panic text is shown open.
type ErrText struct {
	Msg string
}

func (c *ErrText) short() string { s, _ := state.SplitError(c.Msg); return s }

func (c *ErrText) detail() string { _, d := state.SplitError(c.Msg); return d }
