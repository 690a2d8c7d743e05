package worker

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"time"

	"github.com/weirflow/weir/engine"
)

// finished is a job whose handler returned; its outcome waits to be
// stored, and it still holds its slot.
type finished struct {
	c     *engine.Claimed // into the slice its claim returned
	o     engine.Outcome
	start time.Time
}

// defaultFinishCalls is Config.FinishCalls's default: how many finish
// calls a worker keeps in flight at once.
const defaultFinishCalls = 2

// complete queues f's outcome for storing. When fewer than
// cfg.FinishCalls finish calls run, the calling goroutine stores every
// queued outcome itself (no hand-off), in one call that also claims jobs
// for the freed slots, and keeps going while outcomes queued meanwhile
// wait; it returns one claimed job to run next (the others get runners of
// their own). Else it returns at once: a running call takes the outcome
// when it returns.
func (r *run) complete(f finished) (*engine.Claimed, bool) {
	r.fmu.Lock()
	r.pending = append(r.pending, f)
	if r.inFlight >= r.cfg.FinishCalls {
		r.fmu.Unlock()
		return nil, false
	}
	r.inFlight++
	next, ok := r.flush()
	return next, ok
}

// flush stores the queued outcomes, batch by batch, with r.fmu held on
// entry and released on return, counted in r.inFlight until then. As soon
// as a call hands it a job it returns that job and leaves what is still
// queued to another runner goroutine, so the job starts without waiting
// for the next call.
func (r *run) flush() (*engine.Claimed, bool) {
	for len(r.pending) > 0 {
		n := min(len(r.pending), r.cfg.Limits.MaxBatch)
		var batch []finished
		if n == len(r.pending) {
			// all of it: the batch takes the slice, pending a spare one
			batch, r.pending = r.pending, r.spareBatch()
		} else {
			batch = append(r.spareBatch(), r.pending[:n]...)
			r.pending = append(r.pending[:0], r.pending[n:]...)
		}
		r.fmu.Unlock()
		claimed := r.finishBatch(batch)
		for i := 1; i < len(claimed); i++ {
			r.start(work{c: &claimed[i]})
		}
		r.fmu.Lock()
		r.keepBatch(batch)
		if len(claimed) > 0 {
			if len(r.pending) > 0 {
				r.start(work{}) // stores them, still counted in r.inFlight
			} else {
				r.inFlight--
			}
			r.fmu.Unlock()
			return &claimed[0], true
		}
	}
	r.inFlight--
	r.fmu.Unlock()
	return nil, false
}

// maxSpare bounds the batch slices a run keeps for reuse: one per finish
// call in flight, and the one pending fills meanwhile.
func (r *run) maxSpare() int { return r.cfg.FinishCalls + 1 }

// spareBatch returns an empty slice for a batch of outcomes, reused when
// one is kept (r.fmu held).
func (r *run) spareBatch() []finished {
	if n := len(r.spare); n > 0 {
		b := r.spare[n-1]
		r.spare = r.spare[:n-1]
		return b
	}
	return nil
}

// keepBatch keeps the slice of a stored batch for reuse (r.fmu held),
// cleared so that it holds on to nothing.
func (r *run) keepBatch(b []finished) {
	if len(r.spare) < r.maxSpare() && cap(b) <= r.cfg.Limits.MaxBatch*2 {
		clear(b)
		r.spare = append(r.spare, b[:0])
	}
}

// finishBatch stores a batch of outcomes and, unless the worker is
// stopping, claims in the same call up to one job per slot the batch holds
// plus the slots free now; it returns the claimed jobs (counted in
// r.runners, each holding a slot) and frees the slots left over. A store
// error is retried (without the claim) until the leases would have expired.
func (r *run) finishBatch(batch []finished) []engine.Claimed {
	defer func() {
		for range batch {
			r.runners.Done()
		}
	}()
	slots := len(batch)
	p := engine.FinishParams{Outcomes: make([]engine.Outcome, len(batch))}
	for i, f := range batch {
		p.Outcomes[i] = f.o
	}
	r.mu.Lock()
	stopping := r.stopping
	r.mu.Unlock()
	if !stopping {
	more:
		for slots < r.cfg.Limits.MaxBatch {
			select {
			case r.slots <- struct{}{}:
				slots++
			default:
				break more
			}
		}
		cp := r.claimParams(slots, 0)
		p.Claim = &cp
	}
	res, err := r.finishRetry(&p)
	var claimed []engine.Claimed
	switch {
	case err == nil:
		for i, f := range batch {
			r.settled(f.c, p.Outcomes[i], res.Settled[i], time.Since(f.start))
		}
		claimed = res.Claimed
	case errors.Is(err, weir.ErrInvalid):
		// An outcome was refused (a lower result limit than ours): store
		// them one by one, so that only that one becomes a failure.
		for _, f := range batch {
			r.finishOne(f)
		}
	default:
		for _, f := range batch {
			r.log.Error("weir: finish failed; the job's lease will expire", "job", f.o.JobID, "error", err)
		}
	}
	if len(claimed) > slots { // a store may hand out more
		for i := slots; i < len(claimed); i++ {
			r.release(&claimed[i])
		}
		claimed = claimed[:slots]
	}
	r.runners.Add(len(claimed)) // before the batch's Done calls: the count never passes zero
	for range slots - len(claimed) {
		<-r.slots
	}
	return claimed
}

// finishRetry runs p, retrying a store error (without the claim: one whose
// reply was lost must not be repeated) until the lease would have expired.
// It returns ErrInvalid and ErrProtocol at once.
func (r *run) finishRetry(p *engine.FinishParams) (engine.FinishResult, error) {
	retry := newBackoff()
	giveUp := time.Now().Add(r.cfg.Lease)
	for {
		res, err := r.store.Finish(r.loopCtx, *p)
		if err == nil {
			if len(res.Settled) != len(p.Outcomes) {
				return res, fmt.Errorf("%w: %d settled for %d outcomes", weir.ErrProtocol, len(res.Settled), len(p.Outcomes))
			}
			return res, nil
		}
		p.Claim = nil
		if errors.Is(err, weir.ErrInvalid) || errors.Is(err, weir.ErrProtocol) || time.Now().After(giveUp) {
			return res, err
		}
		r.log.Warn("weir: finish failed, retrying", "jobs", len(p.Outcomes), "error", err)
		if !retry.sleep(r.loopCtx) {
			return res, err
		}
	}
}

// finishOne stores one outcome without a claim; a completed outcome whose
// result the store refuses is stored as a failure instead.
func (r *run) finishOne(f finished) {
	o := f.o
	p := engine.FinishParams{Outcomes: []engine.Outcome{o}}
	for {
		res, err := r.finishRetry(&p)
		if err == nil {
			r.settled(f.c, o, res.Settled[0], time.Since(f.start))
			return
		}
		if errors.Is(err, weir.ErrInvalid) && o.Kind == engine.OutcomeCompleted {
			// The store refused the result (a lower limit than ours) or
			// the tasks it adds (spec/states.md, Dynamic tasks).
			what := "result"
			if len(o.Add) > 0 {
				what = "result or added tasks"
			}
			o = failNow(o, what+" refused by the store: "+err.Error())
			p.Outcomes[0] = o
			continue
		}
		r.log.Error("weir: finish failed; the job's lease will expire", "job", o.JobID, "error", err)
		return
	}
}

// release hands a job back unrun.
func (r *run) release(c *engine.Claimed) {
	o := engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeReleased}
	_ = r.finishNoClaim(c, o)
}

func (r *run) finishNoClaim(c *engine.Claimed, o engine.Outcome) error {
	res, err := r.store.Finish(r.loopCtx, engine.FinishParams{Outcomes: []engine.Outcome{o}})
	if err != nil {
		r.log.Warn("weir: release failed; the job's lease will expire", "job", o.JobID, "error", err)
		return err
	}
	r.settled(c, o, res.Settled[0], 0)
	return nil
}
