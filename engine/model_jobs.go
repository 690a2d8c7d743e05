package engine

import (
	"github.com/weirflow/weir"
	"slices"
	"strconv"
	"time"
)

// SweepPerClaim bounds the expired leases and the due delayed jobs a claim
// handles in each queue it claims from, before it takes jobs.
const SweepPerClaim = 100

// Enqueue writes a plain job and pushes it, or delays it until RunAt.
func (m *Model) Enqueue(now time.Time, p EnqueueParams) (EnqueueResult, error) {
	t := m.tick(now)
	s := p.Job
	if err := ValidateJob(s, m.cfg.Limits); err != nil {
		return EnqueueResult{}, err
	}
	if err := ValidateTraceParent(p.TraceParent); err != nil {
		return EnqueueResult{}, err
	}
	h := JobHash(s)
	if j := m.jobs[s.ID]; j != nil {
		if j.hash == h {
			return EnqueueResult{State: j.state}, nil
		}
		return EnqueueResult{}, wrap(weir.ErrJobExists, "job %q", s.ID)
	}
	res := m.enqueue(t, s, h)
	if res.Created {
		m.jobs[s.ID].traceParent = p.TraceParent
	}
	return res, nil
}

// enqueue writes a new plain job of spec s (fingerprint h) at time t and
// pushes it, or returns the state of the one already under its ID.
func (m *Model) enqueue(t int64, s JobSpec, h string) EnqueueResult {
	if j := m.jobs[s.ID]; j != nil {
		return EnqueueResult{State: j.state}
	}
	digest := UniqueDigest(s)
	if digest != "" {
		if h := m.uniqueHolder(digest, t); h != nil {
			return EnqueueResult{State: h.state, Existing: h.id}
		}
		l := uniqueLock{job: s.ID}
		if s.Unique.For > 0 {
			l.until = t + DelayMillis(s.Unique.For)
		}
		m.unique[digest] = l
	}
	j := &job{
		id: s.ID, queue: s.Queue, payload: slices.Clone(s.Payload), priority: s.Priority,
		maxAttempts: attemptsOrDefault(s.MaxAttempts), maxExpiries: expiriesOrDefault(s.MaxExpiries), backoff: ms(backoffOrDefault(s.Backoff)),
		timeout: ms(s.Timeout), created: t, hash: h, unique: digest, key: s.Key,
	}
	switch {
	case !s.RunAt.IsZero():
		j.runAt = s.RunAt.UnixMilli()
	case s.Delay > 0:
		j.runAt = t + DelayMillis(s.Delay)
	}
	m.jobs[j.id] = j
	var fx effects
	m.push(j, t, &fx)
	return EnqueueResult{Created: true, State: j.state}
}

// uniqueHolder returns the job that holds the unique key digest at t, or
// nil when it is free: a key is held until its job ends (or, with a
// duration, until then), and never by a job whose record is gone.
func (m *Model) uniqueHolder(digest string, t int64) *job {
	l, ok := m.unique[digest]
	if !ok {
		return nil
	}
	h := m.jobs[l.job]
	switch {
	case h == nil:
	case l.until == 0 && !h.state.Ended():
		return h
	case l.until > 0 && t < l.until:
		return h
	}
	delete(m.unique, digest)
	return nil
}

// DelayMillis is a JobSpec.Delay in whole milliseconds, rounded up.
func DelayMillis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// Claim leases up to p.Max ready jobs from p.Queues in order, skipping paused
// queues. Before taking from a queue it expires that queue's overdue leases
// and makes its due delayed jobs ready (at most SweepPerClaim of each). A
// job that is no longer runnable is dropped from the queue, not handed out.
func (m *Model) Claim(now time.Time, p ClaimParams) ([]Claimed, error) {
	t := m.tick(now)
	if err := m.validateClaim(p); err != nil {
		return nil, err
	}
	return m.claim(t, p), nil
}

func (m *Model) validateClaim(p ClaimParams) error {
	if err := validateQueues(p.Queues); err != nil {
		return err
	}
	if err := validateBatch("max", p.Max, m.cfg.Limits); err != nil {
		return err
	}
	if err := ValidateWorkerID(p.WorkerID); err != nil {
		return err
	}
	return validateLease(p.Lease, m.cfg.Limits)
}

func (m *Model) claim(now int64, p ClaimParams) []Claimed {
	var out []Claimed
	for i, name := range p.Queues {
		if slices.Contains(p.Queues[:i], name) {
			continue
		}
		q := m.queues[name]
		if q == nil || q.paused {
			continue
		}
		m.sweep(q, now, SweepPerClaim, nil)
		q.rate.trim(now)
		for len(out) < p.Max && (q.limit == 0 || q.active.Len() < q.limit) && q.rate.room() > 0 {
			it, ok := q.ready.min()
			if !ok {
				break
			}
			q.ready.popMin()
			j := m.jobs[it.id]
			if j == nil || j.state != weir.Queued {
				continue // not runnable any more: dropped
			}
			out = append(out, m.lease(j, q, now, p))
		}
		out = m.claimKeyed(q, now, p, out)
		if len(out) == p.Max {
			break
		}
	}
	return out
}

// lease leases queued job j of queue q.
func (m *Model) lease(j *job, q *queue, now int64, p ClaimParams) Claimed {
	j.state = weir.Running
	j.attempt++
	j.cur, j.worker, j.started = true, p.WorkerID, now
	m.emitW(weir.EventStarted, j.id, j.attempt, "", j.worker, now)
	m.leaseSeq++
	j.token = strconv.FormatInt(m.leaseSeq, 10)
	j.deadline = now + ms(p.Lease)
	q.active.add(j.id, j.deadline, 0)
	q.rate.started(now)
	c := j.claimed(m.deps(j))
	c.TraceParent, c.ReadyAt, c.PromotedAfter = j.traceContext(), toTime(j.readyAt), toTime(j.promotedAt)
	return c
}

// deps returns the outcomes a claimed job is handed.
func (m *Model) deps(j *job) []weir.DepOutcome {
	if j.wf == nil {
		return nil
	}
	plan := &j.wf.c.plan
	dep := func(i int) weir.DepOutcome {
		t := j.wf.tasks[i]
		return weir.DepOutcome{Task: plan.Tasks[i].Name, State: t.state, Result: slices.Clone(t.result), Error: t.err}
	}
	if j.undo {
		return []weir.DepOutcome{dep(j.task)}
	}
	var out []weir.DepOutcome
	for _, d := range j.wf.c.deps[j.task] {
		out = append(out, dep(d))
	}
	return out
}

// Finish settles each outcome in order, then claims when p.Claim is set.
// The whole call is checked first: a bad outcome (unknown kind, result over
// the limit) fails the call with nothing changed. A stale token fails only
// its own outcome, with Settled.Err = ErrLeaseLost.
func (m *Model) Finish(now time.Time, p FinishParams) (FinishResult, error) {
	t := m.tick(now)
	if err := m.validateFinish(p); err != nil {
		return FinishResult{}, err
	}
	if err := m.addCheck(p.Outcomes); err != nil {
		return FinishResult{}, err
	}
	res := FinishResult{Settled: make([]Settled, len(p.Outcomes))}
	for i, o := range p.Outcomes {
		res.Settled[i] = m.finish(t, o)
	}
	if p.Claim != nil {
		res.Claimed = m.claim(t, *p.Claim)
	}
	return res, nil
}

// validateFinish checks what of a finish needs no state: the outcomes'
// count and each outcome, the claim.
func (m *Model) validateFinish(p FinishParams) error {
	if len(p.Outcomes) == 0 && p.Claim == nil {
		return invalid("", "outcomes", "give at least one outcome or a claim")
	}
	if len(p.Outcomes) > m.cfg.Limits.MaxBatch {
		return tooLarge("", "outcomes", "%d outcomes, the limit is %d", len(p.Outcomes), m.cfg.Limits.MaxBatch)
	}
	for _, o := range p.Outcomes {
		if err := m.validateOutcome(o); err != nil {
			return err
		}
	}
	if p.Claim != nil {
		return m.validateClaim(*p.Claim)
	}
	return nil
}

func (m *Model) validateOutcome(o Outcome) error {
	switch o.Kind {
	case OutcomeCompleted, OutcomeFailed, OutcomeCancelled, OutcomeReleased:
	default:
		return invalid("", "kind", "outcome kind %q of job %q is not completed, failed, cancelled or released", o.Kind, o.JobID)
	}
	if len(o.Result) > m.cfg.Limits.MaxResult {
		return tooLarge("", "result", "result of job %q is %d bytes, the limit is %d", o.JobID, len(o.Result), m.cfg.Limits.MaxResult)
	}
	if o.RetryAfter < 0 || o.RetryAfter > m.cfg.Limits.MaxBackoff {
		return invalid("", "retry_after", "%v of job %q is outside [0, %v]", o.RetryAfter, o.JobID, m.cfg.Limits.MaxBackoff)
	}
	return ValidateAdd(o, m.cfg.Limits)
}

func (m *Model) finish(now int64, o Outcome) Settled {
	j := m.jobs[o.JobID]
	if j == nil {
		return Settled{JobID: o.JobID, Err: wrap(weir.ErrLeaseLost, "job %q is unknown", o.JobID)}
	}
	if j.last != nil && j.last.token == o.Token {
		return j.last.settled // a repeat: same answer, no effect
	}
	if j.state != weir.Running || j.token != o.Token {
		return Settled{JobID: o.JobID, Err: wrap(weir.ErrLeaseLost, "job %q is not leased with token %q", o.JobID, o.Token)}
	}
	s := m.settle(now, j, o)
	j.last = &lastFinish{token: o.Token, settled: s}
	return s
}

// settle applies an outcome to a running job.
func (m *Model) settle(now int64, j *job, o Outcome) Settled {
	m.queues[j.queue].active.remove(j.id)
	m.queues[j.queue].releaseKey(j)
	j.token = ""
	j.deadline = 0
	var fx effects
	switch o.Kind {
	case OutcomeCompleted:
		j.result = slices.Clone(o.Result)
		j.err = ""
		if len(o.Add) > 0 && j.wf != nil && !j.undo {
			// its additions come first, then its cascade and theirs
			m.endState(j, weir.Completed, now)
			born := m.grow(j.wf, j.task, o, now, &fx)
			m.taskEnded(j.wf, append([]int{j.task}, born...), now, &fx)
			break
		}
		m.end(j, weir.Completed, now, &fx)
	case OutcomeCancelled:
		j.err = m.cutError(o.Error)
		m.end(j, weir.Cancelled, now, &fx)
	case OutcomeReleased:
		m.archive(j, now, weir.AttemptReleased, "")
		j.attempt--
		if j.cancelReq {
			j.err = weir.ReasonTextJobCancelled
			m.end(j, weir.Cancelled, now, &fx)
		} else {
			m.emitW(weir.EventRetried, j.id, j.attempt, "released", j.worker, now)
			m.push(j, now, &fx)
		}
	case OutcomeFailed:
		j.err = m.cutError(o.Error)
		switch {
		case j.cancelReq:
			m.end(j, weir.Cancelled, now, &fx)
		case !o.NonRetryable && j.attempt-j.expiries < j.maxAttempts:
			m.archive(j, now, weir.AttemptFailed, j.err)
			delay := m.backoffDelay(j)
			if o.RetryAfter > 0 {
				// whole milliseconds, rounded up: never earlier than asked
				delay = ms(o.RetryAfter + time.Millisecond - 1)
			}
			j.runAt = now + delay
			m.emitW(weir.EventRetried, j.id, j.attempt, j.err, j.worker, now)
			m.push(j, now, &fx)
		default:
			m.end(j, weir.Failed, now, &fx)
		}
	}
	s := Settled{JobID: j.id, State: j.state, RunAt: toTime(j.runAt), Pushed: fx.pushed, WorkflowEnded: fx.wfEnded}
	if j.wf != nil {
		s.WorkflowState = j.wf.state
	}
	return s
}

// expireLease ends running job j's attempt when its lease ran out: within
// its expiry budget (and not asked to cancel) it is queued again at once,
// reason lease_expired, the attempt not counted; past it, the attempt
// failed with reason lease_expired.
func (m *Model) expireLease(now int64, j *job) Settled {
	m.archive(j, now, weir.AttemptExpired, weir.ReasonTextLeaseExpired)
	if j.cancelReq || j.expiries >= j.maxExpiries {
		return m.settle(now, j, Outcome{JobID: j.id, Kind: OutcomeFailed, Error: weir.ReasonTextLeaseExpired})
	}
	m.queues[j.queue].active.remove(j.id)
	m.queues[j.queue].releaseKey(j)
	j.token = ""
	j.deadline = 0
	j.expiries++
	j.err = weir.ReasonTextLeaseExpired
	m.emitW(weir.EventRetried, j.id, j.attempt, j.err, j.worker, now)
	var fx effects
	m.push(j, now, &fx)
	s := Settled{JobID: j.id, State: j.state, Pushed: fx.pushed}
	if j.wf != nil {
		s.WorkflowState = j.wf.state
	}
	return s
}

// end moves a job to a terminal state and runs the consequences.
func (m *Model) end(j *job, s weir.State, now int64, fx *effects) {
	m.endState(j, s, now)
	m.afterEnd(j, now, fx)
}

// endState moves a job to a terminal state, without the consequences.
func (m *Model) endState(j *job, s weir.State, now int64) {
	att, reason, worker := 0, j.err, ""
	if j.state == weir.Running {
		att, worker = j.attempt, j.worker
	}
	if s == weir.Completed {
		reason = ""
	}
	m.emitW(weir.EventType(s), j.id, att, reason, worker, now)
	j.state = s
	j.ended = now
	j.runAt = 0
}

// Heartbeat extends each live lease to now + p.Extend and says whether its
// job should stop.
func (m *Model) Heartbeat(now time.Time, p HeartbeatParams) ([]LeaseStatus, error) {
	t := m.tick(now)
	if err := m.validateHeartbeat(p); err != nil {
		return nil, err
	}
	out := make([]LeaseStatus, len(p.Leases))
	for i, l := range p.Leases {
		j := m.jobs[l.JobID]
		if j == nil || j.state != weir.Running || j.token != l.Token {
			out[i] = LeaseStatus{JobID: l.JobID, Lost: true}
			continue
		}
		j.deadline = t + ms(p.Extend)
		m.queues[j.queue].active.add(j.id, j.deadline, 0)
		out[i] = LeaseStatus{JobID: l.JobID, Cancel: j.cancelReq, Deadline: toTime(j.deadline)}
	}
	return out, nil
}

func (m *Model) validateHeartbeat(p HeartbeatParams) error {
	if err := validateBatch("leases", len(p.Leases), m.cfg.Limits); err != nil {
		return err
	}
	return validateLease(p.Extend, m.cfg.Limits)
}

// ExpireLeases sweeps every queue, by name: leases whose deadline is not
// after now end their attempt as failed with reason "lease_expired" (retried
// while attempts remain), then due delayed jobs become ready.
func (m *Model) ExpireLeases(now time.Time, p ExpireParams) (ExpireResult, error) {
	t := m.tick(now)
	max := p.Max
	if max == 0 {
		max = m.cfg.Limits.MaxBatch
	}
	if err := validateBatch("max", max, m.cfg.Limits); err != nil {
		return ExpireResult{}, err
	}
	names := make([]string, 0, len(m.queues))
	for n := range m.queues {
		names = append(names, n)
	}
	slices.Sort(names)
	var res ExpireResult
	for _, n := range names {
		m.sweep(m.queues[n], t, max, &res)
	}
	return res, nil
}

// sweep expires overdue leases of q, then makes its due delayed jobs ready,
// each in (time, ID) order and at most max of each.
func (m *Model) sweep(q *queue, now int64, max int, res *ExpireResult) {
	for n := 0; n < max; n++ {
		it, ok := q.active.min()
		if !ok || it.a > now {
			break
		}
		s := m.expireLease(now, m.jobs[it.id])
		if res != nil {
			res.Expired = append(res.Expired, s)
		}
	}
	for n := 0; n < max; n++ {
		it, ok := q.delayed.min()
		if !ok || it.a > now {
			break
		}
		q.delayed.popMin()
		if wf := deadlineOf(it.id); wf != "" {
			s := m.deadlinePassed(now, m.workflows[wf])
			if res != nil {
				res.Expired = append(res.Expired, s)
			}
			continue
		}
		j := m.jobs[it.id]
		if j.state == weir.Open {
			s := m.signalTimedOut(now, j)
			if res != nil {
				res.Expired = append(res.Expired, s)
			}
			continue
		}
		j.runAt = 0
		var fx effects
		due := j.readyAt
		m.push(j, now, &fx)
		j.readyAt = due // ready since it was due (never a promotion)
		if res != nil {
			res.Due = append(res.Due, fx.pushed...)
		}
	}
}

// CancelJob cancels one job. A waiting, queued or pending job ends cancelled
// at once, with the workflow consequences of a cancelled task (or undo); a
// running one is told to stop (its next heartbeat says Cancel, and a failed
// attempt then ends it cancelled, never retried).
func (m *Model) CancelJob(now time.Time, p CancelJobParams) (CancelResult, error) {
	t := m.tick(now)
	j := m.jobs[p.ID]
	if j == nil {
		return CancelResult{}, wrap(weir.ErrNotFound, "job %q", p.ID)
	}
	if j.state.Ended() {
		return CancelResult{State: j.state}, wrap(weir.ErrJobEnded, "job %q is %s", p.ID, j.state)
	}
	var fx effects
	var res CancelResult
	if j.state == weir.Running {
		j.cancelReq = true
		res.Stopping = []string{j.id}
	} else {
		m.cancelTask(j, weir.ReasonTextJobCancelled, t, &fx)
		m.afterEnd(j, t, &fx)
		res.Cancelled = fx.cancelled
	}
	res.State = j.state
	res.Pushed = fx.pushed
	if j.wf != nil {
		res.WorkflowState = j.wf.state
	}
	return res, nil
}

// afterEnd runs the consequences of a job that just ended: retention for a
// plain job, promotion and the workflow's progress for a task or undo job.
func (m *Model) afterEnd(j *job, now int64, fx *effects) {
	switch {
	case j.wf == nil:
		j.expires = now + ms(m.cfg.Retention)
		m.expiry.add("j:"+j.id, j.expires, 0)
		if l, ok := m.unique[j.unique]; ok && l.job == j.id && l.until == 0 {
			delete(m.unique, j.unique)
		}
	case j.undo:
		m.undoEnded(j.wf, j.task, now, fx)
	default:
		m.taskEnded(j.wf, []int{j.task}, now, fx)
	}
}

// PurgeQueue cancels every job waiting in a queue: the ready ones in claim
// order (the unkeyed ones, then the keyed ones by priority and push), then the delayed ones in due order, each with the consequences of a
// cancel. Jobs pushed into the queue by those consequences stay.
func (m *Model) PurgeQueue(now time.Time, name string) (PurgeResult, error) {
	t := m.tick(now)
	if !ValidName(name) {
		return PurgeResult{}, invalid("", "queue", "queue name %q must "+NameRule, name)
	}
	q := m.queues[name]
	if q == nil {
		return PurgeResult{}, nil
	}
	var ids []string
	for _, it := range q.ready.sorted() {
		ids = append(ids, it.id)
	}
	for _, it := range q.keyedSorted() {
		ids = append(ids, it.id)
	}
	for _, it := range q.delayed.sorted() {
		ids = append(ids, it.id)
	}
	var res PurgeResult
	var fx effects
	for _, id := range ids {
		j := m.jobs[id]
		if j == nil || j.state != weir.Queued {
			continue
		}
		m.cancelTask(j, weir.ReasonTextPurged, t, &fx)
		m.afterEnd(j, t, &fx)
		res.Purged = append(res.Purged, id)
	}
	res.Pushed = fx.pushed
	return res, nil
}
