package conformance

import (
	"slices"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// The actions of the random sequences: each draws its arguments, calls the
// model and the store alike and compares their answers.

// action is one kind of step of the random sequences.
type action struct {
	name   string
	weight int // how many of the op draw's values choose it
	run    func(*differ)
}

// actions are the steps of the random sequences, in the order of the
// "op" draw's values: an action of weight w takes w of them. Old tapes
// replay as they were recorded as long as this order and these weights
// stay; a new action goes at the end (a tape that predates it never draws
// its values), with no new tape version.
var actions = []action{
	{"submit", 2, (*differ).submitStep},
	{"enqueue", 1, (*differ).enqueueStep},
	{"claim", 2, (*differ).claimStep},
	{"finish", 3, (*differ).finishStep},
	{"refinish", 1, (*differ).refinishStep},
	{"heartbeat", 1, (*differ).heartbeatStep},
	{"advance", 2, (*differ).advanceStep},
	{"expire", 1, (*differ).expireStep},
	{"cancel", 1, (*differ).cancelStep},
	{"queue", 1, (*differ).queueStep},
	{"list", 1, (*differ).listStep},
	{"repeat", 1, (*differ).repeatStep},
	{"listjobs", 1, (*differ).listJobs},
	{"retry", 1, (*differ).retryJob},
	{"delete", 1, (*differ).deleteRecord},
	{"progress", 1, (*differ).progress},
	{"signal", 1, (*differ).signal},
	{"rerun", 1, (*differ).rerun},
}

// opValues is the number of values the op draw takes: the sum of the
// actions' weights.
var opValues = func() int {
	n := 0
	for _, a := range actions {
		n += a.weight
	}
	return n
}()

// doStep draws an action and runs it.
func (d *differ) doStep() {
	op := d.intRange(0, opValues-1, "op")
	for _, a := range actions {
		if op < a.weight {
			d.action = a.name
			a.run(d)
			return
		}
		op -= a.weight
	}
}

// submitStep submits a plan of w1, w2 or w3: a new one, or the one it last submitted.
func (d *differ) submitStep() {
	id := sampled(d, []string{"w1", "w2", "w3"}, "wf")
	p, ok := d.plans[id]
	if !ok || d.intRange(0, 3, "newplan") == 0 {
		p = d.genPlan(id)
	}
	// a name and labels (0: none), from few, so that a filtered list
	// finds some (listStep)
	tag := sampled(d, wfTags, "wftag")
	do := func() {
		now := d.clock()
		sp := engine.SubmitParams{Plan: p, Name: tag.name, Labels: tag.labels}
		mr, merr := d.m.Submit(now, sp)
		sr, serr := d.s.Submit(d.ctx, sp)
		d.sameErr("submit", merr, serr)
		d.same("submit", mr, sr)
		if merr == nil {
			d.plans[id] = p
		}
	}
	d.last = do
	do()
}

// enqueueStep enqueues a plain job j1, j2 or j3: a new spec, or the one it last enqueued, now, delayed or at a time.
func (d *differ) enqueueStep() {
	now := d.clock()
	id := sampled(d, []string{"j1", "j2", "j3"}, "jobid")
	js, ok := d.specs[id]
	if !ok || d.intRange(0, 3, "newspec") == 0 {
		js = engine.JobSpec{
			ID: id, Queue: sampled(d, []string{"q1", "q2"}, "queue"),
			Priority:    d.intRange(-1, 1, "prio"),
			MaxAttempts: d.intRange(0, 3, "attempts"),
			MaxExpiries: sampled(d, []int{0, 0, weir.NoExpiries, 2}, "expiries"),
			Key:         sampled(d, []string{"", "A", "B", "C"}, "key"),
		}
		if d.bool("payload") {
			js.Payload = []byte("x")
		}
		if d.intRange(0, 2, "unique") > 0 {
			js.Unique = &engine.Unique{
				Key: sampled(d, []string{"", "k"}, "uniquekey"),
				For: sampled(d, []time.Duration{0, 0, 500 * time.Millisecond}, "uniquefor"),
			}
		}
	}
	js.RunAt, js.Delay = time.Time{}, 0
	switch d.intRange(0, 2, "delayed") {
	case 1:
		js.RunAt = now.Add(time.Duration(d.intRange(-100, 1000, "runat")) * time.Millisecond)
	case 2:
		// a delay is added to the store's clock, not to now
		js.Delay = time.Duration(d.intRange(1, 1000, "delay"))*time.Millisecond - time.Duration(d.intRange(0, 1, "delayns"))
	}
	do := func() {
		now := d.clock()
		mr, merr := d.m.Enqueue(now, engine.EnqueueParams{Job: js})
		sr, serr := d.s.Enqueue(d.ctx, engine.EnqueueParams{Job: js})
		d.sameErr("enqueue", merr, serr)
		d.same("enqueue", mr, sr)
		if merr == nil {
			d.specs[id] = js
			if !slices.Contains(d.jobs, id) {
				d.jobs = append(d.jobs, id)
			}
		}
	}
	d.last = do
	do()
}

// claimStep claims from a sample of the queues.
func (d *differ) claimStep() {
	now := d.clock()
	p := d.claimParams()
	mc, merr := d.m.Claim(now, p)
	sc, serr := d.s.Claim(d.ctx, p)
	d.sameErr("claim", merr, serr)
	d.same("claim", mc, d.mapClaims(mc, sc))
}

// finishStep finishes some of the latest leases, with a claim or without.
func (d *differ) finishStep() {
	if len(d.leases) == 0 {
		return
	}
	n := d.intRange(0, 3, "noutcomes")
	var mp, sp engine.FinishParams
	for i := 0; i < n; i++ {
		// mostly the latest leases
		k := len(d.leases) - 1 - d.intRange(0, min(len(d.leases)-1, 4), "lease")
		l := d.leases[k]
		o := engine.Outcome{
			JobID: l.job,
			Kind: sampled(d, []engine.OutcomeKind{engine.OutcomeCompleted, engine.OutcomeCompleted,
				engine.OutcomeFailed, engine.OutcomeFailed, engine.OutcomeCancelled, engine.OutcomeReleased}, "kind"),
			NonRetryable: d.intRange(0, 3, "nonretry") == 0,
			Error:        sampled(d, []string{"", "boom"}, "err"),
		}
		if d.bool("result") {
			o.Result = []byte(sampled(d, []string{"", "r1"}, "resultv"))
		}
		switch d.intRange(0, 5, "retryafter") {
		case 0:
			o.RetryAfter = 20 * time.Millisecond
		case 1:
			o.RetryAfter = 1500 * time.Microsecond
		}
		d.genAdd(&o)
		mo, so := o, o
		mo.Token, so.Token = l.mtok, l.stok
		mp.Outcomes = append(mp.Outcomes, mo)
		sp.Outcomes = append(sp.Outcomes, so)
	}
	if n == 0 || d.bool("andclaim") {
		c := d.claimParams()
		mp.Claim, sp.Claim = &c, &c
	}
	d.finish(mp, sp)
}

// refinishStep sends a past finish again.
func (d *differ) refinishStep() {
	if len(d.finishes) == 0 {
		return
	}
	f := d.finishes[d.intRange(0, len(d.finishes)-1, "past")]
	d.finish(f.m, f.s)
}

// heartbeatStep extends some leases.
func (d *differ) heartbeatStep() {
	now := d.clock()
	if len(d.leases) == 0 {
		return
	}
	var mp, sp engine.HeartbeatParams
	mp.Extend = time.Duration(sampled(d, []int{10, 500}, "extend")) * time.Millisecond
	sp.Extend = mp.Extend
	for i := d.intRange(1, 3, "nleases"); i > 0; i-- {
		l := d.leases[d.intRange(0, len(d.leases)-1, "lease")]
		mp.Leases = append(mp.Leases, engine.LeaseRef{JobID: l.job, Token: l.mtok})
		sp.Leases = append(sp.Leases, engine.LeaseRef{JobID: l.job, Token: l.stok})
	}
	mr, merr := d.m.Heartbeat(now, mp)
	sr, serr := d.s.Heartbeat(d.ctx, sp)
	d.sameErr("heartbeat", merr, serr)
	d.same("heartbeat", mr, sr)
}

// advanceStep moves the clock on.
func (d *differ) advanceStep() {
	d.clk.Advance(time.Millisecond * time.Duration(sampled(d, []int{0, 5, 30, 200, 1500}, "advance")))
}

// expireStep ends expired leases.
func (d *differ) expireStep() {
	now := d.clock()
	p := engine.ExpireParams{Max: d.intRange(0, 2, "max")}
	mr, merr := d.m.ExpireLeases(now, p)
	sr, serr := d.s.ExpireLeases(d.ctx, p)
	d.sameErr("expire", merr, serr)
	mr.Expired, sr.Expired = NormSettled(mr.Expired), NormSettled(sr.Expired)
	d.same("expire", mr, sr)
}

// cancelStep cancels a workflow (then, one time in two, re-runs it) or a job.
func (d *differ) cancelStep() {
	if d.bool("wfcancel") {
		p := engine.CancelWorkflowParams{ID: sampled(d, []string{"w1", "w2", "w3", "b/d"}, "wf")}
		switch d.intRange(0, 2, "undo") {
		case 1:
			p.Undo = new(bool)
		case 2:
			b := true
			p.Undo = &b
		}
		d.last = func() {
			now := d.clock()
			mr, merr := d.m.CancelWorkflow(now, p)
			sr, serr := d.s.CancelWorkflow(d.ctx, p)
			d.sameErr("cancel workflow", merr, serr)
			d.same("cancel workflow", mr, sr)
		}
		d.last()
		// one cancel in two is followed by a re-run of the workflow
		// (cancelled at once when none of its tasks ran)
		if d.intRange(0, 1, "cancelrerun") == 0 {
			d.rerunID(engine.RerunWorkflowParams{ID: p.ID})
		}
	} else {
		p := engine.CancelJobParams{ID: d.anyJobID()}
		d.last = func() {
			now := d.clock()
			mr, merr := d.m.CancelJob(now, p)
			sr, serr := d.s.CancelJob(d.ctx, p)
			d.sameErr("cancel job "+p.ID, merr, serr)
			d.same("cancel job "+p.ID, mr, sr)
		}
		d.last()
	}
}

// queueStep pauses, resumes, purges or limits a queue.
func (d *differ) queueStep() {
	q := sampled(d, []string{"q1", "q2", "q3"}, "queue")
	qop := d.intRange(0, 5, "qop")
	limit := 0
	var period time.Duration
	switch qop {
	case 3:
		limit = d.intRange(0, 2, "concurrency")
	case 4:
		limit = d.intRange(0, 3, "rate")
		period = time.Millisecond * time.Duration(sampled(d, []int{10, 100, 1000}, "period"))
	}
	d.last = func() {
		now := d.clock()
		switch qop {
		case 0:
			d.sameErr("pause", d.m.PauseQueue(now, q), d.s.PauseQueue(d.ctx, q))
		case 1:
			d.sameErr("resume", d.m.ResumeQueue(now, q), d.s.ResumeQueue(d.ctx, q))
		case 2:
			mr, merr := d.m.PurgeQueue(now, q)
			sr, serr := d.s.PurgeQueue(d.ctx, q)
			d.sameErr("purge", merr, serr)
			d.same("purge", mr, sr)
		case 3:
			p := engine.LimitQueueParams{Queue: q, Concurrency: limit}
			d.sameErr("limit", d.m.LimitQueue(now, p), d.s.LimitQueue(d.ctx, p))
		case 4:
			p := engine.RateLimitQueueParams{Queue: q, Limit: limit, Period: period}
			d.sameErr("rate", d.m.RateLimitQueue(now, p), d.s.RateLimitQueue(d.ctx, p))
		case 5:
			p := engine.LimitKeysParams{Queue: q, Concurrency: limit}
			d.sameErr("limit keys", d.m.LimitKeys(now, p), d.s.LimitKeys(d.ctx, p))
		}
	}
	d.last()
}

// wfTags are the names and labels submitStep gives, the first none.
var wfTags = []struct {
	name   string
	labels map[string]string
}{
	{},
	{"nightly-a", map[string]string{"team": "data", "env": "prod"}},
	{"nightly-b", map[string]string{"team": "ops"}},
	{"adhoc", map[string]string{"team": "data"}},
}

// listFilters are the name, label and ID prefix filters listStep gives,
// the first none. The ID prefixes came after the tape version of the draw
// (13) without a new one: they are appended, so that a tape's index picks
// what it picked when recorded.
var listFilters = []weir.ListParams{
	{},
	{Name: "nightly"},
	{Labels: map[string]string{"team": "data"}},
	{Name: "nightly-a", Labels: map[string]string{"env": "prod"}},
	{IDPrefix: "w1"},
	{IDPrefix: "w", Name: "nightly"},
	{IDPrefix: "b/d"}, // refused alike
}

// listStep lists workflows, following cursors.
func (d *differ) listStep() {
	now := d.clock()
	p := weir.ListParams{Limit: d.intRange(1, 2, "limit")}
	if d.bool("filter") {
		p.State = sampled(d, []weir.WorkflowState{weir.WorkflowRunning, weir.WorkflowCompleted,
			weir.WorkflowFailed, weir.WorkflowCompensated, weir.WorkflowCancelled}, "state")
	}
	f := sampled(d, listFilters, "listfilter")
	p.Name, p.Labels, p.IDPrefix = f.Name, f.Labels, f.IDPrefix
	for range 5 {
		mr, merr := d.m.ListWorkflows(now, p)
		sr, serr := d.s.ListWorkflows(d.ctx, p)
		d.sameErr("list", merr, serr)
		d.same("list", mr, sr)
		if mr.NextCursor == "" {
			break
		}
		p.Cursor = mr.NextCursor
	}
}

// repeatStep repeats the last submit, enqueue, cancel, queue, signal or rerun operation, as if its reply was lost.
func (d *differ) repeatStep() {
	if d.last != nil {
		d.last()
	}
}
