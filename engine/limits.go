package engine

import (
	"time"

	"github.com/weirflow/weir"
)

// Limits bounds what a store accepts (weir.Limits).
type Limits = weir.Limits

// Priority bounds: lower runs first; 0 is the default.
const (
	MinPriority = weir.MinPriority
	MaxPriority = weir.MaxPriority
)

// DefaultBackoff is the base retry delay of a job that gives none.
const DefaultBackoff = weir.DefaultBackoff

// DefaultMaxExpiries is how many lease expiries a job that gives no
// MaxExpiries is queued again after without losing an attempt.
const DefaultMaxExpiries = weir.DefaultMaxExpiries

// NoExpiries, as a MaxExpiries, makes every lease expiry a failed attempt.
const NoExpiries = weir.NoExpiries

// DefaultLimits returns the documented default limits (weir.DefaultLimits).
func DefaultLimits() Limits { return weir.DefaultLimits() }

// Config is what a Model (and so a store) is configured with.
type Config struct {
	Limits Limits
	// Retention is how long an ended workflow or job is kept. 0 removes it
	// at once.
	Retention time.Duration
	// Partitions is the namespace's number of partitions (spec/partitions.md),
	// at most MaxPartitions. Records are placed by Partition; every
	// transition runs inside one partition. 0: the Redis store takes the
	// namespace's count (1 for a namespace not written yet); the model and
	// memstore take one.
	Partitions int
}

// DefaultRetention is how long ended records are kept by default.
const DefaultRetention = 7 * 24 * time.Hour

// DefaultConfig returns DefaultLimits and DefaultRetention.
func DefaultConfig() Config { return Config{Limits: DefaultLimits(), Retention: DefaultRetention} }
