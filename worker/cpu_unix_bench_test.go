//go:build unix

package worker_test

import (
	"syscall"
	"testing"
	"time"
)

// processCPU returns the CPU time (user and system) this process used so
// far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
