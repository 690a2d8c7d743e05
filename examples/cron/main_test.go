package main

import (
	"testing"
	"time"

	"github.com/weirflow/weir/examples/internal/exampletest"
)

// Three workers fire one schedule: each of the first three ticks' jobs
// ran once.
func TestCronEachTickRunsOnce(t *testing.T) {
	const want = `tick 1 of schedule beat: job ran 1 time(s)
tick 2 of schedule beat: job ran 1 time(s)
tick 3 of schedule beat: job ran 1 time(s)
`
	exampletest.CheckOutput(t, time.Minute, want, run)
}
