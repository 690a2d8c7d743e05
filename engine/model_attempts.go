package engine

import (
	"slices"

	"github.com/weirflow/weir"
)

// archive moves running job j's current attempt into its history, ended
// at now with outcome o and reason e: an attempt that ends without its
// job ending by a finish (a failure retried, a lease expiry, a release).
// An attempt that ends its job by a finish stays current: the snapshot
// composes it from the job's end (spec/states.md, Attempt history).
func (m *Model) archive(j *job, now int64, o weir.AttemptOutcome, e string) {
	if !j.cur {
		return
	}
	if len(j.history) == weir.MaxAttemptHistory {
		j.history = slices.Delete(j.history, 0, 1)
	}
	j.history = append(j.history, weir.AttemptRecord{
		Attempt: j.attempt, Worker: j.worker, Started: toTime(j.started), Ended: toTime(now), Outcome: o, Error: e,
	})
	j.cur = false
}

// resetAttempts forgets j's attempts: a job run again from the start
// (RetryJob, RerunWorkflow) starts a new history.
func (j *job) resetAttempts() {
	j.cur, j.worker, j.started, j.history = false, "", 0, nil
}

// attempts composes j's attempt history: the archived attempts, then the
// current one (running, or ended with its job), the last
// weir.MaxAttemptHistory of them.
func (j *job) attempts() []weir.AttemptRecord {
	out := slices.Clone(j.history)
	if j.cur {
		a := weir.AttemptRecord{Attempt: j.attempt, Worker: j.worker, Started: toTime(j.started)}
		switch {
		case j.state == weir.Running:
		case j.state.Ended():
			a.Ended, a.Outcome = toTime(j.ended), weir.AttemptOutcome(j.state)
			if j.state != weir.Completed {
				a.Error = j.err
			}
		default:
			return out
		}
		out = append(out, a)
	}
	if len(out) > weir.MaxAttemptHistory {
		out = out[len(out)-weir.MaxAttemptHistory:]
	}
	return out
}
