//go:build unix && faults && race

package faults

// raceEnabled is set when the suite runs under the race detector, which
// slows pub/sub-heavy tests about tenfold; they size themselves down.
const raceEnabled = true
