package conformance

import (
	"context"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/weirflow/weir/engine"
)

// sentinel returns the engine sentinel an error matches (nil for nil).
func sentinel(err error) error {
	if e := engine.Sentinel(err); e != nil {
		return e
	}
	return err
}

// differ drives engine.Model and a lua.Store with the same calls and the
// same clock, and compares every reply and the state after every step.
type differ struct {
	t     tb
	ctx   context.Context
	m     *engine.Model
	s     engine.Store
	qi    QueueInspector // nil when the store has none
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
}

// tb is what the differ needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

type leaseSeen struct{ job, mtok, stok string }

type finishCall struct{ m, s engine.FinishParams }

func (d *differ) clock() time.Time { return d.clk.Now() }

func (d *differ) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("step %d: "+format, append([]any{d.step}, args...)...)
}

func (d *differ) sameErr(op string, me, se error) {
	d.t.Helper()
	if sentinel(me) != sentinel(se) {
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

func (d *differ) normJob(j engine.Job) engine.Job {
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

func normSettled(ss []engine.Settled) []engine.Settled {
	if ss == nil {
		return nil
	}
	out := slices.Clone(ss)
	for i := range out {
		out[i].Err = sentinel(out[i].Err)
	}
	return out
}

// check compares the whole observable state.
func (d *differ) check() {
	d.t.Helper()
	now := d.clock()
	mq := d.m.Queues(now)
	sq, err := d.s.Queues(d.ctx)
	if err != nil {
		d.fatalf("queues: %v", err)
	}
	d.same("queues", mq, sq)
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
		for _, t := range d.plans[id].Tasks {
			for _, jid := range []string{engine.TaskJobID(id, t.Name), engine.UndoJobID(id, t.Name)} {
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

func genPlan(t *rapid.T, id string) engine.Plan {
	n := rapid.IntRange(1, 6).Draw(t, "tasks")
	p := engine.Plan{ID: id, FailFast: rapid.Bool().Draw(t, "failfast"), UndoOnCancel: rapid.Bool().Draw(t, "undoOnCancel")}
	for i := 0; i < n; i++ {
		ts := engine.TaskSpec{
			Name:        "t" + strconv.Itoa(i),
			Queue:       rapid.SampledFrom([]string{"q1", "q2"}).Draw(t, "queue"),
			Always:      rapid.IntRange(0, 3).Draw(t, "always") == 0,
			Priority:    rapid.IntRange(-1, 1).Draw(t, "prio"),
			MaxAttempts: rapid.IntRange(0, 3).Draw(t, "attempts"),
			Backoff:     time.Duration(rapid.SampledFrom([]int{0, 10, 300}).Draw(t, "backoff")) * time.Millisecond,
		}
		if rapid.Bool().Draw(t, "payload") {
			ts.Payload = []byte(rapid.SampledFrom([]string{"", "p", "\x00\xff"}).Draw(t, "payloadv"))
		}
		for k := 0; k < i; k++ {
			if rapid.IntRange(0, 2).Draw(t, "dep") == 0 {
				ts.After = append(ts.After, "t"+strconv.Itoa(k))
			}
		}
		if ts.After == nil && rapid.IntRange(0, 4).Draw(t, "emptyAfter") == 0 {
			ts.After = []string{}
		}
		if rapid.IntRange(0, 2).Draw(t, "undo") == 0 {
			ts.Undo = &engine.UndoSpec{Queue: rapid.SampledFrom([]string{"q1", "q3"}).Draw(t, "undoq")}
			if rapid.Bool().Draw(t, "undopayload") {
				ts.Undo.Payload = []byte("u")
			}
		}
		p.Tasks = append(p.Tasks, ts)
	}
	return p
}

func (d *differ) queues(t *rapid.T) []string {
	all := []string{"q1", "q2", "q3", "nope"}
	n := rapid.IntRange(1, 3).Draw(t, "nqueues")
	var qs []string
	for i := 0; i < n; i++ {
		qs = append(qs, rapid.SampledFrom(all).Draw(t, "q"))
	}
	return qs
}

func (d *differ) claimParams(t *rapid.T) engine.ClaimParams {
	return engine.ClaimParams{
		Queues: d.queues(t), Max: rapid.IntRange(1, 3).Draw(t, "max"),
		Lease: time.Duration(rapid.SampledFrom([]int{50, 1000}).Draw(t, "lease")) * time.Millisecond,
	}
}

func (d *differ) anyJobID(t *rapid.T) string {
	var ids []string
	for id, p := range d.plans {
		for _, ts := range p.Tasks {
			ids = append(ids, engine.TaskJobID(id, ts.Name), engine.UndoJobID(id, ts.Name))
		}
	}
	ids = append(ids, d.jobs...)
	ids = append(ids, "unknown", "w1/zz", "bad id")
	sort.Strings(ids)
	return rapid.SampledFrom(ids).Draw(t, "job")
}

func (d *differ) doStep(t *rapid.T) {
	now := d.clock()
	switch op := rapid.IntRange(0, 16).Draw(t, "op"); op {
	case 0, 1: // submit
		id := rapid.SampledFrom([]string{"w1", "w2", "w3"}).Draw(t, "wf")
		p, ok := d.plans[id]
		if !ok || rapid.IntRange(0, 3).Draw(t, "newplan") == 0 {
			p = genPlan(t, id)
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
		id := rapid.SampledFrom([]string{"j1", "j2", "j3"}).Draw(t, "jobid")
		js, ok := d.specs[id]
		if !ok || rapid.IntRange(0, 3).Draw(t, "newspec") == 0 {
			js = engine.JobSpec{
				ID: id, Queue: rapid.SampledFrom([]string{"q1", "q2"}).Draw(t, "queue"),
				Priority:    rapid.IntRange(-1, 1).Draw(t, "prio"),
				MaxAttempts: rapid.IntRange(0, 3).Draw(t, "attempts"),
			}
			if rapid.Bool().Draw(t, "payload") {
				js.Payload = []byte("x")
			}
		}
		if rapid.Bool().Draw(t, "delayed") {
			js.RunAt = now.Add(time.Duration(rapid.IntRange(-100, 1000).Draw(t, "runat")) * time.Millisecond)
		} else {
			js.RunAt = time.Time{}
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
		p := d.claimParams(t)
		mc, merr := d.m.Claim(now, p)
		sc, serr := d.s.Claim(d.ctx, p)
		d.sameErr("claim", merr, serr)
		d.same("claim", mc, d.mapClaims(mc, sc))
	case 5, 6, 7: // finish
		if len(d.leases) == 0 {
			return
		}
		n := rapid.IntRange(0, 3).Draw(t, "noutcomes")
		var mp, sp engine.FinishParams
		for i := 0; i < n; i++ {
			// mostly the latest leases
			k := len(d.leases) - 1 - rapid.IntRange(0, min(len(d.leases)-1, 4)).Draw(t, "lease")
			l := d.leases[k]
			o := engine.Outcome{
				JobID: l.job,
				Kind: rapid.SampledFrom([]engine.OutcomeKind{engine.OutcomeCompleted, engine.OutcomeCompleted,
					engine.OutcomeFailed, engine.OutcomeFailed, engine.OutcomeCancelled, engine.OutcomeReleased}).Draw(t, "kind"),
				NonRetryable: rapid.IntRange(0, 3).Draw(t, "nonretry") == 0,
				Error:        rapid.SampledFrom([]string{"", "boom"}).Draw(t, "err"),
			}
			if rapid.Bool().Draw(t, "result") {
				o.Result = []byte(rapid.SampledFrom([]string{"", "r1"}).Draw(t, "resultv"))
			}
			switch rapid.IntRange(0, 5).Draw(t, "retryafter") {
			case 0:
				o.RetryAfter = 20 * time.Millisecond
			case 1:
				o.RetryAfter = 1500 * time.Microsecond
			}
			mo, so := o, o
			mo.Token, so.Token = l.mtok, l.stok
			mp.Outcomes = append(mp.Outcomes, mo)
			sp.Outcomes = append(sp.Outcomes, so)
		}
		if n == 0 || rapid.Bool().Draw(t, "andclaim") {
			c := d.claimParams(t)
			mp.Claim, sp.Claim = &c, &c
		}
		d.finish(mp, sp)
	case 8: // repeat a past finish
		if len(d.finishes) == 0 {
			return
		}
		f := d.finishes[rapid.IntRange(0, len(d.finishes)-1).Draw(t, "past")]
		d.finish(f.m, f.s)
	case 9: // heartbeat
		if len(d.leases) == 0 {
			return
		}
		var mp, sp engine.HeartbeatParams
		mp.Extend = time.Duration(rapid.SampledFrom([]int{10, 500}).Draw(t, "extend")) * time.Millisecond
		sp.Extend = mp.Extend
		for i := rapid.IntRange(1, 3).Draw(t, "nleases"); i > 0; i-- {
			l := d.leases[rapid.IntRange(0, len(d.leases)-1).Draw(t, "lease")]
			mp.Leases = append(mp.Leases, engine.LeaseRef{JobID: l.job, Token: l.mtok})
			sp.Leases = append(sp.Leases, engine.LeaseRef{JobID: l.job, Token: l.stok})
		}
		mr, merr := d.m.Heartbeat(now, mp)
		sr, serr := d.s.Heartbeat(d.ctx, sp)
		d.sameErr("heartbeat", merr, serr)
		d.same("heartbeat", mr, sr)
	case 10, 11: // time passes
		d.clk.Advance(time.Millisecond * time.Duration(rapid.SampledFrom([]int{0, 5, 30, 200, 1500}).Draw(t, "advance")))
	case 12: // expire
		p := engine.ExpireParams{Max: rapid.IntRange(0, 2).Draw(t, "max")}
		mr, merr := d.m.ExpireLeases(now, p)
		sr, serr := d.s.ExpireLeases(d.ctx, p)
		d.sameErr("expire", merr, serr)
		mr.Expired, sr.Expired = normSettled(mr.Expired), normSettled(sr.Expired)
		d.same("expire", mr, sr)
	case 13: // cancel workflow or job
		if rapid.Bool().Draw(t, "wfcancel") {
			p := engine.CancelWorkflowParams{ID: rapid.SampledFrom([]string{"w1", "w2", "w3", "b/d"}).Draw(t, "wf")}
			switch rapid.IntRange(0, 2).Draw(t, "undo") {
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
		} else {
			p := engine.CancelJobParams{ID: d.anyJobID(t)}
			d.last = func() {
				now := d.clock()
				mr, merr := d.m.CancelJob(now, p)
				sr, serr := d.s.CancelJob(d.ctx, p)
				d.sameErr("cancel job "+p.ID, merr, serr)
				d.same("cancel job "+p.ID, mr, sr)
			}
			d.last()
		}
	case 14: // pause, resume, purge
		q := rapid.SampledFrom([]string{"q1", "q2", "q3"}).Draw(t, "queue")
		qop := rapid.IntRange(0, 2).Draw(t, "qop")
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
			}
		}
		d.last()
	case 15: // list, following cursors
		p := engine.ListParams{Limit: rapid.IntRange(1, 2).Draw(t, "limit")}
		if rapid.Bool().Draw(t, "filter") {
			p.State = rapid.SampledFrom([]engine.WorkflowState{engine.WorkflowRunning, engine.WorkflowCompleted,
				engine.WorkflowFailed, engine.WorkflowCompensated, engine.WorkflowCancelled}).Draw(t, "state")
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
	case 16: // repeat the last submit, enqueue, cancel or queue operation, as if its reply was lost
		if d.last != nil {
			d.last()
		}
	}
}

func (d *differ) finish(mp, sp engine.FinishParams) {
	d.t.Helper()
	now := d.clock()
	mr, merr := d.m.Finish(now, mp)
	sr, serr := d.s.Finish(d.ctx, sp)
	d.sameErr("finish", merr, serr)
	sr.Claimed = d.mapClaims(mr.Claimed, sr.Claimed)
	mr.Settled, sr.Settled = normSettled(mr.Settled), normSettled(sr.Settled)
	d.same("finish", mr, sr)
	if merr == nil {
		mp.Claim, sp.Claim = nil, nil
		if len(mp.Outcomes) > 0 {
			d.finishes = append(d.finishes, finishCall{mp, sp})
		}
	}
}

// batches is how many subtests share the random sequences; they run in
// parallel. The count is rounded up to a multiple of -rapid.checks.
const batches = 4

// runSequences drives n random operation sequences, each on a fresh store
// and a fresh model sharing one clock, in parallel batches. rapid.Check
// runs -rapid.checks sequences per call (100 unless set), so each batch
// calls it until its share is done; each call first replays the fail files
// kept in testdata/rapid/<test name>/ (the regression cases of past
// failures).
func runSequences(t *testing.T, newStore NewStore, n int) {
	if n == 0 {
		t.Skip(SequencesEnv + "=0")
	}
	per := 100
	if f := flagInt("rapid.checks"); f > 0 {
		per = f
	}
	var done atomic.Int64
	start := time.Now()
	t.Run("batches", func(t *testing.T) {
		calls := (n + per - 1) / per // rapid.Check calls in all
		nb := min(batches, calls)
		for b := range nb {
			share := calls / nb // this batch's calls
			if b < calls%nb {
				share++
			}
			t.Run(strconv.Itoa(b), func(t *testing.T) {
				t.Parallel()
				prop := func(rt *rapid.T) {
					done.Add(1)
					runSequence(rt, t, newStore)
				}
				for i := 0; i < share && !t.Failed(); i++ {
					rapid.Check(t, prop)
				}
			})
		}
	})
	el := time.Since(start)
	t.Logf("%d sequences (counting fail-file replays and shrinking) in %v: %.1f sequences/s",
		done.Load(), el.Round(time.Millisecond), float64(done.Load())/math.Max(el.Seconds(), 1e-9))
}

// runSequence is one random sequence: a fresh store and model, 10 to 80
// random steps, the whole state compared after each.
func runSequence(rt *rapid.T, t *testing.T, newStore NewStore) {
	cfg := engine.DefaultConfig()
	cfg.Limits.MaxBackoff = 700 * time.Millisecond
	cfg.Retention = time.Duration(rapid.SampledFrom([]int{0, 800, 7 * 24 * 3600 * 1000}).Draw(rt, "retention")) * time.Millisecond
	clk := newClock()
	s := newStore(t, cfg, clk.Now)
	defer closeStore(s)
	d := &differ{
		t: rt, ctx: context.Background(), m: engine.NewModel(cfg), s: s, clk: clk, toks: map[string]string{},
		plans: map[string]engine.Plan{}, specs: map[string]engine.JobSpec{},
	}
	d.qi, _ = s.(QueueInspector)
	steps := rapid.IntRange(10, 80).Draw(rt, "steps")
	for d.step = 0; d.step < steps; d.step++ {
		d.doStep(rt)
		d.check()
	}
}
