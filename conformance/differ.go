package conformance

import (
	"context"
	"github.com/weirflow/weir"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/weirflow/weir/engine"
)

// Sentinel returns the engine sentinel err matches (weir.Sentinel), or
// err itself when it matches none (nil for nil): how the suite compares
// the errors of two stores.
func Sentinel(err error) error {
	if e := weir.Sentinel(err); e != nil {
		return e
	}
	return err
}

// differ drives engine.Model and a redisstore.Store with the same calls and the
// same clock, and compares every reply and the state after every step.
type differ struct {
	t     tb
	ctx   context.Context
	m     *engine.Model
	s     engine.Store
	qi    QueueInspector // nil when the store has none
	obs   Observer       // nil when the store has none, or for per-call reads
	src   source         // the random choices of a sequence (nil outside sequences)
	tape  []int          // the choices drawn so far
	clk   *Clock
	toks  map[string]string // store token -> model token
	plans map[string]engine.Plan
	jobs  []string // plain job IDs used
	specs map[string]engine.JobSpec
	// leases seen: (job, model token) with the store's token
	leases   []leaseSeen
	finishes []finishCall // past finish calls, for repeats
	step     int
	last     func() // repeats the last mutating call, as if its reply was lost
	evAfter  string // the store's event cursor (events.go)
}

// tb is what the differ needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

type leaseSeen struct{ job, mtok, stok string }

type finishCall struct{ m, s engine.FinishParams }

func (d *differ) clock() time.Time { return d.clk.Now() }

// colocated returns id, or in a namespace of partitions the first of id+"0",
// id+"1", ... that lands in the partition of with: a case that expects
// claims in FIFO order keeps its jobs in one partition, where that order
// holds (spec/partitions.md, Claim rotation).
func (d *differ) colocated(id, with string) string {
	n := d.m.Parts()
	if n < 2 || engine.Partition(id, n) == engine.Partition(with, n) {
		return id
	}
	for k := 0; ; k++ {
		if c := id + strconv.Itoa(k); engine.Partition(c, n) == engine.Partition(with, n) {
			return c
		}
	}
}

func (d *differ) fatalf(format string, args ...any) {
	d.t.Helper()
	if d.src != nil {
		format += "\n" + regressionHint
		args = append(args, formatTape(d.tape))
	}
	d.t.Fatalf("step %d: "+format, append([]any{d.step}, args...)...)
}

func (d *differ) sameErr(op string, me, se error) {
	d.t.Helper()
	if Sentinel(me) != Sentinel(se) {
		d.fatalf("%s: model error %v, store error %v", op, me, se)
	}
}

func (d *differ) same(op string, mv, sv any) {
	d.t.Helper()
	if !reflect.DeepEqual(mv, sv) {
		d.fatalf("%s differs:\nmodel %+v\nstore %+v", op, mv, sv)
	}
}

// mapClaims pairs the model's and the store's lease tokens and rewrites
// the store's claims with the model's tokens.
func (d *differ) mapClaims(mc, sc []engine.Claimed) []engine.Claimed {
	d.t.Helper()
	if len(mc) != len(sc) {
		d.fatalf("claimed %d (model) vs %d (store)", len(mc), len(sc))
	}
	out := make([]engine.Claimed, len(sc))
	for i := range sc {
		c := sc[i]
		if c.Job.ID != mc[i].Job.ID {
			d.fatalf("claim %d: model %s, store %s", i, mc[i].Job.ID, c.Job.ID)
		}
		d.toks[c.Lease.Token] = mc[i].Lease.Token
		d.leases = append(d.leases, leaseSeen{c.Job.ID, mc[i].Lease.Token, c.Lease.Token})
		c.Lease.Token = mc[i].Lease.Token
		if c.Job.Lease != nil {
			l := *c.Job.Lease
			l.Token = d.toks[l.Token]
			c.Job.Lease = &l
		}
		out[i] = c
	}
	if sc == nil {
		return nil
	}
	return out
}

func (d *differ) normJob(j weir.Job) weir.Job {
	if j.Lease != nil {
		l := *j.Lease
		mt, ok := d.toks[l.Token]
		if !ok {
			d.fatalf("job %s has an unknown store token %q", j.ID, l.Token)
		}
		l.Token = mt
		j.Lease = &l
	}
	return j
}

// NormSettled returns a copy of ss with each Err replaced by Sentinel(Err):
// how the suite compares the settled jobs of two stores' replies.
func NormSettled(ss []engine.Settled) []engine.Settled {
	if ss == nil {
		return nil
	}
	out := slices.Clone(ss)
	for i := range out {
		out[i].Err = Sentinel(out[i].Err)
	}
	return out
}

// check compares the whole observable state: in one call when the store
// is an Observer, else by the store's own reads.
func (d *differ) check() {
	d.t.Helper()
	if d.obs != nil {
		d.checkObserved()
		return
	}
	d.checkEach()
}

// checkEach compares the whole observable state read by the store's
// Queues, QueueContents, GetWorkflow and GetJob, one call each.
func (d *differ) checkEach() {
	d.t.Helper()
	now := d.clock()
	mq := d.m.Queues(now)
	sq, err := d.s.Queues(d.ctx)
	if err != nil {
		d.fatalf("queues: %v", err)
	}
	d.same("queues", mq, sq)
	d.checkEndedLists(mq)
	if d.qi != nil {
		for _, q := range mq {
			mc := d.m.QueueContents(now, q.Name)
			sc, err := d.qi.QueueContents(d.ctx, q.Name)
			if err != nil {
				d.fatalf("queue contents %s: %v", q.Name, err)
			}
			d.same("queue "+q.Name+" contents", mc, sc)
		}
	}
	ids := make([]string, 0, len(d.plans))
	for id := range d.plans {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		mw, merr := d.m.GetWorkflow(now, id)
		sw, serr := d.s.GetWorkflow(d.ctx, id)
		d.sameErr("get workflow "+id, merr, serr)
		d.same("workflow "+id, mw, sw)
		jids := d.webhookJobIDs(id)
		for _, t := range d.plans[id].Tasks {
			jids = append(jids, weir.TaskJobID(id, t.Name), weir.UndoJobID(id, t.Name))
		}
		for _, t := range mw.Tasks {
			if t.AddedBy != "" { // added at run time (dynamic.go)
				jids = append(jids, weir.TaskJobID(id, t.Name), weir.UndoJobID(id, t.Name))
			}
		}
		{
			for _, jid := range jids {
				mj, merr := d.m.GetJob(now, jid)
				sj, serr := d.s.GetJob(d.ctx, jid)
				d.sameErr("get job "+jid, merr, serr)
				if serr == nil {
					sj = d.normJob(sj)
				}
				d.same("job "+jid, mj, sj)
			}
		}
	}
	for _, jid := range d.jobs {
		mj, merr := d.m.GetJob(now, jid)
		sj, serr := d.s.GetJob(d.ctx, jid)
		d.sameErr("get job "+jid, merr, serr)
		if serr == nil {
			sj = d.normJob(sj)
		}
		d.same("job "+jid, mj, sj)
	}
}

func (d *differ) genPlan(id string) engine.Plan {
	n := d.intRange(1, 6, "tasks")
	p := engine.Plan{ID: id, FailFast: d.bool("failfast"), UndoOnCancel: d.bool("undoOnCancel")}
	for i := 0; i < n; i++ {
		ts := engine.TaskSpec{
			Name:        "t" + strconv.Itoa(i),
			Queue:       sampled(d, []string{"q1", "q2"}, "queue"),
			Always:      d.intRange(0, 3, "always") == 0,
			Priority:    d.intRange(-1, 1, "prio"),
			MaxAttempts: d.intRange(0, 3, "attempts"),
			MaxExpiries: sampled(d, []int{0, 0, weir.NoExpiries, 2}, "expiries"),
			Backoff:     time.Duration(sampled(d, []int{0, 10, 300}, "backoff")) * time.Millisecond,
			Key:         sampled(d, []string{"", "A", "B"}, "taskkey"),
		}
		if d.bool("payload") {
			ts.Payload = []byte(sampled(d, []string{"", "p", "\x00\xff"}, "payloadv"))
		}
		for k := 0; k < i; k++ {
			if d.intRange(0, 2, "dep") == 0 {
				ts.After = append(ts.After, "t"+strconv.Itoa(k))
			}
		}
		if ts.After == nil && d.intRange(0, 4, "emptyAfter") == 0 {
			ts.After = []string{}
		}
		if d.intRange(0, 2, "undo") == 0 {
			ts.Undo = &engine.UndoSpec{Queue: sampled(d, []string{"q1", "q3"}, "undoq")}
			if d.bool("undopayload") {
				ts.Undo.Payload = []byte("u")
			}
		}
		d.genSignal(&ts)
		if ts.Always && len(ts.After) > 0 {
			ts.OnFailure = d.intRange(0, 2, "onfailure") == 0
		}
		if ts.Always {
			ts.NoAbsorb = d.intRange(0, 2, "noabsorb") == 0
		}
		p.Tasks = append(p.Tasks, ts)
	}
	d.genStartAt(&p)
	d.genDeadline(&p)
	d.genWebhook(&p)
	return p
}

func (d *differ) queues() []string {
	all := []string{"q1", "q2", "q3", "nope"}
	n := d.intRange(1, 3, "nqueues")
	var qs []string
	for i := 0; i < n; i++ {
		qs = append(qs, sampled(d, all, "q"))
	}
	return qs
}

func (d *differ) claimParams() engine.ClaimParams {
	return engine.ClaimParams{
		Queues: d.queues(), Max: d.intRange(1, 3, "max"),
		Lease: time.Duration(sampled(d, []int{50, 1000}, "lease")) * time.Millisecond,
	}
}

func (d *differ) anyJobID() string {
	var ids []string
	for id, p := range d.plans {
		for _, ts := range p.Tasks {
			ids = append(ids, weir.TaskJobID(id, ts.Name), weir.UndoJobID(id, ts.Name))
		}
		ids = append(ids, d.webhookJobIDs(id)...)
	}
	ids = append(ids, d.jobs...)
	ids = append(ids, "unknown", "w1/zz", "bad id")
	sort.Strings(ids)
	return sampled(d, ids, "job")
}

func (d *differ) doStep() {
	now := d.clock()
	// op 22 came with tape version 8: older tapes never draw it
	switch op := d.intRange(0, 22, "op"); op {
	case 0, 1: // submit
		id := sampled(d, []string{"w1", "w2", "w3"}, "wf")
		p, ok := d.plans[id]
		if !ok || d.intRange(0, 3, "newplan") == 0 {
			p = d.genPlan(id)
		}
		do := func() {
			now := d.clock()
			mr, merr := d.m.Submit(now, engine.SubmitParams{Plan: p})
			sr, serr := d.s.Submit(d.ctx, engine.SubmitParams{Plan: p})
			d.sameErr("submit", merr, serr)
			d.same("submit", mr, sr)
			if merr == nil {
				d.plans[id] = p
			}
		}
		d.last = do
		do()
	case 2: // enqueue
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
	case 3, 4: // claim
		p := d.claimParams()
		mc, merr := d.m.Claim(now, p)
		sc, serr := d.s.Claim(d.ctx, p)
		d.sameErr("claim", merr, serr)
		d.same("claim", mc, d.mapClaims(mc, sc))
	case 5, 6, 7: // finish
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
	case 8: // repeat a past finish
		if len(d.finishes) == 0 {
			return
		}
		f := d.finishes[d.intRange(0, len(d.finishes)-1, "past")]
		d.finish(f.m, f.s)
	case 9: // heartbeat
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
	case 10, 11: // time passes
		d.clk.Advance(time.Millisecond * time.Duration(sampled(d, []int{0, 5, 30, 200, 1500}, "advance")))
	case 12: // expire
		p := engine.ExpireParams{Max: d.intRange(0, 2, "max")}
		mr, merr := d.m.ExpireLeases(now, p)
		sr, serr := d.s.ExpireLeases(d.ctx, p)
		d.sameErr("expire", merr, serr)
		mr.Expired, sr.Expired = NormSettled(mr.Expired), NormSettled(sr.Expired)
		d.same("expire", mr, sr)
	case 13: // cancel workflow or job
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
	case 14: // pause, resume, purge, limit, rate, per-key limit
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
	case 15: // list, following cursors
		p := weir.ListParams{Limit: d.intRange(1, 2, "limit")}
		if d.bool("filter") {
			p.State = sampled(d, []weir.WorkflowState{weir.WorkflowRunning, weir.WorkflowCompleted,
				weir.WorkflowFailed, weir.WorkflowCompensated, weir.WorkflowCancelled}, "state")
		}
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
	case 16: // repeat the last submit, enqueue, cancel, queue, signal or rerun operation, as if its reply was lost
		if d.last != nil {
			d.last()
		}
	case 17: // list the jobs of a queue, following cursors
		d.listJobs()
	case 18: // retry a job
		d.retryJob()
	case 19: // delete a job or workflow
		d.deleteRecord()
	case 20: // report progress, write a checkpoint
		d.progress()
	case 21: // signal a task (signals.go)
		d.signal()
	case 22: // re-run a workflow's failed part (rerun.go)
		d.rerun()
	}
}

func (d *differ) finish(mp, sp engine.FinishParams) {
	d.t.Helper()
	now := d.clock()
	mr, merr := d.m.Finish(now, mp)
	sr, serr := d.s.Finish(d.ctx, sp)
	d.sameErr("finish", merr, serr)
	sr.Claimed = d.mapClaims(mr.Claimed, sr.Claimed)
	mr.Settled, sr.Settled = NormSettled(mr.Settled), NormSettled(sr.Settled)
	d.same("finish", mr, sr)
	if merr == nil {
		mp.Claim, sp.Claim = nil, nil
		if len(mp.Outcomes) > 0 {
			d.finishes = append(d.finishes, finishCall{mp, sp})
		}
		d.rerunEnded(mr.Settled)
	}
}
