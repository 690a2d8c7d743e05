package redisstore

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"slices"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// Finish implements engine.Store.
func (pt *part) Finish(ctx context.Context, p engine.FinishParams) (engine.FinishResult, error) {
	if err := pt.validateFinish(p); err != nil {
		return engine.FinishResult{}, err
	}
	res := engine.FinishResult{Settled: make([]engine.Settled, len(p.Outcomes))}
	// Outcomes whose job ID cannot exist are answered here; the others go
	// to the script, in order. sent lists those sent, or is nil when all
	// are.
	var sent []int
	for i, o := range p.Outcomes {
		if validJobID(o.JobID) {
			if sent != nil {
				sent = append(sent, i)
			}
			continue
		}
		if sent == nil {
			sent = make([]int, i, len(p.Outcomes))
			for k := range sent {
				sent[k] = k
			}
		}
		res.Settled[i] = engine.Settled{JobID: o.JobID, Err: fmt.Errorf("%w: job %q is unknown", weir.ErrLeaseLost, o.JobID)}
	}
	nSent := len(p.Outcomes)
	if sent != nil {
		nSent = len(sent)
	}
	if sent == nil {
		sent = make([]int, nSent)
		for k := range sent {
			sent[k] = k
		}
	}
	// A call that stops on its budget (drain.go) settled the first n of
	// what it was sent: the rest, and the claim, go in another call once
	// the cascade it left is drained.
	var doneIdx []int
	var kept []string // workflows that earlier calls of this finish ended
	for {
		n, claimed, at, stopped, err := pt.finishOnce(ctx, p, sent, kept, res.Settled)
		if err != nil {
			return engine.FinishResult{}, err
		}
		res.Claimed = appendClaimed(res.Claimed, claimed)
		if !stopped {
			return res, nil
		}
		var d drained
		if err := pt.drain(ctx, &d); err != nil {
			return engine.FinishResult{}, err
		}
		if at > 0 {
			// the claim stopped in its at-th queue: it goes on from there
			c := *p.Claim
			c.Queues, c.Max, c.Wait = resumeQueues(c.Queues, at-1), c.Max-len(claimed), 0
			more, _, err := pt.claimOnce(ctx, c, 0)
			if err != nil {
				return engine.FinishResult{}, err
			}
			res.Claimed = appendClaimed(res.Claimed, more)
			return res, nil
		}
		if n > 0 {
			d.addTo(&res.Settled[sent[n-1]])
		}
		for _, i := range sent[:n] {
			if st := res.Settled[i]; st.WorkflowEnded {
				wf, _, _ := strings.Cut(st.JobID, "/")
				kept = append(kept, wf)
			}
		}
		doneIdx = append(doneIdx, sent[:n]...)
		sent = answerRepeats(p.Outcomes, doneIdx, sent[n:], res.Settled)
		if len(sent) == 0 && p.Claim == nil {
			return res, nil
		}
	}
}

// answerRepeats answers, among the outcomes at the indices rest, those
// that repeat the last outcome at done of the same job (same token, and
// answered without error), as one call would: with that outcome's Settled
// (its record may be gone since: a plain job that ended with retention 0).
// Every other outcome is left to send: the script finds in the job's
// record what one call would have known (a settle cleared the token and
// kept its Settled under its own; an outcome that repeated an older finish
// changed nothing). Returns the indices left to send.
func answerRepeats(outcomes []engine.Outcome, done, rest []int, settled []engine.Settled) []int {
	left := rest[:0:0]
	for _, i := range rest {
		o := outcomes[i]
		last := -1 // the last outcome of the job sent so far
		for _, k := range done {
			if outcomes[k].JobID == o.JobID {
				last = k
			}
		}
		if last < 0 || outcomes[last].Token != o.Token || settled[last].Err != nil {
			left = append(left, i)
			continue
		}
		settled[i] = settled[last]
		settled[i].Pushed = slices.Clone(settled[last].Pushed)
	}
	return left
}

// finishOnce sends the outcomes of p at the indices sent, and p's claim,
// in one finish call (which still finds the workflows kept names after
// their retention passed: earlier calls of this finish ended them), storing each Settled in settled; returns how many
// outcomes it settled, what it claimed, and whether and where it stopped
// on its budget (at: 0 among the outcomes, else in the claim's at-th
// queue).
func (pt *part) finishOnce(ctx context.Context, p engine.FinishParams, sent []int, kept []string, settled []engine.Settled) (n int, claimed []engine.Claimed, at int, stopped bool, err error) {
	lim := pt.cfg.Limits
	nSent := len(sent)
	nq := 0
	if p.Claim != nil {
		nq = len(p.Claim.Queues)
	}
	// the additions' blocks follow the outcomes: where each starts, in
	// the script's ARGV (its first three are call.go's)
	blocks := 0
	for _, i := range sent {
		if o := &p.Outcomes[i]; len(o.Add) > 0 && o.Kind == engine.OutcomeCompleted {
			blocks += addBlockLen(o)
		}
	}
	args := pt.argv(scripts["finish"], 1+9*nSent+1+blocks+5+nq)
	args = append(args, nSent)
	bs := 3 + 1 + 9*nSent + 1 + 1 // ARGV index of the first block
	for _, i := range sent {
		o := &p.Outcomes[i]
		msg := o.Error
		if len(msg) > lim.MaxError {
			msg = msg[:lim.MaxError]
		}
		// RetryAfter in whole milliseconds, rounded up, as the model does.
		retryAfter := (o.RetryAfter + time.Millisecond - 1).Milliseconds()
		args = append(args, o.JobID, o.Token, kindArg(o.Kind), flagArg(o.Result != nil), bytesArg(o.Result), msg,
			flagArg(o.NonRetryable), retryAfter)
		if len(o.Add) > 0 && o.Kind == engine.OutcomeCompleted {
			args = append(args, bs)
			bs += addBlockLen(o)
		} else {
			args = append(args, argEmpty)
		}
	}
	args = append(args, blocks)
	if blocks > 0 {
		for _, i := range sent {
			if o := &p.Outcomes[i]; len(o.Add) > 0 && o.Kind == engine.OutcomeCompleted {
				args = appendAddBlock(args, o, lim)
			}
		}
	}
	args = append(args, strings.Join(kept, " "))
	if p.Claim != nil {
		args = appendClaimArgs(args, *p.Claim)
	} else {
		args = append(args, 0, 0, argEmpty, argEmpty)
	}
	v, err := pt.call(ctx, scripts["finish"], args)
	if err != nil {
		return 0, nil, 0, false, addError(err)
	}
	r := newReader(v)
	n = r.count()
	if r.err == nil && (n > nSent || (n < nSent && !strings.HasPrefix(v[len(v)-1], "P"))) {
		return 0, nil, 0, false, fmt.Errorf("%w: %d settled for %d outcomes", weir.ErrProtocol, n, nSent)
	}
	for k := range n {
		settled[sent[k]] = r.settled()
	}
	claimed = r.claimed()
	at, stopped = r.stopped()
	if err := r.done(); err != nil {
		return 0, nil, 0, false, err
	}
	if err := pt.readDeps(ctx, claimed, r.lazy); err != nil {
		return 0, nil, 0, false, err
	}
	return n, claimed, at, stopped, nil
}

// validateFinish checks a finish before anything is sent.
func (pt *part) validateFinish(p engine.FinishParams) error {
	lim := pt.cfg.Limits
	if len(p.Outcomes) == 0 && p.Claim == nil {
		return invalid("outcomes", "give at least one outcome or a claim")
	}
	if len(p.Outcomes) > lim.MaxBatch {
		return tooLarge("outcomes", "%d outcomes, the limit is %d", len(p.Outcomes), lim.MaxBatch)
	}
	for _, o := range p.Outcomes {
		switch o.Kind {
		case engine.OutcomeCompleted, engine.OutcomeFailed, engine.OutcomeCancelled, engine.OutcomeReleased:
		default:
			return invalid("kind", "outcome kind %q of job %q is not completed, failed, cancelled or released", o.Kind, o.JobID)
		}
		if len(o.Result) > lim.MaxResult {
			return tooLarge("result", "result of job %q is %d bytes, the limit is %d", o.JobID, len(o.Result), lim.MaxResult)
		}
		if o.RetryAfter < 0 || o.RetryAfter > lim.MaxBackoff {
			return invalid("retry_after", "%v of job %q is outside [0, %v]", o.RetryAfter, o.JobID, lim.MaxBackoff)
		}
		if err := engine.ValidateAdd(o, lim); err != nil {
			return err
		}
	}
	if p.Claim != nil {
		if err := pt.validateClaim(*p.Claim); err != nil {
			return err
		}
	}
	return nil
}
