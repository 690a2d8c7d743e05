package redisstore

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/engine"
)

// bigPlan is a plan at the task limit: each task after the first hundred
// depends on up to three earlier ones; some have undo jobs.
func bigPlan(id string, n int) engine.Plan {
	r := rand.New(rand.NewPCG(1, 2))
	p := engine.Plan{ID: id, UndoOnCancel: true}
	for i := 0; i < n; i++ {
		t := engine.TaskSpec{Name: fmt.Sprintf("task-%05d", i), Queue: fmt.Sprintf("q%d", i%4), Payload: []byte("payload")}
		if i >= 100 {
			for k := r.IntN(3) + 1; k > 0; k-- {
				d := fmt.Sprintf("task-%05d", r.IntN(i))
				if !strings.Contains(strings.Join(t.After, ","), d) {
					t.After = append(t.After, d)
				}
			}
		}
		if i%10 == 0 {
			t.Undo = &engine.UndoSpec{Queue: "undo", Payload: []byte("u")}
		}
		p.Tasks = append(p.Tasks, t)
	}
	return p
}

// TestLargestWorkflow: submitting and cancelling a workflow at the task
// limit each stay out of the server's SLOWLOG at 50 ms (real Redis only:
// the assertion is on SLOWLOG entries, not on wall time).
func TestLargestWorkflow(t *testing.T) {
	e := newPrivateEnv(t, engine.DefaultConfig())
	s := e.store
	n := weir.DefaultLimits().MaxTasks
	plan := bigPlan("big", n)
	if err := s.Load(bg); err != nil {
		t.Fatal(err)
	}
	old, err := e.rdb.ConfigGet(bg, "slowlog-log-slower-than").Result()
	if err != nil {
		t.Fatal(err)
	}
	defer e.rdb.ConfigSet(bg, "slowlog-log-slower-than", old["slowlog-log-slower-than"])
	if err := e.rdb.ConfigSet(bg, "slowlog-log-slower-than", "50000").Err(); err != nil {
		t.Fatal(err)
	}
	e.rdb.SlowLogReset(bg)
	res, err := s.Submit(bg, engine.SubmitParams{Plan: plan})
	if err != nil || !res.Created || len(res.Pushed) != 100 {
		t.Fatalf("submit: %v, created %v, %d pushed", err, res.Created, len(res.Pushed))
	}
	// Complete a few roots so that cancel has undo work to start.
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q0", "q1", "q2", "q3"}, Max: 50, Lease: time.Minute})
	if err != nil || len(c) != 50 {
		t.Fatalf("claim: %v, %d", err, len(c))
	}
	var outs []engine.Outcome
	for _, x := range c[:40] {
		outs = append(outs, engine.Outcome{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeCompleted})
	}
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: outs}); err != nil {
		t.Fatal(err)
	}
	cr, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "big"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.Cancelled)+len(cr.Stopping)+40 != n || len(cr.Stopping) != 10 {
		t.Fatalf("cancel: %d cancelled, %d stopping", len(cr.Cancelled), len(cr.Stopping))
	}
	// every task the cancel ended has one "cancelled" event, in plan
	// order, though they are written over several calls (the step budget)
	var got []string
	for after := ""; ; {
		page, err := s.Events(bg, engine.EventsParams{After: after, Workflow: "big", Limit: engine.MaxEventsLimit})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range page.Events {
			if ev.Type == weir.EventCancelled {
				got = append(got, ev.Job)
			}
		}
		if len(page.Events) == 0 {
			break
		}
		after = page.Next
	}
	if !slices.Equal(got, cr.Cancelled) {
		t.Errorf("the stream has %d cancelled events of big, want the %d tasks the cancel ended in plan order (first %v, want %v)",
			len(got), len(cr.Cancelled), got[:min(len(got), 3)], cr.Cancelled[:min(len(cr.Cancelled), 3)])
	}
	entries, err := e.rdb.SlowLogGet(bg, 128).Result()
	if err != nil {
		t.Fatal(err)
	}
	byHash := map[string]string{}
	for _, d := range scriptDefs {
		byHash[scripts[d.name].text().sha] = d.name
		byHash[scripts[d.name].fn] = d.name
	}
	for _, en := range entries {
		if strings.Contains(fmt.Sprint(en.Args), e.ns) {
			name := ""
			if len(en.Args) > 1 {
				name = byHash[fmt.Sprint(en.Args[1])]
			}
			if name == "submit" || name == "cancel_workflow" {
				t.Errorf("SLOWLOG: %s %v took %v", name, en.Args[:min(len(en.Args), 4)], en.Duration)
			} else {
				t.Logf("SLOWLOG (not asserted): %s %v took %v", name, en.Args[:min(len(en.Args), 4)], en.Duration)
			}
		}
	}
	w, err := s.GetWorkflow(bg, "big")
	if err != nil || len(w.Tasks) != n || !w.CancelRequested {
		t.Fatalf("workflow after cancel: %v", err)
	}
	for i, task := range w.Tasks {
		if task.State != weir.Cancelled && task.State != weir.Running && task.State != weir.Completed {
			t.Fatalf("task %d is %s after the cancel", i, task.State)
		}
	}
}

// TestStagedSubmitMatchesModel: a plan large enough to be staged behaves
// as the model says, through claims, a failure, a cancel and a repeat.
func TestStagedSubmitMatchesModel(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	m := engine.NewModel(engine.DefaultConfig())
	plan := bigPlan("mid", 1500)
	plan.Tasks[3].Always = true
	mr, merr := m.Submit(e.clock(), engine.SubmitParams{Plan: plan})
	sr, serr := s.Submit(bg, engine.SubmitParams{Plan: plan})
	if merr != nil || serr != nil || !reflect.DeepEqual(mr, sr) {
		t.Fatalf("submit: %v %v\n%+v\n%+v", merr, serr, mr, sr)
	}
	// a repeat is a no-op; a missing stage is staged again
	if r, err := s.Submit(bg, engine.SubmitParams{Plan: plan}); err != nil || r.Created {
		t.Fatalf("repeat: %+v %v", r, err)
	}
	v, err := s.run(bg, "submit", "other", engine.PlanHash(plan), 1500, "s", 0, 0, 0)
	if err != nil || len(v) != 1 || v[0] != "R" {
		t.Fatalf("submit of a missing stage: %v %v", v, err)
	}
	cp := engine.ClaimParams{Queues: []string{"q0", "q1", "q2", "q3"}, Max: 30, Lease: time.Minute}
	mc, _ := m.Claim(e.clock(), cp)
	sc, err := s.Claim(bg, cp)
	if err != nil || len(mc) != len(sc) {
		t.Fatalf("claim: %v, %d vs %d", err, len(mc), len(sc))
	}
	var mo, so []engine.Outcome
	for i := range mc {
		kind := engine.OutcomeCompleted
		if i%7 == 3 {
			kind = engine.OutcomeFailed
		}
		if i >= 25 {
			break
		}
		mo = append(mo, engine.Outcome{JobID: mc[i].Job.ID, Token: mc[i].Lease.Token, Kind: kind})
		so = append(so, engine.Outcome{JobID: sc[i].Job.ID, Token: sc[i].Lease.Token, Kind: kind})
	}
	e.advance(time.Second)
	mf, _ := m.Finish(e.clock(), engine.FinishParams{Outcomes: mo})
	sf, err := s.Finish(bg, engine.FinishParams{Outcomes: so})
	if err != nil || !reflect.DeepEqual(conformance.NormSettled(mf.Settled), conformance.NormSettled(sf.Settled)) {
		t.Fatalf("finish: %v", err)
	}
	e.advance(time.Second)
	mcr, _ := m.CancelWorkflow(e.clock(), engine.CancelWorkflowParams{ID: "mid"})
	scr, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "mid"})
	if err != nil || !reflect.DeepEqual(mcr, scr) {
		t.Fatalf("cancel: %v\n%+v\n%+v", err, mcr, scr)
	}
	mw, _ := m.GetWorkflow(e.clock(), "mid")
	sw, err := s.GetWorkflow(bg, "mid")
	if err != nil || !reflect.DeepEqual(mw, sw) {
		t.Fatalf("workflow differs: %v", err)
	}
	for _, name := range []string{"task-00000", "task-00050", "task-01499"} {
		id := weir.TaskJobID("mid", name)
		mj, _ := m.GetJob(e.clock(), id)
		sj, err := s.GetJob(bg, id)
		if err != nil || mj.State != sj.State || !mj.EndedAt.Equal(sj.EndedAt) || mj.Error != sj.Error {
			t.Fatalf("job %s: %v\n%+v\n%+v", id, err, mj, sj)
		}
	}
}

// TestLargeWorkflowRead: a workflow of more than 500 tasks is read in two
// steps (get_workflow finds it live and answers "L"; Go reads its fields
// in pages of 500 tasks, or in one MULTI): the same snapshot as the model's, gone to
// GetWorkflow once its retention passed, still read by an await then.
func TestLargeWorkflowRead(t *testing.T) {
	for _, n := range []int{500, 501, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newEnv(t, engine.DefaultConfig())
			s := e.store
			m := engine.NewModel(engine.DefaultConfig())
			plan := bigPlan("w", n)
			if _, err := m.Submit(e.clock(), engine.SubmitParams{Plan: plan}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Submit(bg, engine.SubmitParams{Plan: plan}); err != nil {
				t.Fatal(err)
			}
			v, err := s.run(bg, "get_workflow", "w", flag(false))
			if large := len(v) == 1 && v[0] == "L"; err != nil || large != (n > 500) {
				t.Fatalf("get_workflow of %d tasks: %d strings, %v", n, len(v), err)
			}
			e.advance(time.Second)
			if _, err := m.CancelWorkflow(e.clock(), engine.CancelWorkflowParams{ID: "w"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "w"}); err != nil {
				t.Fatal(err)
			}
			mw, _ := m.GetWorkflow(e.clock(), "w")
			sw, err := s.GetWorkflow(bg, "w")
			if err != nil || !reflect.DeepEqual(mw, sw) {
				t.Fatalf("workflow differs from the model's: %v", err)
			}
			// the read of a workflow that keeps changing: one MULTI
			if flat, err := s.readWorkflowAtOnce(bg, "w"); err != nil {
				t.Fatal(err)
			} else if ow, err := workflowFromHash(flat); err != nil || !reflect.DeepEqual(mw, ow) {
				t.Fatalf("the MULTI read differs from the model's: %v", err)
			}
			if sw.State != weir.WorkflowCancelled || sw.ExpiresAt.IsZero() {
				t.Fatalf("after the cancel: %s, expires %v", sw.State, sw.ExpiresAt)
			}
			e.advance(engine.DefaultConfig().Retention)
			if _, err := m.GetWorkflow(e.clock(), "w"); !errors.Is(err, weir.ErrNotFound) {
				t.Fatalf("model: GetWorkflow past retention: %v", err)
			}
			if _, err := s.GetWorkflow(bg, "w"); !errors.Is(err, weir.ErrNotFound) {
				t.Fatalf("GetWorkflow past retention: %v, want ErrNotFound", err)
			}
			if w, err := s.getWorkflow(bg, "w", true); err != nil || len(w.Tasks) != n || w.State != weir.WorkflowCancelled {
				t.Fatalf("an await's read past retention: %d tasks, %v", len(w.Tasks), err)
			}
		})
	}
}

// TestCompensationOverAnUndoFreeChain: the shape of the reliability
// issue's item 5, 1,000 completed roots with an undo, a hub, a chain of
// 2,000 tasks without undos and a task with an undo at its end: every
// root's undo waits for that last undo, found for all roots in one pass
// (a walk per root took 2,000,000 steps in one script). The cancel that
// starts compensation pushes only the last undo, whose end pushes the
// 1,000 others; on real Redis the cancel stays out of SLOWLOG at 50 ms.
func TestCompensationOverAnUndoFreeChain(t *testing.T) {
	e := newOwnEnv(t, engine.DefaultConfig())
	s := e.store
	const roots, chain = 1000, 2000
	p := engine.Plan{ID: "w"}
	var all []string
	for i := range roots {
		name := fmt.Sprintf("r%04d", i)
		all = append(all, name)
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: name, Queue: "q", Undo: &engine.UndoSpec{Queue: "undo"}})
	}
	p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "hub", Queue: "q", After: all})
	prev := "hub"
	for i := range chain {
		name := fmt.Sprintf("c%04d", i)
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: name, Queue: "q", After: []string{prev}})
		prev = name
	}
	p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "end", Queue: "q", After: []string{prev}, Undo: &engine.UndoSpec{Queue: "undo"}},
		engine.TaskSpec{Name: "last", Queue: "last", After: []string{"end"}})
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
		t.Fatal(err)
	}
	// run queue q to its end, one finish-and-claim call a batch
	cp := &engine.ClaimParams{Queues: []string{"q"}, Max: 100, Lease: time.Hour}
	claimed, err := s.Claim(bg, *cp)
	done := 0
	for err == nil && len(claimed) > 0 {
		var outs []engine.Outcome
		for _, c := range claimed {
			outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
		}
		done += len(outs)
		var fr engine.FinishResult
		fr, err = s.Finish(bg, engine.FinishParams{Outcomes: outs, Claim: cp})
		claimed = fr.Claimed
	}
	if err != nil || done != roots+chain+2 {
		t.Fatalf("ran %d tasks: %v", done, err)
	}
	if realRedis() {
		if err := e.rdb.ConfigSet(bg, "slowlog-log-slower-than", "50000").Err(); err != nil {
			t.Fatal(err)
		}
		e.rdb.SlowLogReset(bg)
	}
	undo := true
	cr, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "w", Undo: &undo})
	if err != nil || cr.WorkflowState != weir.WorkflowCompensating {
		t.Fatalf("cancel: %+v %v", cr, err)
	}
	if len(cr.Pushed) != 1 || cr.Pushed[0].JobID != "w/end/undo" {
		t.Fatalf("the cancel pushed %+v, want only w/end/undo", cr.Pushed)
	}
	if realRedis() {
		entries, err := e.rdb.SlowLogGet(bg, 16).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			t.Errorf("SLOWLOG: %v took %v", en.Args[:min(len(en.Args), 4)], en.Duration)
		}
	}
	u, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"undo"}, Max: 10, Lease: time.Minute})
	if err != nil || len(u) != 1 {
		t.Fatalf("undo claim: %+v %v", u, err)
	}
	fr, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: u[0].Job.ID, Token: u[0].Lease.Token, Kind: engine.OutcomeCompleted}}})
	if err != nil || len(fr.Settled) != 1 || len(fr.Settled[0].Pushed) != roots {
		t.Fatalf("the end's undo: %+v %v, want %d undos pushed", fr.Settled, err, roots)
	}
	// in reverse plan order
	if fr.Settled[0].Pushed[0].JobID != fmt.Sprintf("w/r%04d/undo", roots-1) || fr.Settled[0].Pushed[roots-1].JobID != "w/r0000/undo" {
		t.Fatalf("undo order: first %s, last %s", fr.Settled[0].Pushed[0].JobID, fr.Settled[0].Pushed[roots-1].JobID)
	}
}

// TestListOfLargeWorkflows: a page whose workflows hold more than a list
// call reads itself (a 600-task one, and six of 400: past 2,000 tasks the
// call names them and Go reads each) is the model's page.
func TestListOfLargeWorkflows(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	m := engine.NewModel(engine.DefaultConfig())
	for i, n := range []int{600, 400, 400, 400, 400, 400, 400} {
		plan := bigPlan(fmt.Sprintf("w%d", i), n)
		e.advance(time.Millisecond)
		if _, err := m.Submit(e.clock(), engine.SubmitParams{Plan: plan}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: plan}); err != nil {
			t.Fatal(err)
		}
	}
	v, err := e.store.run(bg, "list", "", 100, "", "", "", weir.ListScan, "")
	if err != nil {
		t.Fatal(err)
	}
	if named := strings.Count(strings.Join(v, "\n"), "\nL\n"); named < 2 {
		t.Errorf("the list call named %d workflows for Go to read, want the large one and those past 2,000 tasks", named)
	}
	for _, lim := range []int{100, 3} {
		want, err := m.ListWorkflows(e.clock(), weir.ListParams{Limit: lim})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.store.ListWorkflows(bg, weir.ListParams{Limit: lim})
		if err != nil || !reflect.DeepEqual(want, got) {
			t.Fatalf("limit %d: the page differs from the model's (%v): %d workflows against %d", lim, err, len(got.Workflows), len(want.Workflows))
		}
	}
}
