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
	user, sys := processCPUSplit(b)
	return user + sys
}

// processCPUSplit returns the user and the system CPU time this process
// used so far.
func processCPUSplit(b *testing.B) (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
