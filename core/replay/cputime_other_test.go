//go:build !unix

package replay

import "time"

// processCPU is unknown here; benchmarks report 0 CPU time.
func processCPU() time.Duration { return 0 }
