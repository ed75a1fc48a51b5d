package engine_test

// Short names for the shared harness (core/internal/harness), which the
// connector and engine tests both use.

import "github.com/kvsim/kvsim/core/internal/harness"

type (
	world = harness.World
	row   = harness.Row
)

var runWorld = harness.Run
