package replay

import "github.com/kvsim/kvsim/traces"

var testTraces = traces.FS
