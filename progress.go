package weir

import "time"

// Progress is what a running job's handler last reported of its progress
// (spec/states.md, Progress): a percentage and a short message, with the
// store's time of the report. It stays on the job's record after the job
// ends, until the record is removed.
type Progress struct {
	// Percent is in [0, 100].
	Percent float64
	// Message is at most Limits.MaxError bytes (a longer one is cut).
	Message string
	// At is the store's time of the report.
	At time.Time
}
