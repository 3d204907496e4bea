//go:build !unix

package toon_test

import "time"

// processCPU is not available on this platform; benchmarks then report
// wall time only.
func processCPU() time.Duration { return 0 }
