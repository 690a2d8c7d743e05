package worker

import (
	"context"
	"fmt"
	"slices"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// progressLink is what a JobInfo needs to report progress: the store and
// the lease of the attempt it runs.
type progressLink struct {
	store engine.Store
	token string
}

// Progress reports how far the job's handler has come: percent in [0, 100]
// and a short message (cut to the store's MaxError bytes). It shows in the
// job's and its task's records (weir.Job.Progress, weir.Task.Progress,
// `weir status`) until the record is removed. The report is fenced by the
// attempt's lease: once the lease is lost it is refused with an error
// matching weir.ErrLeaseLost and changes nothing.
func (j *JobInfo) Progress(ctx context.Context, percent float64, msg string) error {
	return j.report(ctx, engine.ProgressParams{Report: &weir.Progress{Percent: percent, Message: msg}})
}

// Checkpoint stores b as the job's checkpoint (at most the store's
// MaxCheckpoint bytes, 64 KiB by default; an empty b removes it). Its
// next attempts, after a failed attempt, a crash of this worker or a
// release at shutdown, get it from LastCheckpoint and can resume from
// there. Like Progress, it is fenced by the attempt's lease.
func (j *JobInfo) Checkpoint(ctx context.Context, b []byte) error {
	if b == nil {
		b = []byte{}
	}
	if err := j.report(ctx, engine.ProgressParams{Checkpoint: b}); err != nil {
		return err
	}
	j.checkpoint = slices.Clone(b)
	return nil
}

// LastCheckpoint returns the job's checkpoint: the last one this attempt
// stored, or else the one an earlier attempt stored; nil when there is
// none.
func (j *JobInfo) LastCheckpoint() []byte {
	if len(j.checkpoint) == 0 {
		return nil
	}
	return slices.Clone(j.checkpoint)
}

func (j *JobInfo) report(ctx context.Context, p engine.ProgressParams) error {
	if j.link == nil {
		return fmt.Errorf("weir: job %s is not run by a worker: no lease to report progress under", j.ID)
	}
	p.JobID, p.Token = j.ID, j.link.token
	return j.link.store.Progress(ctx, p)
}
