//go:build unix

package shard

import (
	"syscall"
	"time"
)

// processCPU is the user and system time this process has used, all
// threads (the collector's included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
