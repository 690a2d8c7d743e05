package redisstore

import (
	"errors"
	"github.com/weirflow/weir"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/testclock"
)

// TestFullServer holds the list of spec/scripts.md (A full server) to
// what a redis-server above its maxmemory does, on both call paths: the
// calls that take new work (submit, enqueue, a retry, a re-run, a
// schedule's put and fire) and a progress report are refused with
// ErrStoreFull and change nothing; the calls that hand out, keep, end or
// remove stored work (claim, heartbeat, finish with its promotions and the
// drains of its cascade, lease expiry, cancels, signal, purge, pause,
// limits, deletes, a schedule's delete and pause) and the reads go
// through. docs/reliability.md (Out of memory) says the same to users.
func TestFullServer(t *testing.T) {
	rdb := privateRedis(t)
	for _, path := range []struct {
		name string
		path CallPath
	}{{"functions", PathFunctions}, {"scripts", PathScripts}} {
		t.Run(path.name, func(t *testing.T) { testFullServer(t, rdb, path.path, "full-"+path.name) })
	}
}

func testFullServer(t *testing.T, rdb *redis.Client, path CallPath, ns string) {
	clk := testclock.New()
	s, err := New(rdb, Options{Namespace: ns, Config: engine.DefaultConfig(), Clock: clk.Now, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("step budget", s.SetStepBudget(bg, 2)) // the root's finish below leaves its cascade to drains
	claim := func(queue string) engine.Claimed {
		t.Helper()
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{queue}, Max: 1, Lease: time.Hour})
		if err != nil || len(c) != 1 {
			t.Fatalf("claim %s: %v, %d jobs", queue, err, len(c))
		}
		return c[0]
	}
	finish := func(c engine.Claimed, kind engine.OutcomeKind) {
		t.Helper()
		_, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: kind, Error: "boom", NonRetryable: true}}})
		must("finish "+c.Job.ID, err)
	}
	enqueue := func(id, queue string) {
		t.Helper()
		_, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: queue}})
		must("enqueue "+id, err)
	}
	submit := func(p engine.Plan) {
		t.Helper()
		_, err := s.Submit(bg, engine.SubmitParams{Plan: p})
		must("submit "+p.ID, err)
	}
	task := func(name, queue string, after ...string) engine.TaskSpec {
		return engine.TaskSpec{Name: name, Queue: queue, After: after}
	}
	putSchedule := func(name string) engine.Schedule {
		t.Helper()
		spec := engine.ScheduleSpec{Name: name, Every: time.Minute, Job: &engine.JobSpec{Queue: "sched"}}
		next, err := engine.FirstTick(spec, clk.Now())
		must("first tick", err)
		_, err = s.PutSchedule(bg, engine.PutScheduleParams{Spec: spec, Next: next})
		must("put schedule "+name, err)
		sc, err := s.GetSchedule(bg, name)
		must("get schedule "+name, err)
		return sc
	}

	// Before the server is full: one job of each kind the calls below need.
	// Ended: a failed plain job (to retry), a failed workflow (to re-run),
	// a completed job and workflow (to delete).
	enqueue("failed-job", "done")
	finish(claim("done"), engine.OutcomeFailed)
	enqueue("done-job", "done")
	finish(claim("done"), engine.OutcomeCompleted)
	submit(engine.Plan{ID: "failed-wf", Tasks: []engine.TaskSpec{task("a", "done")}})
	finish(claim("done"), engine.OutcomeFailed)
	submit(engine.Plan{ID: "done-wf", Tasks: []engine.TaskSpec{task("a", "done")}})
	finish(claim("done"), engine.OutcomeCompleted)
	// Live: a running job (progress, heartbeat, finish), a queued one (to
	// claim), one to cancel, one whose lease lapses, a workflow whose root
	// runs and has 5 dependents, one to cancel, one with an open signal
	// task, and a queue to purge.
	enqueue("running-job", "q")
	running := claim("q")
	enqueue("queued-job", "q")
	enqueue("cancel-job", "c")
	enqueue("lapse-job", "lapse")
	if _, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"lapse"}, Max: 1, Lease: time.Second}); err != nil {
		t.Fatal(err)
	}
	fan := engine.Plan{ID: "fan", Tasks: []engine.TaskSpec{task("root", "w")}}
	for _, n := range []string{"d1", "d2", "d3", "d4", "d5"} {
		fan.Tasks = append(fan.Tasks, task(n, "w2", "root"))
	}
	submit(fan)
	root := claim("w")
	submit(engine.Plan{ID: "cancel-wf", Tasks: []engine.TaskSpec{task("a", "c"), task("b", "c", "a")}})
	submit(engine.Plan{ID: "signal-wf", Tasks: []engine.TaskSpec{{Name: "approve", Queue: "sig", Signal: true}}})
	enqueue("purge-1", "purge")
	enqueue("purge-2", "purge")
	fire := putSchedule("fire-me")
	putSchedule("pause-me")
	putSchedule("delete-me")

	// Full: maxmemory 1 byte (noeviction, the default policy) puts the
	// server over its limit for every call below.
	must("maxmemory", rdb.ConfigSet(bg, "maxmemory", "1").Err())
	t.Cleanup(func() { rdb.ConfigSet(bg, "maxmemory", "0") })

	refused := func(call string, err error) {
		t.Helper()
		if !errors.Is(err, weir.ErrStoreFull) {
			t.Errorf("%s on a full server: %v, want ErrStoreFull", call, err)
		}
	}
	// New work is refused, with nothing written.
	_, err = s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "new-wf", Tasks: []engine.TaskSpec{task("a", "q")}}})
	refused("submit", err)
	_, err = s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "new-job", Queue: "q"}})
	refused("enqueue", err)
	batch, err := s.EnqueueBatch(bg, []engine.EnqueueParams{{Job: engine.JobSpec{ID: "new-b1", Queue: "q"}}, {Job: engine.JobSpec{ID: "new-b2", Queue: "q"}}})
	if err == nil {
		for _, r := range batch {
			err = errors.Join(err, r.Err)
		}
	}
	refused("enqueue batch", err)
	// A retry and a re-run, whose first write is a deletion, are refused
	// on the scripts path too (call.lua deny_full).
	_, err = s.RetryJob(bg, engine.RetryJobParams{ID: "failed-job"})
	refused("retry job", err)
	_, err = s.RerunWorkflow(bg, engine.RerunWorkflowParams{ID: "failed-wf"})
	refused("rerun workflow", err)
	err = s.Progress(bg, engine.ProgressParams{JobID: running.Job.ID, Token: running.Lease.Token, Report: &weir.Progress{Percent: 50}})
	refused("progress", err)
	_, err = s.PutSchedule(bg, engine.PutScheduleParams{Spec: engine.ScheduleSpec{Name: "new-sched", Every: time.Minute, Job: &engine.JobSpec{Queue: "sched"}}, Next: clk.Now().Add(time.Minute)})
	refused("put schedule", err)
	clk.Set(fire.Next)
	fp, _, err := engine.PlanFire(fire, fire.Next)
	must("plan fire", err)
	_, err = s.FireSchedule(bg, fp)
	refused("fire schedule", err)
	for _, id := range []string{"new-job", "new-b1", "new-b2", fp.Job.ID} {
		if _, err := s.GetJob(bg, id); !errors.Is(err, weir.ErrNotFound) {
			t.Errorf("refused job %s: GetJob %v, want ErrNotFound", id, err)
		}
	}
	if _, err := s.GetWorkflow(bg, "new-wf"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("refused workflow: GetWorkflow %v, want ErrNotFound", err)
	}
	if j, err := s.GetJob(bg, "failed-job"); err != nil || j.State != weir.Failed {
		t.Errorf("refused retry: %s %v", j.State, err)
	}
	if w, err := s.GetWorkflow(bg, "failed-wf"); err != nil || w.State != weir.WorkflowFailed || w.Run > 1 {
		t.Errorf("refused rerun: %s run %d %v", w.State, w.Run, err)
	}
	if j, err := s.GetJob(bg, running.Job.ID); err != nil || j.Progress != nil {
		t.Errorf("refused progress: %+v %v", j.Progress, err)
	}
	if sc, err := s.GetSchedule(bg, "fire-me"); err != nil || !sc.Next.Equal(fire.Next) {
		t.Errorf("refused fire: next %v (was %v) %v", sc.Next, fire.Next, err)
	}
	if _, err := s.GetSchedule(bg, "new-sched"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("refused schedule: GetSchedule %v, want ErrNotFound", err)
	}

	// Stored work is handed out, kept, ended and removed.
	if c := claim("q"); c.Job.ID != "queued-job" {
		t.Errorf("claim on a full server got %s", c.Job.ID)
	}
	hb, err := s.Heartbeat(bg, engine.HeartbeatParams{Leases: []engine.LeaseRef{{JobID: running.Job.ID, Token: running.Lease.Token}}, Extend: time.Minute})
	if err != nil || len(hb) != 1 || hb[0].Lost {
		t.Errorf("heartbeat on a full server: %+v %v", hb, err)
	}
	finish(running, engine.OutcomeCompleted)
	// The root's finish adds a task (a finish's additions go through with
	// it) and promotes 6 tasks, over drains at a budget of 2.
	_, err = s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: root.Job.ID, Token: root.Lease.Token, Kind: engine.OutcomeCompleted,
		Add: []engine.TaskSpec{task("added", "w2", "root")}}}})
	must("finish adding a task on a full server", err)
	if w, err := s.GetWorkflow(bg, "fan"); err != nil {
		t.Error(err)
	} else {
		if len(w.Tasks) != 7 {
			t.Errorf("fan has %d tasks after its root's finish added one, want 7", len(w.Tasks))
		}
		for _, tk := range w.Tasks[1:] {
			if tk.State != weir.Queued {
				t.Errorf("fan's %s is %s after its root's finish on a full server, want queued", tk.Name, tk.State)
			}
		}
	}
	clk.Advance(10 * time.Minute) // lapse-job's lease (1s) lapses, the others' (1h) hold
	if r, err := s.ExpireLeases(bg, engine.ExpireParams{}); err != nil || len(r.Expired) == 0 {
		t.Errorf("lease sweep on a full server: %+v %v", r, err)
	}
	_, err = s.CancelJob(bg, engine.CancelJobParams{ID: "cancel-job"})
	must("cancel job on a full server", err)
	_, err = s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "cancel-wf"})
	must("cancel workflow on a full server", err)
	_, err = s.Signal(bg, engine.SignalParams{Workflow: "signal-wf", Task: "approve", Kind: engine.OutcomeCompleted, Value: []byte("yes")})
	must("signal on a full server", err)
	if pr, err := s.PurgeQueue(bg, "purge"); err != nil || len(pr.Purged) != 2 {
		t.Errorf("purge on a full server: %+v %v", pr, err)
	}
	must("pause on a full server", s.PauseQueue(bg, "q"))
	must("resume on a full server", s.ResumeQueue(bg, "q"))
	must("limit on a full server", s.LimitQueue(bg, engine.LimitQueueParams{Queue: "q", Concurrency: 3}))
	must("rate limit on a full server", s.RateLimitQueue(bg, engine.RateLimitQueueParams{Queue: "q", Limit: 5, Period: time.Second}))
	must("key limit on a full server", s.LimitKeys(bg, engine.LimitKeysParams{Queue: "q", Concurrency: 2}))
	must("delete job on a full server", s.DeleteJob(bg, "done-job"))
	must("delete workflow on a full server", s.DeleteWorkflow(bg, "done-wf"))
	must("pause schedule on a full server", s.PauseSchedule(bg, "pause-me"))
	must("resume schedule on a full server", s.ResumeSchedule(bg, "pause-me"))
	must("delete schedule on a full server", s.DeleteSchedule(bg, "delete-me"))
	// Reads.
	_, err = s.ListWorkflows(bg, weir.ListParams{})
	must("list workflows on a full server", err)
	_, err = s.Queues(bg)
	must("queues on a full server", err)
	_, err = s.Schedules(bg)
	must("schedules on a full server", err)
	_, err = s.Events(bg, engine.EventsParams{})
	must("events on a full server", err)

	// What the calls did is there.
	for id, want := range map[string]weir.State{"running-job": weir.Completed, "cancel-job": weir.Cancelled, "lapse-job": weir.Queued, "purge-1": weir.Cancelled} {
		if j, err := s.GetJob(bg, id); err != nil || j.State != want {
			t.Errorf("%s is %s (%v), want %s", id, j.State, err, want)
		}
	}
	for id, want := range map[string]weir.WorkflowState{"cancel-wf": weir.WorkflowCancelled, "signal-wf": weir.WorkflowCompleted} {
		if w, err := s.GetWorkflow(bg, id); err != nil || w.State != want {
			t.Errorf("%s is %s (%v), want %s", id, w.State, err, want)
		}
	}
	if _, err := s.GetJob(bg, "done-job"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("deleted job: %v", err)
	}
	if _, err := s.GetWorkflow(bg, "done-wf"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("deleted workflow: %v", err)
	}
	if _, err := s.GetSchedule(bg, "delete-me"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("deleted schedule: %v", err)
	}
}
