//go:build !unix

package shard

import "time"

func processCPU() time.Duration { return 0 }
