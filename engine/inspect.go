package engine

import "github.com/weirflow/weir"
import "time"

// RetryJobParams runs an ended plain job again.
type RetryJobParams struct {
	ID string
	// RunAt, when after now, delays the job until then; zero or past means
	// ready at once.
	RunAt time.Time
}

// RetryResult says what a RetryJob did.
type RetryResult struct {
	// State is the job's state after the call (queued on success; the
	// state that refused it with ErrJobNotRetryable).
	State weir.State
	// RunAt is when a delayed job becomes ready; zero when ready now.
	RunAt time.Time
	// Pushed holds the job when it was made ready at once.
	Pushed []Pushed
}
