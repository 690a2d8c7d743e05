package engine

import (
	"math"

	"github.com/weirflow/weir"
)

// ProgressParams reports a running job's progress and writes its
// checkpoint, fenced by its lease (spec/states.md, Progress).
type ProgressParams struct {
	JobID string
	Token string
	// Report, when set, replaces the job's progress: Percent in [0, 100],
	// Message cut to Limits.MaxError bytes. Its At is ignored: the store
	// stamps its own time.
	Report *weir.Progress
	// Checkpoint, when not nil, replaces the job's checkpoint (an empty
	// one removes it). It is handed to the job's next attempts (Claimed).
	Checkpoint []byte
}

// CheckpointLimit is l.MaxCheckpoint, or DefaultMaxCheckpoint when 0.
func CheckpointLimit(l weir.Limits) int {
	if l.MaxCheckpoint == 0 {
		return weir.DefaultMaxCheckpoint
	}
	return l.MaxCheckpoint
}

// ValidateProgress checks ProgressParams: a report or a checkpoint, a
// finite percent in [0, 100], a checkpoint of at most CheckpointLimit
// bytes. The job ID and the lease are checked by the transition.
func ValidateProgress(p ProgressParams, l weir.Limits) error {
	if p.Report == nil && p.Checkpoint == nil {
		return invalid("", "progress", "give a progress report, a checkpoint or both")
	}
	if r := p.Report; r != nil && (math.IsNaN(r.Percent) || r.Percent < 0 || r.Percent > 100) {
		return invalid("", "progress", "percent %v is outside [0, 100]", r.Percent)
	}
	if n := CheckpointLimit(l); len(p.Checkpoint) > n {
		return tooLarge("", "checkpoint", "checkpoint of job %q is %d bytes, the limit is %d", p.JobID, len(p.Checkpoint), n)
	}
	return nil
}
