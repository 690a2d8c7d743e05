//go:build race

package worker

// raceEnabled is set when the tests run under the race detector, whose
// instrumentation changes what testing.AllocsPerRun counts.
const raceEnabled = true
