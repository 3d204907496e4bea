//go:build unix

package toon_test

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time used by the process so far.
// Benchmarks report it per operation (cpu-ns/op) next to wall time because
// CPU time is not inflated by waiting for a busy machine's cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
