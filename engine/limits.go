package engine

import (
	"time"

	"github.com/weirflow/weir"
)

// Config is what a Model (and so a store) is configured with.
type Config struct {
	Limits weir.Limits
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
func DefaultConfig() Config { return Config{Limits: weir.DefaultLimits(), Retention: DefaultRetention} }
