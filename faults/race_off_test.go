//go:build unix && faults && !race

package faults

// raceEnabled is set when the suite runs under the race detector.
const raceEnabled = false
