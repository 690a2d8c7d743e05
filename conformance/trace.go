package conformance

import (
	"github.com/weirflow/weir"
	"time"

	"github.com/weirflow/weir/engine"
)

// Traceparents of the trace cases: a workflow's and a plain job's.
const (
	traceW = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceJ = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

// runTrace checks that the trace context of a submit or an enqueue comes
// back with every claim of the workflow's jobs (tasks, retries, promoted
// dependents, undo jobs) or of the job, that a job without one gets none,
// that a repeat with another one changes nothing, and that a malformed one
// is refused with nothing written.
func runTrace(t suiteT, mk maker) {
	d := newPair(t, mk, engine.DefaultConfig())
	q, u := "q", "u"
	// with partitions, the plain jobs share the workflow's: the claims
	// below expect FIFO order
	tj, nj := d.colocated("tj", "tw"), d.colocated("nj", "tw")
	plan := engine.Plan{ID: "tw", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: q, MaxAttempts: 2, Backoff: time.Millisecond, Undo: &engine.UndoSpec{Queue: u}},
		{Name: "b", Queue: q, After: []string{"a"}},
	}}
	submit := func(op string, want error, tp string) {
		d.plans[plan.ID] = plan
		d.call(op, want, func(now time.Time) (any, error) {
			return d.m.Submit(now, engine.SubmitParams{Plan: plan, TraceParent: tp})
		}, func() (any, error) { return d.s.Submit(d.ctx, engine.SubmitParams{Plan: plan, TraceParent: tp}) })
	}
	enqueue := func(op string, want error, js engine.JobSpec, tp string) {
		d.jobs = append(d.jobs, js.ID)
		d.call(op, want, func(now time.Time) (any, error) {
			return d.m.Enqueue(now, engine.EnqueueParams{Job: js, TraceParent: tp})
		}, func() (any, error) { return d.s.Enqueue(d.ctx, engine.EnqueueParams{Job: js, TraceParent: tp}) })
	}
	claimOne := func(queue, id, tp string) engine.Claimed {
		t.Helper()
		got := d.claim(engine.ClaimParams{Queues: []string{queue}, Max: 1, Lease: time.Minute})
		if len(got) != 1 || got[0].Job.ID != id {
			d.fatalf("claim from %s: got %d jobs, want %s", queue, len(got), id)
		}
		if got[0].TraceParent != tp {
			d.fatalf("claim of %s: traceparent %q, want %q", id, got[0].TraceParent, tp)
		}
		return got[0]
	}
	finish := func(c engine.Claimed, kind engine.OutcomeKind) {
		d.finishOne(engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: kind, Error: "boom"})
	}

	for _, bad := range []string{"00-x", traceW + "0", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"} {
		enqueue("enqueue with traceparent "+bad, weir.ErrInvalid, engine.JobSpec{ID: d.colocated("bad", "tw"), Queue: q}, bad)
		submit("submit with traceparent "+bad, weir.ErrInvalid, bad)
	}
	delete(d.plans, plan.ID)

	submit("submit traced", nil, traceW)
	// a repeat with another trace context is the same plan: no effect
	submit("submit again", nil, traceJ)
	enqueue("enqueue traced", nil, engine.JobSpec{ID: tj, Queue: q}, traceJ)
	enqueue("enqueue again", nil, engine.JobSpec{ID: tj, Queue: q}, traceW)
	enqueue("enqueue untraced", nil, engine.JobSpec{ID: nj, Queue: q}, "")

	a := claimOne(q, "tw/a", traceW)
	claimOne(q, tj, traceJ)
	claimOne(q, nj, "")
	finish(a, engine.OutcomeFailed) // retried after its backoff
	d.clk.Advance(time.Second)
	a = claimOne(q, "tw/a", traceW)
	finish(a, engine.OutcomeCompleted)
	b := claimOne(q, "tw/b", traceW) // promoted
	finish(b, engine.OutcomeFailed)  // its only attempt: the workflow compensates
	claimOne(u, "tw/a/undo", traceW)
}
