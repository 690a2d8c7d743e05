package redisstore

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
)

// TestFastTaskClaimWritesTheSame holds the claim's fast path for tasks and
// the chain hand-off (fast_task.lua) to the general code: the same replies
// and the same keyspace with the fast paths on and off (writesTheSame), for
// tasks claimed from a ready set that holds other workflows' tasks (with
// payloads, a trace context, several a claim), hand-offs whose task has a
// dependency the finish did not end, a hand-off refused (the claim's first
// queue another; a job ready before it), a hand-off to a claim of more than
// one, and a task with a checkpoint.
func TestFastTaskClaimWritesTheSame(t *testing.T) { writesTheSame(t, fastTaskCases) }

func fastTaskCases(t *testing.T, s *Store, clk *testclock.Clock) []string {
	t.Helper()
	var log []string
	note := func(text string) { log = append(log, maskTimes(hexNonce.ReplaceAllString(text, "<nonce>"))) }
	submit := func(p engine.Plan, tp string) {
		t.Helper()
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: p, TraceParent: tp}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(max int, qs ...string) []engine.Claimed {
		t.Helper()
		c, err := s.Claim(bg, engine.ClaimParams{Queues: qs, Max: max, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		note("claim " + claimedText(c) + claimedMore(c))
		return c
	}
	// finish completes cs (result: the job's ID) and claims max from qs
	finish := func(cs []engine.Claimed, max int, qs ...string) []engine.Claimed {
		t.Helper()
		var outs []engine.Outcome
		for _, c := range cs {
			outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte(c.Job.ID)})
		}
		p := engine.FinishParams{Outcomes: outs}
		if max > 0 {
			p.Claim = &engine.ClaimParams{Queues: qs, Max: max, Lease: time.Minute}
		}
		r, err := s.Finish(bg, p)
		if err != nil {
			t.Fatal(err)
		}
		text := ""
		for _, st := range r.Settled {
			text += fmt.Sprintf("%s %v %s %v %s; ", st.JobID, st.Err, st.State, st.Pushed, st.WorkflowState)
		}
		note("finish " + text + claimedText(r.Claimed) + claimedMore(r.Claimed))
		return r.Claimed
	}
	chain := func(id, q string, n int) engine.Plan {
		p := engine.Plan{ID: id}
		for i := range n {
			ts := engine.TaskSpec{Name: "t" + strconv.Itoa(i), Queue: q, Payload: []byte(id + "-" + strconv.Itoa(i))}
			if i > 0 {
				ts.After = []string{"t" + strconv.Itoa(i-1)}
			}
			p.Tasks = append(p.Tasks, ts)
		}
		return p
	}

	// three chains in one queue, one with a trace context: each finish
	// claims another chain's task from the ready set
	submit(chain("ca", "qm", 6), "")
	submit(chain("cb", "qm", 6), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	submit(chain("cc", "qm", 6), "")
	cs := claim(1, "qm")
	for len(cs) > 0 {
		cs = finish(cs, 1, "qm")
	}
	// the same, claimed and finished three at a time
	for _, id := range []string{"da", "db", "dc"} {
		submit(chain(id, "qn", 4), "")
	}
	cs = claim(3, "qn")
	for len(cs) > 0 {
		cs = finish(cs, 3, "qn")
	}

	// a hand-off whose task has another dependency, ended earlier: x, a -> d
	submit(engine.Plan{ID: "j", Tasks: []engine.TaskSpec{
		{Name: "x", Queue: "qx"},
		{Name: "a", Queue: "qj"},
		{Name: "d", Queue: "qj", After: []string{"x", "a"}, Payload: []byte("dp")},
	}}, "")
	finish(claim(1, "qx"), 0)
	cs = finish(claim(1, "qj"), 1, "qj")
	finish(cs, 0)

	// no hand-off: the claim's first queue is another, with a job ready
	submit(chain("h", "qh", 3), "")
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "other", Queue: "qo"}}); err != nil {
		t.Fatal(err)
	}
	cs = claim(1, "qh")
	cs = finish(cs, 1, "qo", "qh")
	cs = append(cs, claim(1, "qh")...)
	finish(cs, 1, "qh", "qo")
	// no hand-off: a job of a higher priority was ready first
	submit(chain("hp", "qp", 2), "")
	cs = claim(1, "qp")
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "first", Queue: "qp", Priority: -5}}); err != nil {
		t.Fatal(err)
	}
	cs = finish(cs, 1, "qp")
	cs = append(cs, claim(1, "qp")...)
	finish(cs, 0)

	// a hand-off to a claim of 3 (the queue then found empty)
	submit(chain("m", "qk", 4), "")
	cs = claim(3, "qk")
	for len(cs) > 0 {
		cs = finish(cs, 3, "qk")
	}

	// a task with a checkpoint, released and claimed again (the general
	// code: its checkpoint is in the payload hash)
	submit(chain("k", "qc", 2), "")
	c := claim(1, "qc")[0]
	if err := s.Progress(bg, engine.ProgressParams{JobID: c.Job.ID, Token: c.Lease.Token, Checkpoint: []byte("half")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeReleased}}}); err != nil {
		t.Fatal(err)
	}
	cs = claim(1, "qc")
	for len(cs) > 0 {
		cs = finish(cs, 1, "qc")
	}

	// the chain step on its own path (fast_chain.lua), each chain alone in
	// its queue and stopped after one step, the task it handed over left
	// running (so that the step's state bytes stay in the keyspace): with
	// payloads and a trace context; a dependent whose index is not next to
	// the finished one's; and the finished task in another queue than the
	// claim's (the hand-off of fast_finish.lua instead)
	submit(engine.Plan{ID: "rv", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "qr", Payload: []byte("pa")},
		{Name: "b", Queue: "qr", After: []string{"a"}, Payload: []byte("pb")},
		{Name: "c", Queue: "qr", After: []string{"b"}, Payload: []byte("pc")},
	}}, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	finish(claim(1, "qr"), 1, "qr")
	submit(engine.Plan{ID: "gp", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "qg"},
		{Name: "x", Queue: "qy"},
		{Name: "b", Queue: "qg", After: []string{"a"}},
		{Name: "c", Queue: "qg", After: []string{"b"}},
	}}, "")
	finish(claim(1, "qg"), 1, "qg")
	submit(engine.Plan{ID: "oq", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "qa1"},
		{Name: "b", Queue: "qb1", After: []string{"a"}},
		{Name: "c", Queue: "qb1", After: []string{"b"}},
	}}, "")
	finish(claim(1, "qa1"), 1, "qb1")
	return log
}

// claimedMore is what claimedText leaves out of claimed jobs: payloads,
// checkpoints, trace contexts, ready-at times, specs' queues.
func claimedMore(cs []engine.Claimed) string {
	var text string
	for _, c := range cs {
		text += fmt.Sprintf("[%q %q %q %v %v %s %v] ", c.Job.Payload, c.Checkpoint, c.TraceParent, c.ReadyAt, c.Lease.Deadline, c.Job.Queue, c.Job.CreatedAt)
	}
	return text
}

// TestResentFinishHandsOverTheSameTask: a finish that promotes the next
// task of a chain alone in its queue and claims it (the hand-off,
// fast_task.lua), run twice (its reply lost), settles once and hands out
// the first run's lease again: the second run finds the claim record, or
// it would find the queue empty and orphan the task.
func TestResentFinishHandsOverTheSameTask(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			e := newEnv(t, engine.DefaultConfig())
			s := e.store
			if err := s.SetFastPaths(bg, fast); err != nil {
				t.Fatal(err)
			}
			h := &resendHook{}
			e.rdb.AddHook(h)
			if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{
				{Name: "a", Queue: "q"},
				{Name: "b", Queue: "q", After: []string{"a"}},
			}}}); err != nil {
				t.Fatal(err)
			}
			a := claimOne(t, s, "q")
			h.on.Store(true)
			fr, err := s.Finish(bg, engine.FinishParams{
				Outcomes: []engine.Outcome{{JobID: a.Job.ID, Token: a.Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte("ra")}},
				Claim:    &engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute},
			})
			h.on.Store(false)
			if err != nil {
				t.Fatal(err)
			}
			if len(fr.Settled) != 1 || fr.Settled[0].Err != nil || fr.Settled[0].State != weir.Completed {
				t.Fatalf("settled %+v", fr.Settled)
			}
			if len(fr.Claimed) != 1 || fr.Claimed[0].Job.ID != "w/b" || fr.Claimed[0].Job.Attempt != 1 ||
				len(fr.Claimed[0].Deps) != 1 || string(fr.Claimed[0].Deps[0].Result) != "ra" {
				t.Fatalf("claimed %+v", fr.Claimed)
			}
			b := fr.Claimed[0]
			done, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: b.Job.ID, Token: b.Lease.Token, Kind: engine.OutcomeCompleted}}})
			if err != nil || done.Settled[0].Err != nil || done.Settled[0].WorkflowState != weir.WorkflowCompleted {
				t.Fatalf("finish with the lease handed out again: %+v %v", done, err)
			}
		})
	}
}

// TestChainHandOffReadsNoReadySet: the finish + claim of a chain's step
// whose next task is alone in its queue leases that task without taking it
// through the queue's ready set (no ZADD, ZPOPMIN or ZRANGE of it: Redis
// counts the commands a function runs), and what it hands out is the next
// task. On a redis-server of the test's own.
func TestChainHandOffReadsNoReadySet(t *testing.T) {
	e := newPrivateEnv(t, engine.DefaultConfig())
	s := e.store
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: cpuPlan("c", 3, false)}); err != nil {
		t.Fatal(err)
	}
	c := claimOne(t, s, "qc")
	if err := e.rdb.ConfigResetStat(bg).Err(); err != nil {
		t.Fatal(err)
	}
	fr, err := s.Finish(bg, engine.FinishParams{
		Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}},
		Claim:    &engine.ClaimParams{Queues: []string{"qc"}, Max: 1, Lease: time.Minute},
	})
	if err != nil || len(fr.Claimed) != 1 || fr.Claimed[0].Job.ID != "c/t1" {
		t.Fatalf("finish + claim: %+v %v", fr, err)
	}
	st := redistest.CommandStats(t, e.rdb)
	// a ZRANGE of an ended list follows each ZREMRANGEBYLEX of a trim
	// (LISTS.trim: this step is its queue's first end, so a trim is due)
	pops, _ := st.Sum("zpopmin")
	ranges, _ := st.Sum("zrange")
	trims, _ := st.Sum("zremrangebylex")
	if n := pops + ranges - trims; n != 0 {
		t.Errorf("the step took from a ready set (%d ZPOPMIN or ZRANGE beyond the ended lists' trim): want the promoted task handed to the claim", n)
	}
	// the lease set's and the completed list's
	if n, _ := st.Sum("zadd"); n != 2 {
		t.Errorf("%d ZADD in the step, want 2 (the lease set's and the completed list's, none of the ready set)", n)
	}
	// the chain step's own path (fast_chain.lua): the dependent's open count
	// and the workflow's rem written in the step's HSET
	if n, _ := st.Sum("hincrby"); n != 0 {
		t.Errorf("%d HINCRBY in the step, want 0 (the open count and rem in its one HSET)", n)
	}
	if n, _ := st.Sum("hset"); n != 3 {
		t.Errorf("%d HSET in the step, want 3 (the workflow's, the queue state's, the seq hash's)", n)
	}
}

// TestFanInCountDown: a finish of a fan-in's 10 roots (fast_finish.lua's
// FF.countdown) settles them all, the 10th promoting the join, with one
// HMGET, one HGET and one HSET of the workflow's hash, where each root
// took an HMGET, two HINCRBY and an HSET (FF.task); the join is promoted
// and the workflow completes as before. On a redis-server of the test's
// own.
func TestFanInCountDown(t *testing.T) {
	e := newPrivateEnv(t, engine.DefaultConfig())
	s := e.store
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: cpuPlan("f", 11, true)}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"qf"}, Max: 10, Lease: time.Minute})
	if err != nil || len(cs) != 10 {
		t.Fatalf("claim: %d %v", len(cs), err)
	}
	var outs []engine.Outcome
	for _, c := range cs {
		outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
	}
	if err := e.rdb.ConfigResetStat(bg).Err(); err != nil {
		t.Fatal(err)
	}
	fr, err := s.Finish(bg, engine.FinishParams{Outcomes: outs})
	if err != nil || len(fr.Settled) != 10 {
		t.Fatalf("finish: %+v %v", fr, err)
	}
	for i, st := range fr.Settled {
		if st.Err != nil || st.State != weir.Completed || (i < 9) != (len(st.Pushed) == 0) {
			t.Fatalf("settled %d: %+v", i, st)
		}
	}
	st := redistest.CommandStats(t, e.rdb)
	if n, _ := st.Sum("hincrby"); n != 0 {
		t.Errorf("%d HINCRBY, want 0 (the open count and rem in the count-down's HSET)", n)
	}
	if n, _ := st.Sum("hmget", "hget", "hgetall"); n != 4 {
		t.Errorf("%d HMGET, HGET and HGETALL, want 4 (the seq hash's, the count-down's two, the join's queue state's)", n)
	}

	j, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"qf"}, Max: 1, Lease: time.Minute})
	if err != nil || len(j) != 1 || j[0].Job.ID != "f/t10" || len(j[0].Deps) != 10 {
		t.Fatalf("the join's claim: %+v %v", j, err)
	}
	done, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: j[0].Job.ID, Token: j[0].Lease.Token, Kind: engine.OutcomeCompleted}}})
	if err != nil || done.Settled[0].WorkflowState != weir.WorkflowCompleted {
		t.Fatalf("the join's finish: %+v %v", done, err)
	}
}
