package redisstore

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
)

// TestFastTaskRunWritesTheSame holds the claim's run of one workflow's
// tasks (fast_task.lua's FF.lease_run: the tasks a claim took in a row
// read and leased together) to the general code: the same replies and
// keyspace with the fast paths on and off (writesTheSame), for runs with
// payloads and a trace context, a claim whose IDs hold the runs of two
// workflows, a run cut by a claim's size, a run holding a task released
// back to its queue (its second attempt), a run of a workflow cancelled
// while its tasks were ready (none of them leased), the joins of
// several workflows claimed together, and a fan-in's roots finished in
// one call whose last promotes the join to the call's claim.
func TestFastTaskRunWritesTheSame(t *testing.T) { writesTheSame(t, fastTaskRunCases) }

func fastTaskRunCases(t *testing.T, s *Store, clk *testclock.Clock) []string {
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
	// finish ends cs as kind (result: the job's ID) and claims max from qs
	finish := func(cs []engine.Claimed, kind engine.OutcomeKind, max int, qs ...string) []engine.Claimed {
		t.Helper()
		var outs []engine.Outcome
		for _, c := range cs {
			o := engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: kind}
			if kind == engine.OutcomeCompleted {
				o.Result = []byte(c.Job.ID)
			}
			outs = append(outs, o)
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
	// fanin is n roots joined by a last task, in queue q, with payloads
	fanin := func(id, q string, n int) engine.Plan {
		p := engine.Plan{ID: id}
		join := engine.TaskSpec{Name: "j", Queue: q, Payload: []byte(id + "-j")}
		for i := range n {
			name := "r" + strconv.Itoa(i)
			p.Tasks = append(p.Tasks, engine.TaskSpec{Name: name, Queue: q, Payload: []byte(id + "-" + name)})
			join.After = append(join.After, name)
		}
		p.Tasks = append(p.Tasks, join)
		return p
	}

	// two fan-ins in one queue, one with a trace context: claims of 4 cut
	// the first's run, then take the end of one run and the start of the
	// other; the joins claimed together
	submit(fanin("fa", "qz", 6), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	submit(fanin("fb", "qz", 3), "")
	cs := claim(4, "qz")
	cs = append(cs, claim(4, "qz")...)
	cs = finish(cs, engine.OutcomeCompleted, 4, "qz")
	for len(cs) > 0 {
		cs = finish(cs, engine.OutcomeCompleted, 4, "qz")
	}

	// a run holding a released task (queued again, its second attempt):
	// 3 of 5 roots claimed, one released, then the rest with it
	submit(fanin("fc", "qr", 5), "")
	cs = claim(3, "qr")
	finish(cs[1:2], engine.OutcomeReleased, 0)
	cs = append(cs[:1], cs[2:]...)
	cs = append(cs, claim(5, "qr")...)
	for len(cs) > 0 {
		cs = finish(cs, engine.OutcomeCompleted, 5, "qr")
	}

	// a workflow cancelled while its roots were ready: the run's first
	// task is not queued (the general code drops them all), then another
	// workflow's run in the same claim
	submit(fanin("fd", "qd", 3), "")
	submit(fanin("fe", "qd", 2), "")
	if _, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "fd"}); err != nil {
		t.Fatal(err)
	}
	cs = claim(10, "qd")
	for len(cs) > 0 {
		cs = finish(cs, engine.OutcomeCompleted, 10, "qd")
	}

	// a fan-in's roots finished together, the last promoting the join
	// (fast_finish.lua's FF.countdown): as the call's last outcome, the
	// join alone in the claim's queue (handed over to the claim); and
	// followed by a plain job's outcome, the join alone in its queue (the
	// workflow's fields handed to the claim, FF.flush)
	submit(fanin("fh", "qh", 3), "")
	cs = finish(claim(3, "qh"), engine.OutcomeCompleted, 1, "qh")
	finish(cs, engine.OutcomeCompleted, 0)
	submit(fanin("fg", "qg", 3), "")
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "pg", Queue: "qp"}}); err != nil {
		t.Fatal(err)
	}
	cs = claim(3, "qg")
	cs = append(cs, claim(1, "qp")...)
	cs = finish(cs, engine.OutcomeCompleted, 1, "qg")
	finish(cs, engine.OutcomeCompleted, 0)
	return log
}

// TestFanInRootsClaimedInOneRead: a claim of a fan-in's 10 roots (one run
// of one workflow's tasks, fast_task.lua's FF.lease_run) reads their
// indexes, fields, state bytes and payloads once for all of them and
// writes their leases in one HSET of the workflow's hash, where each root
// took an HGET of its index, an HMGET, a GETRANGE, an HGET of its payload
// and an HSET; what it hands out is the same. On a redis-server of the
// test's own.
func TestFanInRootsClaimedInOneRead(t *testing.T) {
	e := newPrivateEnv(t, engine.DefaultConfig())
	s := e.store
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: cpuPlan("f", 11, true)}); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.ConfigResetStat(bg).Err(); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"qf"}, Max: 10, Lease: time.Minute})
	if err != nil || len(cs) != 10 {
		t.Fatalf("claim: %d %v", len(cs), err)
	}
	for i, c := range cs {
		if c.Job.ID != "f/t"+strconv.Itoa(i) || c.Job.Attempt != 1 || len(c.Deps) != 0 {
			t.Fatalf("claimed %d: %+v", i, c)
		}
	}
	st := redistest.CommandStats(t, e.rdb)
	if n, _ := st.Sum("hget"); n != 0 {
		t.Errorf("%d HGET, want 0 (the roots' indexes and payloads in an HMGET each)", n)
	}
	if n, _ := st.Sum("getrange"); n != 1 {
		t.Errorf("%d GETRANGE, want 1 (the roots' state bytes at once)", n)
	}
	// the seq hash's, the queue state's, the name index's, the
	// workflow's, the payloads'
	if n, _ := st.Sum("hmget", "hgetall"); n != 5 {
		t.Errorf("%d HMGET and HGETALL, want 5 (the seq hash's, the queue state's, and the name index's, the workflow's and the payloads' for all the roots)", n)
	}
	// the workflow's, the queue state's, the seq hash's
	if n, _ := st.Sum("hset"); n != 3 {
		t.Errorf("%d HSET, want 3 (the workflow's for all the roots, the queue state's, the seq hash's)", n)
	}
	var outs []engine.Outcome
	for _, c := range cs {
		outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
	}
	fr, err := s.Finish(bg, engine.FinishParams{Outcomes: outs, Claim: &engine.ClaimParams{Queues: []string{"qf"}, Max: 10, Lease: time.Minute}})
	if err != nil || len(fr.Settled) != 10 || len(fr.Claimed) != 1 || fr.Claimed[0].Job.ID != "f/t10" || len(fr.Claimed[0].Deps) != 10 {
		t.Fatalf("finish + the join's claim: %+v %v", fr, err)
	}
}
