package redisstore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/weirflow/weir"
)

// attempts composes job j's attempt history (spec/states.md, Attempt
// history) from its fields w ("<start ms> <worker>" of the current
// attempt, "" once it moved into ah) and ah (attempts.lua), as the model
// does: the archived attempts, then the current one when it runs or
// ended with its job, the last weir.MaxAttemptHistory of them; and sets
// j.Worker to the last one's worker.
func attempts(j *weir.Job, w, ah string) error {
	var out []weir.AttemptRecord
	for rest := ah; rest != ""; {
		var a weir.AttemptRecord
		f := strings.SplitN(rest, " ", 7)
		if len(f) < 7 {
			return fmt.Errorf("%w: job %q: attempt history %q", weir.ErrProtocol, j.ID, ah)
		}
		n, err1 := strconv.Atoi(f[0])
		st, err2 := strconv.ParseInt(f[1], 10, 64)
		en, err3 := strconv.ParseInt(f[2], 10, 64)
		wl, err4 := strconv.Atoi(f[4])
		el, err5 := strconv.Atoi(f[5])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || wl < 0 || el < 0 || wl+el > len(f[6]) {
			return fmt.Errorf("%w: job %q: attempt history %q", weir.ErrProtocol, j.ID, ah)
		}
		a.Attempt, a.Started, a.Ended, a.Outcome = n, toTime(st), toTime(en), weir.AttemptOutcome(f[3])
		a.Worker, a.Error = f[6][:wl], f[6][wl:wl+el]
		out = append(out, a)
		rest = f[6][wl+el:]
	}
	if w != "" {
		sp := strings.IndexByte(w, ' ')
		st, err := strconv.ParseInt(w[:max(sp, 0)], 10, 64)
		if sp < 0 || err != nil {
			return fmt.Errorf("%w: job %q: attempt %q", weir.ErrProtocol, j.ID, w)
		}
		a := weir.AttemptRecord{Attempt: j.Attempt, Worker: w[sp+1:], Started: toTime(st)}
		ok := true
		switch {
		case j.State == weir.Running:
		case j.State.Ended():
			a.Ended, a.Outcome = j.EndedAt, weir.AttemptOutcome(j.State)
			if j.State != weir.Completed {
				a.Error = j.Error
			}
		default:
			ok = false
		}
		if ok {
			out = append(out, a)
		}
	}
	if len(out) > weir.MaxAttemptHistory {
		out = out[len(out)-weir.MaxAttemptHistory:]
	}
	if len(out) > 0 {
		j.Attempts, j.Worker = out, out[len(out)-1].Worker
	}
	return nil
}
