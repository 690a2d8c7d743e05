//go:build !unix

package bench

import "time"

// processCPU is unavailable where getrusage is missing: the CPU figures
// are then null.
func processCPU() (time.Duration, bool) { return 0, false }
