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

// differ drives the model (engine.Namespace) and a redisstore.Store with the same calls and the
// same clock, and compares every reply and the state after every step.
type differ struct {
	t     tb
	ctx   context.Context
	m     engine.Namespace
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
	action   string // the name of the step's action (actions)
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
	d.t.Fatalf("step %d (%s): "+format, append([]any{d.step, d.action}, args...)...)
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
		Lease:    time.Duration(sampled(d, []int{50, 1000}, "lease")) * time.Millisecond,
		WorkerID: sampled(d, []string{"", "w1", "w-2.host"}, "worker"),
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
