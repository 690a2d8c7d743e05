package engine

import (
	"github.com/weirflow/weir"
	"slices"
	"time"
)

// Progress reports a running job's progress and writes its checkpoint
// (spec/states.md, Progress). The call is fenced by the job's lease: a job
// that is unknown, not running, or leased with another token gives
// ErrLeaseLost and nothing changes.
func (m *Model) Progress(now time.Time, p ProgressParams) error {
	t := m.tick(now)
	if err := ValidateProgress(p, m.cfg.Limits); err != nil {
		return err
	}
	j := m.jobs[p.JobID]
	if j == nil || j.state != weir.Running || j.token != p.Token {
		return wrap(weir.ErrLeaseLost, "job %q is not leased with token %q", p.JobID, p.Token)
	}
	if r := p.Report; r != nil {
		j.progress = &weir.Progress{Percent: r.Percent, Message: m.cutError(r.Message), At: toTime(t)}
	}
	if p.Checkpoint != nil {
		j.checkpoint = nil
		if len(p.Checkpoint) > 0 {
			j.checkpoint = slices.Clone(p.Checkpoint)
		}
	}
	return nil
}

// progressOf returns a copy of a job's progress for a snapshot.
func (j *job) progressOf() *weir.Progress {
	if j.progress == nil {
		return nil
	}
	p := *j.progress
	return &p
}

// claimed is a job's Claimed as a claim hands it out: its snapshot without
// progress (the worker reports it, it need not read it), its lease, deps
// and checkpoint.
func (j *job) claimed(deps []weir.DepOutcome) Claimed {
	s := j.snapshot()
	s.Progress, s.Worker, s.Attempts = nil, "", nil
	return Claimed{Job: s, Lease: weir.Lease{Token: j.token, Deadline: toTime(j.deadline)}, Deps: deps, Checkpoint: slices.Clone(j.checkpoint)}
}
