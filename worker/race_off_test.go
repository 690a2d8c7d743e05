//go:build !race

package worker

// raceEnabled is set when the tests run under the race detector.
const raceEnabled = false
