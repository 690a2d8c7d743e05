package weir

import "time"

// MaxAttemptHistory is the most attempts a job's record keeps
// (Job.Attempts): the last ones, oldest first (spec/states.md, Attempt
// history).
const MaxAttemptHistory = 10

// AttemptOutcome is how one attempt of a job ended.
type AttemptOutcome string

// Attempt outcomes. An attempt that still runs has none ("").
const (
	// AttemptCompleted: the attempt completed its job.
	AttemptCompleted AttemptOutcome = "completed"
	// AttemptFailed: the attempt failed (its job retried, or failed for
	// good).
	AttemptFailed AttemptOutcome = "failed"
	// AttemptCancelled: the attempt ended its job cancelled.
	AttemptCancelled AttemptOutcome = "cancelled"
	// AttemptExpired: the attempt's lease ran out (its worker died or
	// stopped heart-beating): the job was queued again or failed.
	AttemptExpired AttemptOutcome = "expired"
	// AttemptReleased: the worker handed the job back unrun (a shutdown);
	// the attempt was not counted.
	AttemptReleased AttemptOutcome = "released"
)

// AttemptRecord is one attempt of a job, as its record keeps it.
type AttemptRecord struct {
	// Attempt is the job's attempt count when it started (1 for the
	// first).
	Attempt int
	// Worker is the ID of the worker that leased the job (WorkerInfo.ID),
	// "" when the claim named none.
	Worker string
	// Started is when the claim leased the job; Ended when the attempt
	// ended (zero while it runs).
	Started time.Time
	Ended   time.Time
	// Outcome is how it ended, "" while it runs.
	Outcome AttemptOutcome
	// Error is a failed, expired or cancelled attempt's reason.
	Error string
}

// Duration is how long the attempt ran: Ended less Started, 0 while it
// runs.
func (a AttemptRecord) Duration() time.Duration {
	if a.Ended.IsZero() || a.Started.IsZero() {
		return 0
	}
	return a.Ended.Sub(a.Started)
}
