//go:build !unix

package worker_test

import (
	"testing"
	"time"
)

// processCPU is zero where getrusage is missing: the go-cpu-us/job metric
// then reads 0.
func processCPU(*testing.B) time.Duration { return 0 }

// processCPUSplit is zero too.
func processCPUSplit(*testing.B) (user, sys time.Duration) { return 0, 0 }
