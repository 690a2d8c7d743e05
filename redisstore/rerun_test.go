package redisstore

import (
	"errors"
	"github.com/weirflow/weir"
	"reflect"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// TestRerunInBoundedCalls: the re-run of a cancelled fan-out whose root
// completed resets the 1,000 dependents and pushes them, in plan order, in
// ten calls of 100 pushes (the re-run's own and nine drains), as the model
// does; the root keeps its result, and no cascade is left behind.
func TestRerunInBoundedCalls(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	m := engine.NewModel(engine.DefaultConfig())
	if err := e.store.SetStepBudget(bg, 100); err != nil {
		t.Fatal(err)
	}
	plan := fanOut("fan", 1000, false)
	if _, err := m.Submit(e.clock(), engine.SubmitParams{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	c := claimRoot(t, e, plan)
	mc, err := m.Claim(e.clock(), engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
	if err != nil || len(mc) != 1 {
		t.Fatalf("model claim: %v %v", err, mc)
	}
	done := func(tok string) engine.FinishParams {
		return engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: tok, Kind: engine.OutcomeCompleted, Result: []byte("r")}}}
	}
	if _, err := e.store.Finish(bg, done(c.Lease.Token)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Finish(e.clock(), done(mc[0].Lease.Token)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "fan"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.CancelWorkflow(e.clock(), engine.CancelWorkflowParams{ID: "fan"}); err != nil {
		t.Fatal(err)
	}
	e.advance(time.Second)
	before := e.store.drainCalls.Load()
	res, err := e.store.RerunWorkflow(bg, engine.RerunWorkflowParams{ID: "fan"})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.store.drainCalls.Load() - before; n != 9 {
		t.Errorf("%d drain calls for 1,000 pushes at 100 a call, want 9", n)
	}
	mres, err := m.RerunWorkflow(e.clock(), engine.RerunWorkflowParams{ID: "fan"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, mres) {
		t.Fatalf("rerun differs:\nstore %+v\nmodel %+v", res, mres)
	}
	if res.Run != 2 || len(res.Reset) != 1000 || len(res.Pushed) != 1000 || res.Pushed[999].JobID != "fan/d00999" {
		t.Fatalf("run %d, %d reset, %d pushed", res.Run, len(res.Reset), len(res.Pushed))
	}
	sw, err := e.store.GetWorkflow(bg, "fan")
	if err != nil {
		t.Fatal(err)
	}
	mw, _ := m.GetWorkflow(e.clock(), "fan")
	if !reflect.DeepEqual(sw, mw) {
		t.Fatalf("workflow differs:\nstore %+v\nmodel %+v", sw, mw)
	}
	if sw.Tasks[0].State != weir.Completed || string(sw.Tasks[0].Result) != "r" {
		t.Errorf("root %s %q", sw.Tasks[0].State, sw.Tasks[0].Result)
	}
	if n, _ := e.rdb.Exists(bg, e.store.keys.prefix+"work").Result(); n != 0 {
		t.Error("P work left behind")
	}
}

// TestRerunRefusals: NOTRERUNNABLE carries the workflow's state and run,
// and changes nothing; an ID no workflow can have is NOTFOUND without a
// call.
func TestRerunRefusals(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}}); err != nil {
		t.Fatal(err)
	}
	res, err := e.store.RerunWorkflow(bg, engine.RerunWorkflowParams{ID: "w"})
	if !errors.Is(err, weir.ErrNotRerunnable) || res.WorkflowState != weir.WorkflowRunning || res.Run != 1 {
		t.Fatalf("running: %+v %v", res, err)
	}
	for _, id := range []string{"nope", "bad id", ""} {
		if _, err := e.store.RerunWorkflow(bg, engine.RerunWorkflowParams{ID: id}); !errors.Is(err, weir.ErrNotFound) {
			t.Errorf("%q: %v", id, err)
		}
	}
	// a workflow written before re-runs (no push marks) is refused
	if _, err := e.store.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "w"}); err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.HDel(bg, e.store.keys.workflow("w"), "rk").Err(); err != nil {
		t.Fatal(err)
	}
	res, err = e.store.RerunWorkflow(bg, engine.RerunWorkflowParams{ID: "w"})
	if !errors.Is(err, weir.ErrNotRerunnable) || res.WorkflowState != weir.WorkflowCancelled {
		t.Fatalf("old record: %+v %v", res, err)
	}
	w, err := e.store.GetWorkflow(bg, "w")
	if err != nil || w.State != weir.WorkflowCancelled || w.Run != 1 {
		t.Fatalf("after the refusals: %v %v", w.State, err)
	}
}

// TestRerunKeepsTheRecord: with the server's clock, the end of a workflow
// gives its keys a removal time and takes an expiry entry; a re-run takes
// both away (the record lives until its next end), and that end gives them
// back.
func TestRerunKeepsTheRecord(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	ns := e.ns + "-srv"
	s, err := New(e.rdb, Options{Namespace: ns, Config: engine.Config{Retention: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	redistest.CleanupNamespace(t, e.rdb, ns)
	plan := engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	fail := func(kind engine.OutcomeKind) {
		t.Helper()
		c := claimOne(t, s, "q")
		if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: kind}}}); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{s.keys.workflow("w"), s.keys.workflow("w") + ":s", s.keys.workflow("w") + ":i"}
	ttls := func() (out []time.Duration) {
		for _, k := range keys {
			ttl, err := e.rdb.PTTL(bg, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ttl)
		}
		return out
	}
	fail(engine.OutcomeFailed)
	for i, ttl := range ttls() {
		if ttl <= 0 {
			t.Fatalf("%s: TTL %v after the end", keys[i], ttl)
		}
	}
	if n, _ := e.rdb.ZCard(bg, s.keys.expiry).Result(); n != 1 {
		t.Fatalf("%d expiry entries after the end", n)
	}
	if _, err := s.RerunWorkflow(bg, engine.RerunWorkflowParams{ID: "w"}); err != nil {
		t.Fatal(err)
	}
	for i, ttl := range ttls() {
		if ttl != -1 {
			t.Fatalf("%s: TTL %v after the re-run", keys[i], ttl)
		}
	}
	if n, _ := e.rdb.ZCard(bg, s.keys.expiry).Result(); n != 0 {
		t.Fatalf("%d expiry entries after the re-run", n)
	}
	fail(engine.OutcomeCompleted)
	for i, ttl := range ttls() {
		if ttl <= 0 {
			t.Fatalf("%s: TTL %v after the second end", keys[i], ttl)
		}
	}
	w, err := s.GetWorkflow(bg, "w")
	if err != nil || w.State != weir.WorkflowCompleted || w.Run != 2 {
		t.Fatalf("%v %v", w.State, err)
	}
}
