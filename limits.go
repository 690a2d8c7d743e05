package weir

import "time"

// Limits bounds what a store accepts. Every store of one namespace must use
// the same limits; DefaultLimits are the documented defaults (spec/states.md).
type Limits struct {
	MaxTasks    int // tasks in one plan
	MaxEdges    int // dependency edges in one plan
	MaxPayload  int // bytes of one payload
	MaxResult   int // bytes of one result
	MaxError    int // bytes of an error message kept; longer ones are cut
	MaxAttempts int // largest MaxAttempts
	MaxBatch    int // jobs in one claim, outcomes in one finish, leases in one heartbeat
	MaxLease    time.Duration
	MaxBackoff  time.Duration // cap of the exponential backoff, and largest Backoff
	// MaxCheckpoint bounds the bytes of a job's checkpoint; 0 means
	// DefaultMaxCheckpoint.
	MaxCheckpoint int
}

// DefaultMaxCheckpoint is the checkpoint limit of DefaultLimits: 64 KiB.
const DefaultMaxCheckpoint = 64 << 10

// Priority bounds: lower runs first; 0 is the default.
const (
	MinPriority = -1000
	MaxPriority = 1000
)

// DefaultBackoff is the base retry delay of a job that gives none.
const DefaultBackoff = time.Second

// DefaultMaxExpiries is how many lease expiries a job that gives no
// MaxExpiries is queued again after without losing an attempt: a worker
// killed during a deploy does not fail its jobs.
const DefaultMaxExpiries = 1

// NoExpiries, as a MaxExpiries, makes every lease expiry a failed attempt.
const NoExpiries = -1

// DefaultLimits returns the documented default limits.
func DefaultLimits() Limits {
	return Limits{
		MaxTasks:    10_000,
		MaxEdges:    100_000,
		MaxPayload:  1 << 20,
		MaxResult:   64 << 10,
		MaxError:    4 << 10,
		MaxAttempts: 1000,
		MaxBatch:    1000,
		MaxLease:    24 * time.Hour,
		MaxBackoff:  time.Hour,

		MaxCheckpoint: DefaultMaxCheckpoint,
	}
}
