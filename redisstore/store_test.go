package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

var bg = context.Background()

func claimOne(t *testing.T, s *Store, queue string) engine.Claimed {
	t.Helper()
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{queue}, Max: 1, Lease: time.Minute})
	if err != nil || len(c) != 1 {
		t.Fatalf("claim %s: %v, %d jobs", queue, err, len(c))
	}
	return c[0]
}

func TestErrorsAreSentinels(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	plan := engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	other := plan
	other.Tasks = []engine.TaskSpec{{Name: "b", Queue: "q"}}
	_, err := s.Submit(bg, engine.SubmitParams{Plan: other})
	check := func(name string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: got %v, want %v", name, err, want)
		}
	}
	check("other plan", err, weir.ErrWorkflowExists)
	_, err = s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j", Queue: "q"}})
	check("enqueue", err, nil)
	_, err = s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j", Queue: "q2"}})
	check("other spec", err, weir.ErrJobExists)
	_, err = s.GetWorkflow(bg, "nope")
	check("get workflow", err, weir.ErrNotFound)
	_, err = s.GetJob(bg, "w/zz")
	check("get job", err, weir.ErrNotFound)
	_, err = s.GetJob(bg, "bad id")
	check("get bad job", err, weir.ErrNotFound)
	_, err = s.CancelJob(bg, engine.CancelJobParams{ID: "nope"})
	check("cancel job", err, weir.ErrNotFound)
	c := claimOne(t, s, "q")
	f, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{
		{JobID: c.Job.ID, Token: "stale", Kind: engine.OutcomeCompleted},
		{JobID: "no/such/job", Token: "x", Kind: engine.OutcomeCompleted},
		{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted},
	}})
	check("finish", err, nil)
	check("stale token", f.Settled[0].Err, weir.ErrLeaseLost)
	check("bad job ID", f.Settled[1].Err, weir.ErrLeaseLost)
	check("good finish", f.Settled[2].Err, nil)
	if f.Settled[2].WorkflowState != weir.WorkflowCompleted || !f.Settled[2].WorkflowEnded {
		t.Errorf("settled %+v", f.Settled[2])
	}
	r, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "w"})
	check("cancel ended", err, weir.ErrWorkflowEnded)
	if r.WorkflowState != weir.WorkflowCompleted {
		t.Errorf("cancel ended workflow: state %q", r.WorkflowState)
	}
	cr, err := s.CancelJob(bg, engine.CancelJobParams{ID: "w/a"})
	check("cancel ended job", err, weir.ErrJobEnded)
	if cr.State != weir.Completed {
		t.Errorf("cancel ended job: state %q", cr.State)
	}
	_, err = s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 0, Lease: time.Minute})
	check("claim max 0", err, weir.ErrInvalid)
	_, err = s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "j", Kind: engine.OutcomeCompleted, Result: make([]byte, 1<<20)}}})
	check("result too large", err, weir.ErrTooLarge)
	_, err = s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "bad{id}", Tasks: plan.Tasks}})
	check("bad workflow ID", err, weir.ErrInvalid)
	if err := s.PauseQueue(bg, "a:b"); !errors.Is(err, weir.ErrInvalid) {
		t.Errorf("pause with a bad name: %v", err)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err = s.GetWorkflow(ctx, "w")
	check("cancelled context", err, context.Canceled)
}

// fakeRedisErr is a server error reply, as go-redis returns them.
type fakeRedisErr string

func (e fakeRedisErr) Error() string { return string(e) }
func (fakeRedisErr) RedisError()     {}

func TestMapErr(t *testing.T) {
	for _, c := range []struct {
		in   error
		want error
	}{
		{fakeRedisErr("OOM command not allowed when used memory > 'maxmemory'. script: x"), weir.ErrStoreFull},
		{fakeRedisErr("BUSY Redis is busy running a script."), weir.ErrUnavailable},
		{fakeRedisErr("READONLY You can't write against a read only replica."), weir.ErrUnavailable},
		{fakeRedisErr("LOADING Redis is loading the dataset in memory"), weir.ErrUnavailable},
		{fakeRedisErr("NOTFOUND workflow \"x\""), weir.ErrNotFound},
		{fakeRedisErr("LEASELOST x"), weir.ErrLeaseLost},
		{fakeRedisErr("ERR user_script:1: attempt to index a nil value"), weir.ErrProtocol},
		{redis.ErrClosed, weir.ErrUnavailable},
		{fmt.Errorf("dial tcp: %w", errors.New("connection refused")), weir.ErrUnavailable},
	} {
		got := mapErr(c.in)
		if !errors.Is(got, c.want) {
			t.Errorf("mapErr(%v) = %v, want %v", c.in, got, c.want)
		}
		if errors.Is(c.want, weir.ErrStoreFull) || errors.Is(c.want, weir.ErrUnavailable) {
			if !errors.Is(got, c.in) {
				t.Errorf("mapErr(%v) lost the original error", c.in)
			}
		}
	}
	for _, e := range weir.Errors {
		if got := mapErr(fakeRedisErr(e.Code + " detail")); !errors.Is(got, e) {
			t.Errorf("code %s maps to %v", e.Code, got)
		}
	}
}

// TestOOM: a full server refuses the write with ErrStoreFull and keeps
// nothing of it.
func TestOOM(t *testing.T) {
	e := newPrivateEnv(t, engine.DefaultConfig())
	old, err := e.rdb.ConfigGet(bg, "maxmemory").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.ConfigSet(bg, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	_, err = e.store.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j", Queue: "q"}})
	e.rdb.ConfigSet(bg, "maxmemory", old["maxmemory"])
	if !errors.Is(err, weir.ErrStoreFull) {
		t.Fatalf("enqueue on a full server: %v", err)
	}
	if _, err := e.store.GetJob(bg, "j"); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("the refused job exists: %v", err)
	}
}

// TestLostReply: a finish run twice (its first reply lost) promotes once
// and answers the same.
func TestLostReply(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	_, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "q"},
		{Name: "b", Queue: "q", After: []string{"a"}},
		{Name: "c", Queue: "q", After: []string{"a", "b"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	c := claimOne(t, s, "q")
	p := engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte("r")}}}
	first, err := s.Finish(bg, p)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Finish(bg, p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("repeat differs:\n%+v\n%+v", first, second)
	}
	if len(first.Settled[0].Pushed) != 1 || first.Settled[0].Pushed[0].JobID != "w/b" {
		t.Fatalf("first finish pushed %+v", first.Settled[0].Pushed)
	}
	qs, _ := s.Queues(bg)
	if qs[0].Ready != 1 {
		t.Fatalf("queue after a repeated finish: %+v", qs)
	}
	// b completes; c (after a and b) must be pushed exactly once, by b.
	cb := claimOne(t, s, "q")
	pb := engine.FinishParams{Outcomes: []engine.Outcome{{JobID: cb.Job.ID, Token: cb.Lease.Token, Kind: engine.OutcomeCompleted}}}
	fb, _ := s.Finish(bg, pb)
	if _, err := s.Finish(bg, p); err != nil {
		t.Fatal(err)
	}
	fb2, _ := s.Finish(bg, pb)
	if !reflect.DeepEqual(fb, fb2) || len(fb.Settled[0].Pushed) != 1 {
		t.Fatalf("finish of b: %+v then %+v", fb, fb2)
	}
	cc := claimOne(t, s, "q")
	if cc.Job.ID != "w/c" || len(cc.Deps) != 2 || string(cc.Deps[0].Result) != "r" {
		t.Fatalf("claimed %+v", cc)
	}
	if more, _ := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 5, Lease: time.Minute}); len(more) != 0 {
		t.Fatalf("a second promotion: %+v", more)
	}
}

// TestScriptFlush: flushing the server's scripts and functions mid-run
// (a restart, a failover to a server that never had them) reaches no
// caller, pipelined calls included.
func TestScriptFlush(t *testing.T) {
	e := newOwnEnv(t, engine.DefaultConfig())
	s := e.store
	flush := func() {
		if err := e.rdb.ScriptFlush(bg).Err(); err != nil {
			t.Fatal(err)
		}
		if e.mini == nil {
			if err := e.rdb.FunctionFlush(bg).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 20 {
		if i%5 == 2 {
			flush()
		}
		id := "j" + strconv.Itoa(i)
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatalf("enqueue after flush: %v", err)
		}
		c := claimOne(t, s, "q")
		if i%5 == 3 {
			flush()
		}
		if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
			t.Fatalf("finish after flush: %v", err)
		}
		if _, err := s.GetJob(bg, id); err != nil {
			t.Fatal(err)
		}
	}
	flush()
	var ps []engine.EnqueueParams
	for i := range 250 {
		ps = append(ps, engine.EnqueueParams{Job: engine.JobSpec{ID: "b" + strconv.Itoa(i), Queue: "q"}})
	}
	rs, err := s.EnqueueBatch(bg, ps)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.Err != nil || !r.Created {
			t.Fatalf("pipelined enqueue %d after a flush: %+v", i, r)
		}
	}
	want := "scripts"
	if e.mini == nil {
		want = "functions"
	}
	if s.CallPath() != want {
		t.Errorf("call path %s, want %s", s.CallPath(), want)
	}
}

// TestClockNeverGoesBack: a call given an earlier time uses the last one.
func TestClockNeverGoesBack(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	e.advance(time.Hour)
	later := e.clock()
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	e.advance(-30 * time.Minute)
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "b", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	j, _ := s.GetJob(bg, "b")
	if !j.CreatedAt.Equal(later) {
		t.Fatalf("created %v, want %v", j.CreatedAt, later)
	}
}

// TestRetention: ended records expire logically at ended+retention; a
// plain job's ID goes into the retention bucket of the minute of that time
// (no TTL, with either clock), which a write call after the minute's end
// removes, with the record.
func TestRetention(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Retention = time.Hour
	e := newEnv(t, cfg)
	s := e.store
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	c := claimOne(t, s, "q")
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "a", Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	j, err := s.GetJob(bg, "a")
	if err != nil || !j.ExpiresAt.Equal(j.EndedAt.Add(time.Hour)) {
		t.Fatalf("job %+v, %v", j, err)
	}
	m := j.ExpiresAt.UnixMilli() / 60000
	if got, _ := e.rdb.LRange(bg, s.keys.bucket(m), 0, -1).Result(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("bucket %d holds %q", m, got)
	}
	if due, _ := e.rdb.ZScore(bg, s.keys.buckets(), strconv.FormatInt(m, 10)).Result(); due != float64((m+1)*60000) {
		t.Fatalf("bucket %d due at %v", m, due)
	}
	if ttl, _ := e.rdb.PTTL(bg, s.keys.job("a")).Result(); ttl != -1 {
		t.Fatalf("TTL %v", ttl)
	}
	e.advance(time.Hour)
	if _, err := s.GetJob(bg, "a"); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("after retention: %v", err)
	}
	if _, err := s.Queues(bg); err != nil { // reads do not sweep
		t.Fatal(err)
	}
	// the write at the end of the bucket's minute removes it, not before
	e.clk.Set(time.UnixMilli((m+1)*60000 - 1))
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "b", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.rdb.Exists(bg, s.keys.job("a")).Result(); n != 1 {
		t.Fatal("removed before its bucket was due")
	}
	e.clk.Set(time.UnixMilli((m + 1) * 60000))
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "c", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.rdb.Exists(bg, s.keys.job("a"), s.keys.bucket(m)).Result(); n != 0 {
		t.Fatal("the expired job's key or its bucket is still there after a write")
	}
	for _, k := range []string{s.keys.expiry, s.keys.buckets()} {
		if n, _ := e.rdb.ZCard(bg, k).Result(); n != 0 {
			t.Fatalf("%s has %d entries", k, n)
		}
	}
	if g, _ := e.rdb.HGet(bg, s.keys.seq, "gc").Result(); g != "none" {
		t.Fatalf("gc %q after the sweep", g)
	}

	// With the server's clock too, ended records get no TTL: a bucket
	// entry.
	srv, err := New(e.rdb, Options{Namespace: e.ns + "-srv", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	redistest.CleanupNamespace(t, e.rdb, e.ns+"-srv")
	if _, err := srv.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	c = claimOne(t, srv, "q")
	if _, err := srv.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "a", Token: c.Lease.Token, Kind: engine.OutcomeFailed}}}); err != nil {
		t.Fatal(err)
	}
	if ttl, err := e.rdb.PTTL(bg, srv.keys.job("a")).Result(); err != nil || ttl != -1 {
		t.Fatalf("TTL %v, %v", ttl, err)
	}
	j, err = srv.GetJob(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	m = j.ExpiresAt.UnixMilli() / 60000
	if got, _ := e.rdb.LRange(bg, srv.keys.bucket(m), 0, -1).Result(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("bucket %d holds %q", m, got)
	}
}

// TestClaimWaitWakes: a blocked claim returns the job pushed while it
// waits; an empty wait returns nothing and no error; a cancelled context
// returns its error.
func TestClaimWaitWakes(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	got := make(chan []engine.Claimed, 1)
	errc := make(chan error, 1)
	go func() {
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q", "q2"}, Max: 2, Lease: time.Minute, Wait: time.Minute})
		got <- c
		errc <- err
	}()
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q2"}}); err != nil {
		t.Fatal(err)
	}
	c := <-got
	if err := <-errc; err != nil || len(c) != 1 || c[0].Job.ID != "a" {
		t.Fatalf("woken claim: %+v, %v", c, err)
	}
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute, Wait: 20 * time.Millisecond})
	if err != nil || c != nil {
		t.Fatalf("empty wait: %+v, %v", c, err)
	}
	ctx, cancel := context.WithCancel(bg)
	go cancel()
	if _, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute, Wait: time.Minute}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

// TestAwait: AwaitJob and AwaitWorkflow return the final snapshot, also
// with retention 0.
func TestAwait(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Retention = 0
	e := newEnv(t, cfg)
	s := e.store
	_, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	type res struct {
		state string
		err   error
	}
	ch := make(chan res, 3)
	ready := make(chan struct{}, 3)
	go func() {
		ready <- struct{}{}
		w, err := s.AwaitWorkflow(bg, "w")
		ch <- res{string(w.State), err}
	}()
	go func() {
		ready <- struct{}{}
		j, err := s.AwaitJob(bg, "w/a")
		ch <- res{string(j.State), err}
	}()
	go func() {
		ready <- struct{}{}
		j, err := s.AwaitJob(bg, "j")
		ch <- res{string(j.State), err}
	}()
	for range 3 {
		<-ready
	}
	// Wait until the three are registered, so that the finish publishes.
	for {
		n1, _ := e.rdb.ZCard(bg, s.keys.waitWorkflow("w")).Result()
		n2, _ := e.rdb.ZCard(bg, s.keys.waitWorkflowJobs("w")).Result()
		n3, _ := e.rdb.ZCard(bg, s.keys.waitJob("j")).Result()
		if n1+n2+n3 == 3 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 2, Lease: time.Minute})
	if err != nil || len(c) != 2 {
		t.Fatal(err, len(c))
	}
	_, err = s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{
		{JobID: c[0].Job.ID, Token: c[0].Lease.Token, Kind: engine.OutcomeCompleted},
		{JobID: c[1].Job.ID, Token: c[1].Lease.Token, Kind: engine.OutcomeFailed},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		r := <-ch
		if r.err != nil || (r.state != "completed" && r.state != "failed") {
			t.Errorf("await: %+v", r)
		}
	}
	// retention 0: gone for readers at once
	if _, err := s.GetWorkflow(bg, "w"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("workflow with retention 0: %v", err)
	}
	// an await of an ended record returns at once
	ctx, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	if _, err := s.AwaitJob(ctx, "nope"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("await unknown: %v", err)
	}
}

// TestCancelledPendingUndoKeepsOrder: an undo cancelled while it waits for
// its descendants' undos releases its ancestors only once those ended, as
// the model does.
func TestCancelledPendingUndoKeepsOrder(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	m := engine.NewModel(engine.DefaultConfig())
	u := &engine.UndoSpec{Queue: "undo"}
	plan := engine.Plan{ID: "saga", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "q", Undo: u},
		{Name: "b", Queue: "q", After: []string{"a"}, Undo: u},
		{Name: "c", Queue: "q", After: []string{"b"}, Undo: u},
		{Name: "d", Queue: "q", After: []string{"c"}},
	}}
	if _, err := m.Submit(e.clock(), engine.SubmitParams{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	// run a, b, c to completion and fail d, on both
	step := func(queue string, kind engine.OutcomeKind) {
		t.Helper()
		cp := engine.ClaimParams{Queues: []string{queue}, Max: 1, Lease: time.Minute}
		mc, _ := m.Claim(e.clock(), cp)
		sc, err := s.Claim(bg, cp)
		if err != nil || len(mc) != 1 || len(sc) != 1 || mc[0].Job.ID != sc[0].Job.ID {
			t.Fatalf("claim: %v %+v %+v", err, mc, sc)
		}
		mf, _ := m.Finish(e.clock(), engine.FinishParams{Outcomes: []engine.Outcome{{JobID: mc[0].Job.ID, Token: mc[0].Lease.Token, Kind: kind}}})
		sf, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: sc[0].Job.ID, Token: sc[0].Lease.Token, Kind: kind}}})
		if err != nil || !reflect.DeepEqual(conformance.NormSettled(mf.Settled), conformance.NormSettled(sf.Settled)) {
			t.Fatalf("finish %s: %v\n%+v\n%+v", mc[0].Job.ID, err, mf.Settled, sf.Settled)
		}
	}
	step("q", engine.OutcomeCompleted)
	step("q", engine.OutcomeCompleted)
	step("q", engine.OutcomeCompleted)
	step("q", engine.OutcomeFailed)
	// compensating: c's undo is queued, b's and a's wait
	mr, _ := m.CancelJob(e.clock(), engine.CancelJobParams{ID: "saga/b/undo"})
	sr, err := s.CancelJob(bg, engine.CancelJobParams{ID: "saga/b/undo"})
	if err != nil || !reflect.DeepEqual(mr, sr) {
		t.Fatalf("cancel pending undo: %v\n%+v\n%+v", err, mr, sr)
	}
	if len(sr.Pushed) != 0 {
		t.Fatalf("a's undo overtook c's: %+v", sr.Pushed)
	}
	step("undo", engine.OutcomeCompleted) // c's undo: releases a's through b's
	step("undo", engine.OutcomeCompleted) // a's undo: the workflow ends
	mw, _ := m.GetWorkflow(e.clock(), "saga")
	sw, err := s.GetWorkflow(bg, "saga")
	if err != nil || !reflect.DeepEqual(mw, sw) || sw.State != weir.WorkflowCompensationFailed {
		t.Fatalf("workflow: %v\n%+v\n%+v", err, mw, sw)
	}
}

// TestAwaitEndsWhenItsContextIsCancelled: a blocked await returns the
// context's error when the context is cancelled, not at its next refresh.
func TestAwaitEndsWhenItsContextIsCancelled(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		_, err := s.AwaitWorkflow(ctx, "w")
		done <- err
	}()
	for { // wait until the await is registered, then cancel it
		if n, _ := e.rdb.ZCard(bg, s.keys.waitWorkflow("w")).Result(); n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	guard := time.NewTimer(waiterRefresh / 2)
	defer guard.Stop()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("await returned %v, want context.Canceled", err)
		}
	case <-guard.C:
		t.Fatal("await did not return after its context was cancelled")
	}
}

// TestWakeTokensWhileWaiting (server clock): a push writes a wake-up token
// when its queue is new or a claim may be blocked on it, and none
// otherwise; a claim blocked on a known queue is woken by the next push.
func TestWakeTokensWhileWaiting(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	ns := e.ns + "-wake"
	s, err := New(e.rdb, Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	redistest.CleanupNamespace(t, e.rdb, ns)
	enq := func(id string) {
		t.Helper()
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	tokens := func() int64 {
		t.Helper()
		n, err := e.rdb.LLen(bg, s.keys.wake("q")).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	enq("a")
	if n := tokens(); n != 1 {
		t.Fatalf("first push into a new queue: %d tokens, want 1", n)
	}
	if c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 10, Lease: time.Minute}); err != nil || len(c) != 1 {
		t.Fatalf("claim: %v, %d", err, len(c))
	}
	if n := tokens(); n != 0 {
		t.Fatalf("a claim that emptied the queue left %d tokens", n)
	}
	enq("b")
	if n := tokens(); n != 0 {
		t.Fatalf("push with nobody waiting: %d tokens, want 0", n)
	}
	if c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 10, Lease: time.Minute}); err != nil || len(c) != 1 {
		t.Fatalf("claim: %v, %d", err, len(c))
	}
	// An empty wait registers the caller: pushes meanwhile write tokens.
	if c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 10, Lease: time.Minute, Wait: 5 * time.Millisecond}); err != nil || len(c) != 0 {
		t.Fatalf("empty wait: %v, %d", err, len(c))
	}
	enq("c")
	if n := tokens(); n != 1 {
		t.Fatalf("push while a claim may wait: %d tokens, want 1", n)
	}
	if c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 10, Lease: time.Minute}); err != nil || len(c) != 1 {
		t.Fatalf("claim: %v, %d", err, len(c))
	}
	got := make(chan []engine.Claimed, 1)
	errc := make(chan error, 1)
	go func() {
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 10, Lease: time.Minute, Wait: time.Minute})
		got <- c
		errc <- err
	}()
	enq("d")
	if c := <-got; len(c) != 1 || c[0].Job.ID != "d" {
		t.Fatalf("blocked claim got %+v, %v", c, <-errc)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestClaimWaitWakesForADelayedJob: a claim blocked on an empty queue is
// woken by a delayed push too (a later enqueue with RunAt, a retry), and
// then waits only until the job is due, not for the rest of its wait.
func TestClaimWaitWakesForADelayedJob(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s, err := New(e.rdb, Options{Namespace: e.ns + "-rt"}) // the server's clock
	if err != nil {
		t.Fatal(err)
	}
	redistest.CleanupNamespace(t, e.rdb, e.ns+"-rt")
	const wait = 6 * time.Second
	type res struct {
		c   []engine.Claimed
		err error
		at  time.Duration
	}
	got := make(chan res, 1)
	start := time.Now()
	go func() {
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute, Wait: wait})
		got <- res{c, err, time.Since(start)}
	}()
	time.Sleep(200 * time.Millisecond) // the claim is blocked by now
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "later", Queue: "q", RunAt: time.Now().Add(300 * time.Millisecond)}}); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || len(r.c) != 1 || r.c[0].Job.ID != "later" {
		t.Fatalf("claim: %+v, %v", r.c, r.err)
	}
	// due at ~0.5 s; without the wake-up the claim slept through its whole wait
	if r.at > wait/2 {
		t.Errorf("the delayed job was claimed %v after the claim began; due after ~0.5 s", r.at)
	}
}

// TestResubmitAfterTTLLeavesNoStaleIndex: a workflow submitted again under
// its ID after its record's TTL removed it, but before the expiry sweep
// came to its entry, leaves no member of the old record in the listing
// indexes (they would be rescanned by every listing, forever).
func TestResubmitAfterTTLLeavesNoStaleIndex(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	ns := e.ns + "-ttl"
	cfg := engine.DefaultConfig()
	cfg.Retention = 200 * time.Millisecond
	s, err := New(e.rdb, Options{Namespace: ns, Config: cfg}) // the server's clock: real TTLs
	if err != nil {
		t.Fatal(err)
	}
	redistest.CleanupNamespace(t, e.rdb, ns)
	plan := engine.Plan{ID: "daily", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}
	run := func() {
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: plan}); err != nil {
			t.Fatal(err)
		}
		c := claimOne(t, s, "q")
		if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
			t.Fatal(err)
		}
	}
	k, _ := newKeys(ns, 0)
	for i := range 3 {
		run()
		time.Sleep(250 * time.Millisecond)
		if e.mini != nil {
			e.mini.FastForward(250 * time.Millisecond) // miniredis expires keys when told
		}
		if n, _ := e.rdb.Exists(bg, k.workflow("daily")).Result(); n != 0 {
			t.Fatalf("round %d: the record outlived its TTL", i)
		}
	}
	run() // its finalize sweeps the entries of the earlier records
	for _, key := range []string{k.wf, k.wfState("completed")} {
		ms, err := e.rdb.ZRange(bg, key, 0, -1).Result()
		if err != nil || len(ms) != 1 {
			t.Errorf("%s holds %v (%v); want the live record's member only", key, ms, err)
		}
	}
	page, err := s.ListWorkflows(bg, weir.ListParams{})
	if err != nil || len(page.Workflows) != 1 {
		t.Fatalf("list: %d workflows, %v", len(page.Workflows), err)
	}
}

// TestRepeatedClaimCallHandsOutTheSameLeases: the same claim call run
// twice (as go-redis sends it again when the connection broke after the
// request left) hands out the first run's leases again, and leaves the
// other jobs queued; a finish that claims does the same.
func TestRepeatedClaimCallHandsOutTheSameLeases(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	for _, id := range []string{"j1", "j2", "j3"} {
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "a", Queue: "wq"}}}}); err != nil {
		t.Fatal(err)
	}
	call := func(queue string, max int) []engine.Claimed {
		t.Helper()
		sc := scripts["claim"]
		args := append(s.argv(sc, 6), max, 60000, "", "00112233aabbccdd"+queue, "w1", queue)
		v, err := s.call(bg, sc, args)
		if err != nil {
			t.Fatal(err)
		}
		r := newReader(v)
		r.int()
		r.int()
		c := r.claimed()
		if r.err != nil {
			t.Fatal(r.err)
		}
		return c
	}
	for _, q := range []struct {
		name string
		max  int
	}{{"q", 2}, {"wq", 1}} {
		first, again := call(q.name, q.max), call(q.name, q.max)
		if len(first) != q.max || !reflect.DeepEqual(first, again) {
			t.Fatalf("%s: first %+v, again %+v", q.name, first, again)
		}
	}
	if j, err := s.GetJob(bg, "j3"); err != nil || j.State != weir.Queued {
		t.Fatalf("j3 after the repeated claim: %+v %v", j, err)
	}
	// A new call leases the rest.
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 5, Lease: time.Minute})
	if err != nil || len(c) != 1 || c[0].Job.ID != "j3" {
		t.Fatalf("a new claim: %+v %v", c, err)
	}
}

// resendHook sends every transition call (FCALL, EVALSHA, EVAL) twice while on
// is set, as go-redis does when a connection breaks after the request
// left: the caller sees the second run's reply.
type resendHook struct{ on atomic.Bool }

func (h *resendHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *resendHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *resendHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); h.on.Load() && (n == "fcall" || n == "evalsha" || n == "eval") {
			if err := next(ctx, cmd); err != nil {
				return err
			}
		}
		return next(ctx, cmd)
	}
}

// TestResentFinishHandsOutTheSameLeases: a finish that claims, run twice
// (its reply lost), settles once and hands out its first run's leases
// again. Its first run looks up no claim record (it settled an outcome, so
// no run came before it); the second, which settles nothing, must find
// the record, or it would lease the next job and orphan the first.
func TestResentFinishHandsOutTheSameLeases(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	h := &resendHook{}
	e.rdb.AddHook(h)
	_, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "q"},
		{Name: "b", Queue: "q", After: []string{"a"}},
		{Name: "c", Queue: "q"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	a := claimOne(t, s, "q")
	if a.Job.ID != "w/a" {
		t.Fatalf("claimed %s first", a.Job.ID)
	}
	h.on.Store(true)
	fr, err := s.Finish(bg, engine.FinishParams{
		Outcomes: []engine.Outcome{{JobID: a.Job.ID, Token: a.Lease.Token, Kind: engine.OutcomeCompleted}},
		Claim:    &engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute},
	})
	h.on.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Settled) != 1 || fr.Settled[0].Err != nil || fr.Settled[0].State != weir.Completed {
		t.Fatalf("settled %+v", fr.Settled)
	}
	// c was queued before b (pushed by a's end): the first run leased c
	if len(fr.Claimed) != 1 || fr.Claimed[0].Job.ID != "w/c" || fr.Claimed[0].Job.Attempt != 1 {
		t.Fatalf("claimed %+v", fr.Claimed)
	}
	if b, err := s.GetJob(bg, "w/b"); err != nil || b.State != weir.Queued {
		t.Fatalf("b after the resent finish: %+v %v", b, err)
	}
	c := fr.Claimed[0]
	done, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}})
	if err != nil || done.Settled[0].Err != nil {
		t.Fatalf("finish with the lease handed out again: %+v %v", done, err)
	}
}

// TestTimeGoesOnAfterTheClockStepsBack: a namespace whose last write ran an
// hour ahead of the server's clock (as after a failover to a primary whose
// clock is an hour behind) keeps its time going from there: a lease taken
// then still expires after its own length, not an hour later, and no
// timestamp goes back.
func TestTimeGoesOnAfterTheClockStepsBack(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	ns := e.ns + "-back"
	s, err := New(e.rdb, Options{Namespace: ns}) // the server's clock
	if err != nil {
		t.Fatal(err)
	}
	redistest.CleanupNamespace(t, e.rdb, ns)
	k, _ := newKeys(ns, 0)
	server, err := e.rdb.Time(bg).Result()
	if err != nil {
		t.Fatal(err)
	}
	ahead := server.Add(time.Hour).UnixMilli()
	if err := e.rdb.HSet(bg, k.seq, "now", ahead).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j", Queue: "q", MaxAttempts: 2, Backoff: time.Millisecond}}); err != nil {
		t.Fatal(err)
	}
	const lease = 300 * time.Millisecond
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: lease})
	if err != nil || len(c) != 1 {
		t.Fatalf("claim: %v, %d jobs", err, len(c))
	}
	dl := c[0].Lease.Deadline.UnixMilli()
	if dl < ahead+lease.Milliseconds() || dl > ahead+lease.Milliseconds()+5000 {
		t.Fatalf("lease deadline %d: want the last write's time %d + %v (time must not go back to the server's clock)", dl, ahead, lease)
	}
	time.Sleep(lease + 200*time.Millisecond)
	res, err := s.ExpireLeases(bg, engine.ExpireParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Expired) != 1 || res.Expired[0].JobID != "j" {
		t.Fatalf("after the lease's length: expired %+v, want j (a clock that stands still keeps the lease for an hour)", res.Expired)
	}
	j, err := s.GetJob(bg, "j")
	if err != nil {
		t.Fatal(err)
	}
	if j.State != weir.Queued || j.Error != "lease_expired" {
		t.Errorf("job after its lease expired: %s %q, want queued lease_expired", j.State, j.Error)
	}
	off, err := e.rdb.HGet(bg, k.seq, "off").Int64()
	if err != nil || off < time.Hour.Milliseconds()-5000 || off > time.Hour.Milliseconds()+5000 {
		t.Errorf("stored clock offset %d (%v), want about an hour", off, err)
	}
}

// snapshotNamespace reads every key of a namespace, type by type (miniredis
// has no DUMP for hashes or sorted sets), and returns a func that puts the
// namespace back as it was: what a replica that missed the last writes
// holds when it is promoted.
func snapshotNamespace(t *testing.T, rdb redis.UniversalClient, ns string) (restore func()) {
	t.Helper()
	type saved struct {
		typ  string
		str  string
		hash map[string]string
		zset []redis.Z
		list []string
		set  []string
		ttl  time.Duration
	}
	snap := map[string]saved{}
	iter := rdb.Scan(bg, 0, "weir:{"+ns+":*", 1000).Iterator()
	for iter.Next(bg) {
		k := iter.Val()
		typ, err := rdb.Type(bg, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		s := saved{typ: typ}
		switch typ {
		case "string":
			s.str, err = rdb.Get(bg, k).Result()
		case "hash":
			s.hash, err = rdb.HGetAll(bg, k).Result()
		case "zset":
			s.zset, err = rdb.ZRangeWithScores(bg, k, 0, -1).Result()
		case "list":
			s.list, err = rdb.LRange(bg, k, 0, -1).Result()
		case "set":
			s.set, err = rdb.SMembers(bg, k).Result()
		case "stream":
			continue // the event stream: not part of what a failover loses here
		default:
			t.Fatalf("key %s: type %s not saved", k, typ)
		}
		if err != nil {
			t.Fatal(err)
		}
		if s.ttl, err = rdb.PTTL(bg, k).Result(); err != nil {
			t.Fatal(err)
		}
		snap[k] = s
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		redistest.Clean(bg, rdb, ns)
		for k, s := range snap {
			var err error
			switch s.typ {
			case "string":
				err = rdb.Set(bg, k, s.str, 0).Err()
			case "hash":
				err = rdb.HSet(bg, k, s.hash).Err()
			case "zset":
				err = rdb.ZAdd(bg, k, s.zset...).Err()
			case "list":
				err = rdb.RPush(bg, k, s.list).Err()
			case "set":
				err = rdb.SAdd(bg, k, s.set).Err()
			}
			if err == nil && s.ttl > 0 {
				err = rdb.PExpire(bg, k, s.ttl).Err()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestTokensAreNotHandedOutAgainAfterAFailover: a failover to a replica
// that missed a claim puts the lease counter back; the job is claimed again
// there, and the first claimer's token must not finish the second
// claimer's attempt.
func TestTokensAreNotHandedOutAgainAfterAFailover(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "a", Queue: "wq"}}}}); err != nil {
		t.Fatal(err)
	}
	restore := snapshotNamespace(t, e.rdb, e.ns)
	claim := func() []engine.Claimed {
		t.Helper()
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q", "wq"}, Max: 2, Lease: time.Minute})
		if err != nil || len(c) != 2 {
			t.Fatalf("claim: %v, %d jobs", err, len(c))
		}
		return c
	}
	before := claim()
	restore() // the failover: the replica never saw that claim
	after := claim()
	for i := range before {
		if before[i].Job.ID != after[i].Job.ID {
			t.Fatalf("claimed %s, then %s after the failover", before[i].Job.ID, after[i].Job.ID)
		}
		if before[i].Lease.Token == after[i].Lease.Token {
			t.Fatalf("%s: token %q handed out again after the failover", before[i].Job.ID, after[i].Lease.Token)
		}
		res, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: before[i].Job.ID, Token: before[i].Lease.Token, Kind: engine.OutcomeCompleted}}})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res.Settled[0].Err, weir.ErrLeaseLost) {
			t.Fatalf("%s: the first claimer's token finished the second claimer's attempt: %+v", before[i].Job.ID, res.Settled[0])
		}
		res, err = s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: after[i].Job.ID, Token: after[i].Lease.Token, Kind: engine.OutcomeCompleted}}})
		if err != nil || res.Settled[0].Err != nil || res.Settled[0].State != weir.Completed {
			t.Fatalf("%s: the second claimer's finish: %+v %v", after[i].Job.ID, res.Settled, err)
		}
	}
}

// TestAwaitAfterItsRegistrationLapsed: an await whose registration lapsed
// (its set's TTL fired while it was stuck) and that then ends leaves no
// registration behind, so the next await of the record is told at once when
// it ends. A counter went to -1 there, with no TTL, and the next await's
// increment to 0 made the record's end publish nothing.
func TestAwaitAfterItsRegistrationLapsed(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}}); err != nil {
		t.Fatal(err)
	}
	key := s.keys.waitWorkflow("w")
	registered := func() {
		t.Helper()
		for i := 0; ; i++ {
			if n, _ := e.rdb.ZCard(bg, key).Result(); n == 1 {
				return
			}
			if i > 5000 {
				t.Fatal("the await did not register")
			}
			time.Sleep(time.Millisecond)
		}
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		_, err := s.AwaitWorkflow(ctx, "w")
		done <- err
	}()
	registered()
	if err := e.rdb.Del(bg, key).Err(); err != nil { // the TTL fired
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("first await: %v", err)
	}
	if n, err := e.rdb.Exists(bg, key).Result(); err != nil || n != 0 {
		typ, _ := e.rdb.Type(bg, key).Result()
		t.Fatalf("after the lapsed await ended, %s is left (%s, %v)", key, typ, err)
	}
	// The next await is told when the workflow ends, well before its
	// minute's refresh would read the record again.
	ctx2, cancel2 := context.WithTimeout(bg, waiterRefresh/2)
	defer cancel2()
	got := make(chan weir.Workflow, 1)
	go func() {
		w, err := s.AwaitWorkflow(ctx2, "w")
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	registered()
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
	if err != nil || len(c) != 1 {
		t.Fatal(err, len(c))
	}
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c[0].Job.ID, Token: c[0].Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	if w := <-got; w.State != weir.WorkflowCompleted {
		t.Fatalf("second await: %+v", w)
	}
}

// TestPushCounterStaysBounded: a queue's push counter (FIFO among equal
// priorities in the ready score) goes back to 0 when a claim empties the
// queue after it passed 2^32, and stops below the value where a ready
// score would leave the exact integers; there, priority order still holds.
func TestPushCounterStaysBounded(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	state := s.keys.queue("q", "s")
	enqueue := func(id string, prio int) {
		t.Helper()
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q", Priority: prio}}); err != nil {
			t.Fatal(err)
		}
	}
	claimAll := func(n int) []string {
		t.Helper()
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: n + 1, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, x := range c {
			ids = append(ids, x.Job.ID)
		}
		return ids
	}
	counter := func() int64 {
		t.Helper()
		v, err := e.rdb.HGet(bg, state, "push").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	enqueue("first", 0) // the queue is known
	if err := e.rdb.HSet(bg, state, "push", int64(1)<<32).Err(); err != nil {
		t.Fatal(err)
	}
	// a priority other than 0 takes a push count (priority 0 is the list's:
	// spec/keys.md q:<queue>:l)
	enqueue("a", 1)
	if got := claimAll(2); !reflect.DeepEqual(got, []string{"first", "a"}) {
		t.Fatalf("claimed %v", got)
	}
	if c := counter(); c != 0 {
		t.Fatalf("push counter %d after a claim emptied the queue, want 0", c)
	}
	// Near the cap: the counter stops, scores stay exact, priority holds.
	const pushMax = 1<<53 - 1 - 2001<<40
	if err := e.rdb.HSet(bg, state, "push", int64(pushMax-1)).Err(); err != nil {
		t.Fatal(err)
	}
	enqueue("low", 1000)
	enqueue("mid", 0)
	enqueue("high", -1000)
	enqueue("mid2", 0)
	if c := counter(); c != pushMax {
		t.Fatalf("push counter %d, want it to stop at %d", c, int64(pushMax))
	}
	zs, err := e.rdb.ZRangeWithScores(bg, s.keys.queue("q", "r"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range zs {
		if z.Score >= 1<<53 {
			t.Errorf("%v: score %v past 2^53", z.Member, z.Score)
		}
	}
	got := claimAll(4)
	if len(got) != 4 || got[0] != "high" || got[3] != "low" {
		t.Fatalf("claimed %v, want high, the two mid jobs, low", got)
	}
}

// TestClaimQuarantinesUnreadableRecords: a job in a ready set whose record
// a claim cannot read (a key of another type, a hash without its spec, a
// task whose workflow key or state string is of another type or has no spec for it: none
// written by weir) is moved to the queue's quarantine set q:<q>:x, and the
// claim leases the good jobs and fails nothing: no error comes after the
// claim's first write (ZPOPMIN), which Redis would not roll back.
func TestClaimQuarantinesUnreadableRecords(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	P := "weir:{" + e.ns + ":0}:"
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "q"}, {Name: "b", Queue: "q"},
	}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "ws", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"good1", "good2"} {
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	// break records behind the store's back, ahead of the good jobs
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.rdb.Set(bg, P+"j:str", "not a hash", 0).Err())
	must(e.rdb.HSet(bg, P+"j:nospec", "s", "queued").Err())
	must(e.rdb.HDel(bg, P+"w:w", "t2").Err()) // task b loses its spec
	must(e.rdb.Set(bg, P+"w:wx", "not a hash", 0).Err())
	must(e.rdb.Del(bg, P+"w:ws:s").Err()) // ws/a's state string a hash
	must(e.rdb.HSet(bg, P+"w:ws:s", "not", "a string").Err())
	for _, id := range []string{"str", "nospec", "wx/a"} {
		must(e.rdb.LPush(bg, P+"q:q:l", id).Err())
	}
	got, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 10, Lease: time.Minute})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.Job.ID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"good1", "good2", "w/a"}) {
		t.Fatalf("claimed %v", ids)
	}
	bad, err := e.rdb.ZRange(bg, P+"q:q:x", 0, -1).Result()
	must(err)
	slices.Sort(bad)
	if !slices.Equal(bad, []string{"nospec", "str", "w/b", "ws/a", "wx/a"}) {
		t.Fatalf("quarantined %v", bad)
	}
	if n, _ := e.rdb.LLen(bg, P+"q:q:l").Result(); n != 0 {
		t.Fatalf("%d jobs left in the ready set", n)
	}
}
