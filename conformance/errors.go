package conformance

import (
	"bytes"
	"context"
	"errors"
	"github.com/weirflow/weir"
	"time"

	"github.com/weirflow/weir/engine"
)

// smallConfig has limits small enough to cross in a test.
func smallConfig() engine.Config {
	cfg := engine.DefaultConfig()
	cfg.Limits.MaxTasks = 4
	cfg.Limits.MaxEdges = 3
	cfg.Limits.MaxPayload = 16
	cfg.Limits.MaxResult = 8
	cfg.Limits.MaxBatch = 3
	cfg.Limits.MaxAttempts = 5
	cfg.Limits.MaxLease = time.Minute
	cfg.Limits.MaxBackoff = time.Minute
	return cfg
}

// newPair is a fresh store and model on one clock, compared by a differ
// reporting to t.
func newPair(t suiteT, mk maker, cfg engine.Config) *differ {
	clk := newClock()
	s := mk.store(t, cfg, clk.Now)
	t.Cleanup(func() { closeStore(s) })
	d := &differ{
		t: t, ctx: context.Background(), m: mk.model(cfg), s: s, clk: clk, toks: map[string]string{},
		plans: map[string]engine.Plan{}, specs: map[string]engine.JobSpec{},
	}
	d.qi, _ = s.(QueueInspector)
	return d
}

// call runs one operation on the model and on the store, wants the same
// sentinel (want, unless want is nil and any error is fine) and the same
// reply, then compares the whole state.
func (d *differ) call(op string, want error, m func(now time.Time) (any, error), s func() (any, error)) {
	d.t.Helper()
	mr, merr := m(d.clock())
	sr, serr := s()
	if want != nil && Sentinel(merr) != want {
		d.fatalf("%s: the model says %v, the suite expected %v (the suite is out of date)", op, merr, want)
	}
	if want != nil && Sentinel(serr) != want {
		d.fatalf("%s: store error %v, want %v", op, serr, want)
	}
	d.sameErr(op, merr, serr)
	if merr == nil {
		d.same(op, mr, sr)
	}
	d.check()
}

func (d *differ) submit(op string, want error, p engine.Plan) {
	d.t.Helper()
	if _, ok := d.plans[p.ID]; !ok {
		d.plans[p.ID] = p // checked too, to see that nothing was written
		defer func() {
			if _, err := d.m.GetWorkflow(d.clock(), p.ID); err != nil {
				delete(d.plans, p.ID)
			}
		}()
	}
	d.call(op, want, func(now time.Time) (any, error) { return d.m.Submit(now, engine.SubmitParams{Plan: p}) },
		func() (any, error) { return d.s.Submit(d.ctx, engine.SubmitParams{Plan: p}) })
}

func (d *differ) enqueue(op string, want error, js engine.JobSpec) {
	d.t.Helper()
	d.jobs = append(d.jobs, js.ID)
	d.call(op, want, func(now time.Time) (any, error) { return d.m.Enqueue(now, engine.EnqueueParams{Job: js}) },
		func() (any, error) { return d.s.Enqueue(d.ctx, engine.EnqueueParams{Job: js}) })
}

func (d *differ) claim(p engine.ClaimParams) []engine.Claimed {
	d.t.Helper()
	mc, merr := d.m.Claim(d.clock(), p)
	sc, serr := d.s.Claim(d.ctx, p)
	d.sameErr("claim", merr, serr)
	sc = d.mapClaims(mc, sc)
	d.same("claim", mc, sc)
	d.check()
	return sc
}

// storeToken is the store's token for a model token.
func (d *differ) storeToken(mtok string) string {
	for _, l := range d.leases {
		if l.mtok == mtok {
			return l.stok
		}
	}
	return mtok
}

func (d *differ) finishOne(o engine.Outcome) engine.Settled {
	d.t.Helper()
	so := o
	so.Token = d.storeToken(o.Token)
	mp := engine.FinishParams{Outcomes: []engine.Outcome{o}}
	sp := engine.FinishParams{Outcomes: []engine.Outcome{so}}
	mr, merr := d.m.Finish(d.clock(), mp)
	sr, serr := d.s.Finish(d.ctx, sp)
	d.sameErr("finish", merr, serr)
	if serr != nil {
		d.fatalf("finish: %v", serr)
	}
	mr.Settled, sr.Settled = NormSettled(mr.Settled), NormSettled(sr.Settled)
	d.same("finish", mr, sr)
	d.check()
	return sr.Settled[0]
}

func runErrors(t suiteT, mk maker) {
	q := "q"
	task := func(name string, after ...string) engine.TaskSpec {
		return engine.TaskSpec{Name: name, Queue: q, After: after}
	}
	big := bytes.Repeat([]byte("x"), 17)

	t.Run("BadInputsWriteNothing", func(t suiteT) {
		t.Parallel()
		d := newPair(t, mk, smallConfig())
		// Some state first, so that "nothing written" means something.
		d.submit("submit", nil, engine.Plan{ID: "ok", Tasks: []engine.TaskSpec{task("a"), task("b", "a")}})
		d.enqueue("enqueue", nil, engine.JobSpec{ID: "j", Queue: q})
		d.claim(engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Second})

		plans := []struct {
			name string
			want error
			p    engine.Plan
		}{
			{"bad workflow id", weir.ErrInvalid, engine.Plan{ID: "bad id", Tasks: []engine.TaskSpec{task("a")}}},
			{"empty workflow id", weir.ErrInvalid, engine.Plan{ID: "", Tasks: []engine.TaskSpec{task("a")}}},
			{"no tasks", weir.ErrInvalid, engine.Plan{ID: "w1"}},
			{"too many tasks", weir.ErrTooLarge, engine.Plan{ID: "w2", Tasks: []engine.TaskSpec{task("a"), task("b"), task("c"), task("d"), task("e")}}},
			{"bad task name", weir.ErrInvalid, engine.Plan{ID: "w3", Tasks: []engine.TaskSpec{task("a b")}}},
			{"duplicate task", weir.ErrInvalid, engine.Plan{ID: "w4", Tasks: []engine.TaskSpec{task("a"), task("a")}}},
			{"self dependency", weir.ErrInvalid, engine.Plan{ID: "w5", Tasks: []engine.TaskSpec{task("a", "a")}}},
			{"forward dependency", weir.ErrInvalid, engine.Plan{ID: "w6", Tasks: []engine.TaskSpec{task("a", "b"), task("b")}}},
			{"unknown dependency", weir.ErrInvalid, engine.Plan{ID: "w7", Tasks: []engine.TaskSpec{task("a"), task("b", "zz")}}},
			{"dependency twice", weir.ErrInvalid, engine.Plan{ID: "w8", Tasks: []engine.TaskSpec{task("a"), task("b", "a", "a")}}},
			{"too many edges", weir.ErrTooLarge, engine.Plan{ID: "w9", Tasks: []engine.TaskSpec{task("a"), task("b", "a"), task("c", "a", "b"), task("d", "a")}}},
			{"bad queue", weir.ErrInvalid, engine.Plan{ID: "w10", Tasks: []engine.TaskSpec{{Name: "a", Queue: ""}}}},
			{"payload too large", weir.ErrTooLarge, engine.Plan{ID: "w11", Tasks: []engine.TaskSpec{{Name: "a", Queue: q, Payload: big}}}},
			{"priority", weir.ErrInvalid, engine.Plan{ID: "w12", Tasks: []engine.TaskSpec{{Name: "a", Queue: q, Priority: weir.MaxPriority + 1}}}},
			{"attempts", weir.ErrInvalid, engine.Plan{ID: "w13", Tasks: []engine.TaskSpec{{Name: "a", Queue: q, MaxAttempts: 6}}}},
			{"expiries", weir.ErrInvalid, engine.Plan{ID: "w18", Tasks: []engine.TaskSpec{{Name: "a", Queue: q, MaxExpiries: -2}}}},
			{"backoff", weir.ErrInvalid, engine.Plan{ID: "w14", Tasks: []engine.TaskSpec{{Name: "a", Queue: q, Backoff: time.Microsecond}}}},
			{"timeout", weir.ErrInvalid, engine.Plan{ID: "w15", Tasks: []engine.TaskSpec{{Name: "a", Queue: q, Timeout: -time.Millisecond}}}},
			{"undo queue", weir.ErrInvalid, engine.Plan{ID: "w16", Tasks: []engine.TaskSpec{{Name: "a", Queue: q, Undo: &engine.UndoSpec{Queue: "!"}}}}},
			{"undo payload", weir.ErrTooLarge, engine.Plan{ID: "w17", Tasks: []engine.TaskSpec{{Name: "a", Queue: q, Undo: &engine.UndoSpec{Queue: q, Payload: big}}}}},
			{"other plan under an ID", weir.ErrWorkflowExists, engine.Plan{ID: "ok", Tasks: []engine.TaskSpec{task("a")}}},
		}
		for _, c := range plans {
			d.submit("submit "+c.name, c.want, c.p)
		}
		jobs := []struct {
			name string
			want error
			js   engine.JobSpec
		}{
			{"bad job id", weir.ErrInvalid, engine.JobSpec{ID: "a/b", Queue: q}},
			{"bad job queue", weir.ErrInvalid, engine.JobSpec{ID: "j1", Queue: "a b"}},
			{"job payload", weir.ErrTooLarge, engine.JobSpec{ID: "j2", Queue: q, Payload: big}},
			{"job priority", weir.ErrInvalid, engine.JobSpec{ID: "j3", Queue: q, Priority: weir.MinPriority - 1}},
			{"job attempts", weir.ErrInvalid, engine.JobSpec{ID: "j4", Queue: q, MaxAttempts: -1}},
			{"job expiries", weir.ErrInvalid, engine.JobSpec{ID: "j5", Queue: q, MaxExpiries: 6}},
			{"other spec under an ID", weir.ErrJobExists, engine.JobSpec{ID: "j", Queue: "other"}},
		}
		for _, c := range jobs {
			d.enqueue("enqueue "+c.name, c.want, c.js)
		}
		claims := []struct {
			name string
			want error
			p    engine.ClaimParams
		}{
			{"no queues", weir.ErrInvalid, engine.ClaimParams{Max: 1, Lease: time.Second}},
			{"bad queue", weir.ErrInvalid, engine.ClaimParams{Queues: []string{""}, Max: 1, Lease: time.Second}},
			{"max 0", weir.ErrInvalid, engine.ClaimParams{Queues: []string{q}, Max: 0, Lease: time.Second}},
			{"max over batch", weir.ErrInvalid, engine.ClaimParams{Queues: []string{q}, Max: 4, Lease: time.Second}},
			{"lease 0", weir.ErrInvalid, engine.ClaimParams{Queues: []string{q}, Max: 1}},
			{"lease too long", weir.ErrInvalid, engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Hour}},
		}
		for _, c := range claims {
			p := c.p
			d.call("claim "+c.name, c.want, func(now time.Time) (any, error) { return d.m.Claim(now, p) },
				func() (any, error) { return d.s.Claim(d.ctx, p) })
		}
		finishes := []struct {
			name string
			want error
			p    engine.FinishParams
		}{
			{"nothing", weir.ErrInvalid, engine.FinishParams{}},
			{"too many outcomes", weir.ErrTooLarge, engine.FinishParams{Outcomes: make([]engine.Outcome, 4)}},
			{"bad kind", weir.ErrInvalid, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "ok/a", Token: "t", Kind: "done"}}}},
			{"result too large", weir.ErrTooLarge, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "ok/a", Token: "t", Kind: engine.OutcomeCompleted, Result: big}}}},
			{"retry after", weir.ErrInvalid, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "ok/a", Token: "t", Kind: engine.OutcomeFailed, RetryAfter: time.Hour}}}},
			{"bad claim", weir.ErrInvalid, engine.FinishParams{Claim: &engine.ClaimParams{Queues: []string{q}, Max: 9, Lease: time.Second}}},
		}
		for _, c := range finishes {
			p := c.p
			d.call("finish "+c.name, c.want, func(now time.Time) (any, error) { return d.m.Finish(now, p) },
				func() (any, error) { return d.s.Finish(d.ctx, p) })
		}
		for _, qn := range []string{"", "a b"} {
			d.call("pause "+qn, weir.ErrInvalid, func(now time.Time) (any, error) { return nil, d.m.PauseQueue(now, qn) },
				func() (any, error) { return nil, d.s.PauseQueue(d.ctx, qn) })
			d.call("resume "+qn, weir.ErrInvalid, func(now time.Time) (any, error) { return nil, d.m.ResumeQueue(now, qn) },
				func() (any, error) { return nil, d.s.ResumeQueue(d.ctx, qn) })
			d.call("purge "+qn, weir.ErrInvalid, func(now time.Time) (any, error) { return d.m.PurgeQueue(now, qn) },
				func() (any, error) { return d.s.PurgeQueue(d.ctx, qn) })
		}
		for _, p := range []weir.ListParams{{Limit: -1}, {Limit: 1001}, {State: "nope"}, {Cursor: "garbage"}} {
			d.call("list", weir.ErrInvalid, func(now time.Time) (any, error) { return d.m.ListWorkflows(now, p) },
				func() (any, error) { return d.s.ListWorkflows(d.ctx, p) })
		}
	})

	t.Run("UnknownIDs", func(t suiteT) {
		t.Parallel()
		d := newPair(t, mk, smallConfig())
		d.submit("submit", nil, engine.Plan{ID: "w", Tasks: []engine.TaskSpec{task("a")}})
		for _, id := range []string{"nope", "w/zz", "w/a/undo", "w"} {
			d.call("get workflow "+id, pick(id == "w", nil, weir.ErrNotFound), func(now time.Time) (any, error) { return d.m.GetWorkflow(now, id) },
				func() (any, error) { return d.s.GetWorkflow(d.ctx, id) })
			d.call("get job "+id, weir.ErrNotFound, func(now time.Time) (any, error) { return d.m.GetJob(now, id) },
				func() (any, error) { return d.s.GetJob(d.ctx, id) })
			d.call("cancel job "+id, weir.ErrNotFound, func(now time.Time) (any, error) { return d.m.CancelJob(now, engine.CancelJobParams{ID: id}) },
				func() (any, error) { return d.s.CancelJob(d.ctx, engine.CancelJobParams{ID: id}) })
		}
		d.call("cancel workflow", weir.ErrNotFound, func(now time.Time) (any, error) {
			return d.m.CancelWorkflow(now, engine.CancelWorkflowParams{ID: "nope"})
		}, func() (any, error) { return d.s.CancelWorkflow(d.ctx, engine.CancelWorkflowParams{ID: "nope"}) })
		// An unknown job in a finish is a lost lease, not an error of the call.
		st := d.finishOne(engine.Outcome{JobID: "nope", Token: "t", Kind: engine.OutcomeCompleted})
		if !errors.Is(st.Err, weir.ErrLeaseLost) {
			d.fatalf("finish of an unknown job: Settled.Err %v, want ErrLeaseLost", st.Err)
		}
	})

	t.Run("StaleLease", func(t suiteT) {
		t.Parallel()
		d := newPair(t, mk, smallConfig())
		d.enqueue("enqueue", nil, engine.JobSpec{ID: "j", Queue: q, MaxAttempts: 3})
		first := d.claim(engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Second})
		if len(first) != 1 {
			d.fatalf("claimed %d jobs, want 1", len(first))
		}
		d.clk.Advance(2 * time.Second)
		d.call("expire", nil, func(now time.Time) (any, error) {
			r, err := d.m.ExpireLeases(now, engine.ExpireParams{})
			r.Expired = NormSettled(r.Expired)
			return r, err
		}, func() (any, error) {
			r, err := d.s.ExpireLeases(d.ctx, engine.ExpireParams{})
			r.Expired = NormSettled(r.Expired)
			return r, err
		})
		d.clk.Advance(time.Minute) // past the retry backoff
		d.call("expire", nil, func(now time.Time) (any, error) { return d.m.ExpireLeases(now, engine.ExpireParams{}) },
			func() (any, error) { return d.s.ExpireLeases(d.ctx, engine.ExpireParams{}) })
		second := d.claim(engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Second})
		if len(second) != 1 {
			d.fatalf("claimed %d jobs after the expiry, want 1", len(second))
		}
		st := d.finishOne(engine.Outcome{JobID: "j", Token: first[0].Lease.Token, Kind: engine.OutcomeCompleted})
		if !errors.Is(st.Err, weir.ErrLeaseLost) {
			d.fatalf("finish with a stale token: Settled.Err %v, want ErrLeaseLost", st.Err)
		}
		st = d.finishOne(engine.Outcome{JobID: "j", Token: second[0].Lease.Token, Kind: engine.OutcomeCompleted})
		if st.Err != nil || st.State != weir.Completed {
			d.fatalf("finish with the live token: %+v", st)
		}
	})

	t.Run("EndedWorkflowAndJob", func(t suiteT) {
		t.Parallel()
		d := newPair(t, mk, smallConfig())
		d.submit("submit", nil, engine.Plan{ID: "w", Tasks: []engine.TaskSpec{task("a")}})
		c := d.claim(engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Second})
		if len(c) != 1 {
			d.fatalf("claimed %d jobs, want 1", len(c))
		}
		if st := d.finishOne(engine.Outcome{JobID: "w/a", Token: c[0].Lease.Token, Kind: engine.OutcomeCompleted}); !st.WorkflowEnded {
			d.fatalf("the only task completed but the workflow did not end: %+v", st)
		}
		d.call("cancel ended workflow", weir.ErrWorkflowEnded, func(now time.Time) (any, error) {
			return d.m.CancelWorkflow(now, engine.CancelWorkflowParams{ID: "w"})
		}, func() (any, error) { return d.s.CancelWorkflow(d.ctx, engine.CancelWorkflowParams{ID: "w"}) })
		d.call("cancel ended job", weir.ErrJobEnded, func(now time.Time) (any, error) {
			return d.m.CancelJob(now, engine.CancelJobParams{ID: "w/a"})
		}, func() (any, error) { return d.s.CancelJob(d.ctx, engine.CancelJobParams{ID: "w/a"}) })
	})
}

func pick(c bool, a, b error) error {
	if c {
		return a
	}
	return b
}
