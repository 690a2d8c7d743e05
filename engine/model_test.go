package engine

import (
	"github.com/weirflow/weir"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
)

// The rule tests: each row drives the Model through its exported methods
// and checks one rule of spec/states.md. Helpers are in
// helpers_test.go.

func TestGraphRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "chain pushes each task when the previous one completes",
			plan: rtPlan(rtT("a"), rtT("b", "a"), rtT("c", "b")),
			run: func(h *rtHarness) {
				h.wantPushed("submit", h.submitted.Pushed, h.tj("a"))
				rtEq(h.t, "created", h.submitted.Created, true)
				h.wantStates("a=queued b=waiting c=waiting")
				s := h.run("a")
				h.wantPushed("finish a", s.Pushed, h.tj("b"))
				rtEq(h.t, "a settled", s.State, weir.Completed)
				rtEq(h.t, "workflow after a", s.WorkflowState, weir.WorkflowRunning)
				rtEq(h.t, "ended after a", s.WorkflowEnded, false)
				h.wantStates("a=completed b=queued c=waiting")
				h.wantPushed("finish b", h.run("b").Pushed, h.tj("c"))
				h.advance(time.Second)
				s = h.run("c")
				h.wantPushed("finish c", s.Pushed)
				rtEq(h.t, "ended after c", s.WorkflowEnded, true)
				rtEq(h.t, "workflow after c", s.WorkflowState, weir.WorkflowCompleted)
				w := h.workflow()
				rtEq(h.t, "state", w.State, weir.WorkflowCompleted)
				rtEq(h.t, "ended at", w.EndedAt, h.now)
				rtDeepEq(h.t, "result of b", w.Tasks[1].Result, []byte("r:b"))
			},
		},
		{
			name: "fan-out pushes the dependents in plan order and they are claimed in that order",
			plan: rtPlan(rtOn("q", rtT("root")), rtOn("q", rtT("z", "root")), rtOn("q", rtT("m", "root")), rtOn("q", rtT("b", "root"))),
			run: func(h *rtHarness) {
				s := h.run("root")
				h.wantPushed("finish root", s.Pushed, h.tj("z"), h.tj("m"), h.tj("b"))
				rtSameIDs(h.t, "ready", h.ready("q"), []string{h.tj("z"), h.tj("m"), h.tj("b")})
				rtSameIDs(h.t, "claimed", h.claimIDs(3, "q"), []string{h.tj("z"), h.tj("m"), h.tj("b")})
			},
		},
		{
			name: "fan-in releases the join once when its last two parents finish in one call",
			plan: rtPlan(rtT("a"), rtT("b"), rtT("c"), rtT("j", "a", "b", "c")),
			run: func(h *rtHarness) {
				h.wantPushed("submit", h.submitted.Pushed, h.tj("a"), h.tj("b"), h.tj("c"))
				h.wantPushed("finish a", h.run("a").Pushed)
				cb, cc := h.start("b"), h.start("c")
				both := []Outcome{rtDone(cb, "r:b"), rtDone(cc, "r:c")}
				r := h.finish(both...)
				h.wantPushed("first of the two", r.Settled[0].Pushed)
				h.wantPushed("second of the two", r.Settled[1].Pushed, h.tj("j"))
				rtSameIDs(h.t, "join queue", h.ready("j"), []string{h.tj("j")})
				again := h.finish(both...)
				rtDeepEq(h.t, "repeated call", again.Settled, r.Settled)
				rtSameIDs(h.t, "join queue after the repeat", h.ready("j"), []string{h.tj("j")})
				h.run("j")
				h.wantWorkflow(weir.WorkflowCompleted)
			},
		},
		{
			name: "diamond runs the join after both branches and hands it their results in After order",
			plan: rtPlan(rtT("a"), rtT("b", "a"), rtT("c", "a"), rtT("d", "c", "b")),
			run: func(h *rtHarness) {
				h.wantPushed("finish a", h.run("a").Pushed, h.tj("b"), h.tj("c"))
				h.wantPushed("finish c", h.run("c").Pushed)
				h.wantStates("a=completed b=queued c=completed d=waiting")
				h.wantPushed("finish b", h.run("b").Pushed, h.tj("d"))
				cd := h.start("d")
				rtDeepEq(h.t, "deps of d", cd.Deps, []weir.DepOutcome{
					{Task: "c", State: weir.Completed, Result: []byte("r:c")},
					{Task: "b", State: weir.Completed, Result: []byte("r:b")},
				})
				rtEq(h.t, "ended", h.complete(cd, "").WorkflowEnded, true)
				h.wantWorkflow(weir.WorkflowCompleted)
			},
		},
		{
			name: "Always join of a diamond runs after a failed branch, sees the failure and absorbs it",
			plan: rtPlan(rtT("a"), rtT("b", "a"), rtT("c", "a"), rtAlways(rtT("d", "b", "c"))),
			run: func(h *rtHarness) {
				h.run("a")
				h.wantPushed("failure of b", h.runFail("b").Pushed)
				h.wantStates("a=completed b=failed c=queued d=waiting")
				h.wantWorkflow(weir.WorkflowRunning)
				h.wantPushed("finish c", h.run("c").Pushed, h.tj("d"))
				cd := h.start("d")
				rtDeepEq(h.t, "deps of d", cd.Deps, []weir.DepOutcome{
					{Task: "b", State: weir.Failed, Error: "boom b"},
					{Task: "c", State: weir.Completed, Result: []byte("r:c")},
				})
				s := h.complete(cd, "")
				rtEq(h.t, "ended", s.WorkflowEnded, true)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompleted)
			},
		},
		{
			name: "a failure cancels its non-Always descendants level by level while other branches run",
			plan: rtPlan(rtT("a"), rtT("r"), rtT("b", "a"), rtT("c", "b"), rtT("d", "c", "r")),
			run: func(h *rtHarness) {
				cr := h.start("r")
				s := h.runFail("a")
				h.wantPushed("failure of a", s.Pushed)
				rtEq(h.t, "ended by a", s.WorkflowEnded, false)
				h.wantStates("a=failed r=running b=cancelled c=cancelled d=cancelled")
				rtEq(h.t, "error of b", h.task("b").Error, weir.DependencyReason("a", weir.Failed))
				rtEq(h.t, "error of c", h.task("c").Error, weir.DependencyReason("b", weir.Cancelled))
				rtEq(h.t, "error of d", h.task("d").Error, weir.DependencyReason("c", weir.Cancelled))
				rtEq(h.t, "ended at of d", h.job(h.tj("d")).EndedAt, h.now)
				s = h.complete(cr, "")
				h.wantPushed("finish r", s.Pushed)
				rtEq(h.t, "ended by r", s.WorkflowEnded, true)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowFailed)
			},
		},
		{
			name: "cancelling a task cancels its non-Always descendants level by level and runs the Always ones",
			plan: rtPlan(rtT("a"), rtT("b", "a"), rtT("c", "b"), rtAlways(rtT("f", "c")), rtT("g", "f")),
			run: func(h *rtHarness) {
				r := h.cancelJob(h.tj("a"))
				rtSameIDs(h.t, "cancelled", r.Cancelled, []string{h.tj("a"), h.tj("b"), h.tj("c")})
				h.wantPushed("cancel of a", r.Pushed, h.tj("f"))
				h.wantStates("a=cancelled b=cancelled c=cancelled f=queued g=waiting")
				rtEq(h.t, "error of c", h.task("c").Error, weir.DependencyReason("b", weir.Cancelled))
				h.wantPushed("finish f", h.run("f").Pushed, h.tj("g"))
				rtEq(h.t, "workflow", h.run("g").WorkflowState, weir.WorkflowCompleted)
			},
		},
		{
			name: "a cascade is processed first in first out, each ended task's dependents in plan order",
			// a's dependents are b, c, x (plan order); y hangs off b, w off
			// c. First in, first out pushes x (from a), then y (from b),
			// then w (from c); last in first out would push w before y, and
			// depth first y and w before x.
			plan: rtPlan(rtT("a"), rtT("b", "a"), rtT("c", "a"), rtAlways(rtT("x", "a")),
				rtAlways(rtT("y", "b")), rtAlways(rtT("w", "c"))),
			run: func(h *rtHarness) {
				s := h.runFail("a")
				h.wantPushed("failure of a", s.Pushed, h.tj("x"), h.tj("y"), h.tj("w"))
				h.wantStates("a=failed b=cancelled c=cancelled x=queued y=queued w=queued")
			},
		},
		{
			name: "roots are pushed at submit in plan order and the rest wait",
			plan: rtPlan(rtOn("q", rtT("c")), rtOn("q", rtT("a")), rtOn("q", rtT("x", "c")), rtOn("q", rtT("b"))),
			run: func(h *rtHarness) {
				h.wantPushed("submit", h.submitted.Pushed, h.tj("c"), h.tj("a"), h.tj("b"))
				rtSameIDs(h.t, "ready", h.ready("q"), []string{h.tj("c"), h.tj("a"), h.tj("b")})
				h.wantStates("c=queued a=queued x=waiting b=queued")
			},
		},
	})
}

func TestAbsorptionRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "a failed leaf is never absorbed: the workflow fails",
			plan: rtPlan(rtT("a"), rtT("b", "a")),
			run: func(h *rtHarness) {
				h.run("a")
				s := h.runFail("b")
				rtEq(h.t, "ended", s.WorkflowEnded, true)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowFailed)
				rtEq(h.t, "reason", h.workflow().Reason, weir.Reason(""))
			},
		},
		{
			name: "a failure whose dependents are all Always is absorbed: the workflow completes",
			plan: rtPlan(rtT("a"), rtAlways(rtT("b", "a")), rtAlways(rtT("c", "a"))),
			run: func(h *rtHarness) {
				h.wantPushed("failure of a", h.runFail("a").Pushed, h.tj("b"), h.tj("c"))
				h.run("b")
				s := h.run("c")
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompleted)
			},
		},
		{
			name: "a failure with one non-Always dependent is not absorbed even though its Always dependent runs",
			plan: rtPlan(rtT("a"), rtAlways(rtT("b", "a")), rtT("c", "a")),
			run: func(h *rtHarness) {
				h.wantPushed("failure of a", h.runFail("a").Pushed, h.tj("b"))
				h.wantStates("a=failed b=queued c=cancelled")
				s := h.run("b")
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowFailed)
			},
		},
		{
			name: "a failed Always leaf is not absorbed",
			plan: rtPlan(rtT("a"), rtAlways(rtT("f", "a"))),
			run: func(h *rtHarness) {
				h.run("a")
				rtEq(h.t, "workflow", h.runFail("f").WorkflowState, weir.WorkflowFailed)
			},
		},
		{
			name: "an Always task runs after a cancelled dependency and sees it cancelled",
			plan: rtPlan(rtT("a"), rtAlways(rtT("b", "a"))),
			run: func(h *rtHarness) {
				r := h.cancelJob(h.tj("a"))
				rtSameIDs(h.t, "cancelled", r.Cancelled, []string{h.tj("a")})
				h.wantPushed("cancel of a", r.Pushed, h.tj("b"))
				rtEq(h.t, "job state", r.State, weir.Cancelled)
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowRunning)
				cb := h.start("b")
				rtDeepEq(h.t, "deps of b", cb.Deps, []weir.DepOutcome{{Task: "a", State: weir.Cancelled, Error: weir.ReasonTextJobCancelled}})
				rtEq(h.t, "workflow", h.complete(cb, "").WorkflowState, weir.WorkflowCompleted)
			},
		},
		{
			name: "a cancelled task never makes the workflow fail",
			plan: rtPlan(rtT("a"), rtT("b", "a")),
			run: func(h *rtHarness) {
				r := h.cancelJob(h.tj("a"))
				rtSameIDs(h.t, "cancelled", r.Cancelled, []string{h.tj("a"), h.tj("b")})
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowCompleted)
				rtEq(h.t, "error of b", h.task("b").Error, weir.DependencyReason("a", weir.Cancelled))
				rtSameIDs(h.t, "queue a", h.ready("a"), nil)
			},
		},
	})
}

func TestFailFastRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "FailFast: the first unabsorbed failure cancels every task not started, whose queued jobs are never claimed",
			plan: rtFailFast(rtPlan(rtT("a"), rtT("b"), rtT("c"), rtT("d", "b"))),
			run: func(h *rtHarness) {
				s := h.runFail("a")
				rtEq(h.t, "ended", s.WorkflowEnded, true)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowFailed)
				h.wantStates("a=failed b=cancelled c=cancelled d=cancelled")
				for _, n := range []string{"b", "c", "d"} {
					rtEq(h.t, "error of "+n, h.task(n).Error, weir.ReasonTextFailFast)
				}
				rtSameIDs(h.t, "claim", h.claimIDs(3, "b", "c", "d"), nil)
			},
		},
		{
			name: "FailFast does not stop a running task, which may still complete",
			plan: rtFailFast(rtPlan(rtT("a"), rtT("b"))),
			run: func(h *rtHarness) {
				cb := h.start("b")
				h.runFail("a")
				h.wantStates("a=failed b=running")
				rtEq(h.t, "heartbeat says cancel", h.heartbeat(cb, time.Minute).Cancel, false)
				s := h.complete(cb, "")
				rtEq(h.t, "b", s.State, weir.Completed)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowFailed)
			},
		},
		{
			name: "FailFast spares Always tasks, which run when their dependencies end",
			plan: rtFailFast(rtPlan(rtT("a"), rtT("b"), rtAlways(rtT("f", "b")), rtT("g", "b"))),
			run: func(h *rtHarness) {
				s := h.runFail("a")
				h.wantPushed("failure of a", s.Pushed, h.tj("f"))
				h.wantStates("a=failed b=cancelled f=queued g=cancelled")
				cf := h.start("f")
				rtDeepEq(h.t, "deps of f", cf.Deps, []weir.DepOutcome{{Task: "b", State: weir.Cancelled, Error: weir.ReasonTextFailFast}})
				rtEq(h.t, "workflow", h.complete(cf, "").WorkflowState, weir.WorkflowFailed)
			},
		},
		{
			name: "FailFast fires only once: a retry scheduled after it fired is not cancelled by a later failure",
			plan: rtFailFast(rtPlan(rtT("a"), rtT("b"), rtAttempts(3, rtT("c")))),
			run: func(h *rtHarness) {
				ca, cb, cc := h.start("a"), h.start("b"), h.start("c")
				h.finishOne(rtFatal(ca, "first"))
				s := h.fail(cc, "retry me")
				rtEq(h.t, "c retried", s.State, weir.Queued)
				s = h.finishOne(rtFatal(cb, "second"))
				rtEq(h.t, "workflow after the second failure", s.WorkflowState, weir.WorkflowRunning)
				h.wantStates("a=failed b=failed c=queued")
				h.advance(time.Second)
				s = h.run("c")
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowFailed)
				rtEq(h.t, "attempts of c", h.task("c").Attempt, 2)
			},
		},
		{
			name: "FailFast cancels a task waiting for its retry",
			plan: rtFailFast(rtPlan(rtT("a"), rtAttempts(2, rtT("b")))),
			run: func(h *rtHarness) {
				rtEq(h.t, "b retried", h.fail(h.start("b"), "flaky").State, weir.Queued)
				h.runFail("a")
				h.wantStates("a=failed b=cancelled")
				rtEq(h.t, "error of b", h.task("b").Error, weir.ReasonTextFailFast)
				rtDeepEq(h.t, "queue b", h.m.QueueContents(h.now, "b"), QueueContents{})
				rtEq(h.t, "workflow", h.wfState(), weir.WorkflowFailed)
			},
		},
		{
			name: "FailFast ignores an absorbed failure",
			plan: rtFailFast(rtPlan(rtT("a"), rtAlways(rtT("f", "a")), rtT("r"))),
			run: func(h *rtHarness) {
				h.wantPushed("failure of a", h.runFail("a").Pushed, h.tj("f"))
				h.wantStates("a=failed f=queued r=queued")
				h.run("r")
				rtEq(h.t, "workflow", h.run("f").WorkflowState, weir.WorkflowCompleted)
			},
		},
		{
			name: "without FailFast a failure leaves unrelated tasks running",
			plan: rtPlan(rtT("a"), rtT("b"), rtT("c", "b")),
			run: func(h *rtHarness) {
				h.runFail("a")
				h.wantStates("a=failed b=queued c=waiting")
				h.run("b")
				rtEq(h.t, "workflow", h.run("c").WorkflowState, weir.WorkflowFailed)
			},
		},
	})
}

func TestCompensationRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "saga: the undo of A waits for the undo of C through B, which has no undo",
			plan: rtPlan(rtUndoable(rtT("a")), rtT("b", "a"), rtUndoable(rtT("c", "b")), rtT("d", "c")),
			run: func(h *rtHarness) {
				h.run("a")
				h.run("b")
				h.run("c")
				s := h.runFail("d")
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompensating)
				rtEq(h.t, "ended", s.WorkflowEnded, false)
				h.wantPushed("failure of d", s.Pushed, h.uj("c"))
				w := h.workflow()
				rtEq(h.t, "reason", w.Reason, weir.ReasonFailure)
				rtEq(h.t, "undo of a", w.Tasks[0].Undo.State, weir.Pending)
				rtEq(h.t, "undo of b", w.Tasks[1].Undo == nil, true)
				rtEq(h.t, "undo of c", w.Tasks[2].Undo.State, weir.Queued)
				rtSameIDs(h.t, "undo-a queue", h.claimIDs(1, "undo-a"), nil)
				cu := h.startUndo("c")
				rtEq(h.t, "undo job flag", cu.Job.Undo, true)
				rtEq(h.t, "undo job task", cu.Job.Task, "c")
				rtDeepEq(h.t, "undo payload", cu.Job.Payload, []byte("u:c"))
				rtDeepEq(h.t, "undo deps", cu.Deps, []weir.DepOutcome{{Task: "c", State: weir.Completed, Result: []byte("r:c")}})
				h.wantPushed("undo of c", h.complete(cu, "").Pushed, h.uj("a"))
				s = h.runUndo("a")
				rtEq(h.t, "ended", s.WorkflowEnded, true)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompensated)
			},
		},
		{
			name: "siblings compensate in parallel, their undos pushed in reverse plan order",
			plan: rtPlan(
				rtUndoIn("u", rtT("a")), rtUndoIn("u", rtT("b", "a")), rtUndoIn("u", rtT("c", "a")),
				rtT("d", "b", "c")),
			run: func(h *rtHarness) {
				h.run("a")
				h.run("b")
				h.run("c")
				h.wantPushed("failure of d", h.runFail("d").Pushed, h.uj("c"), h.uj("b"))
				rtSameIDs(h.t, "undo queue", h.ready("u"), []string{h.uj("c"), h.uj("b")})
				cc, cb := h.startUndo("c"), h.startUndo("b")
				h.wantPushed("undo of b", h.complete(cb, "").Pushed)
				rtEq(h.t, "undo of a while c's runs", h.task("a").Undo.State, weir.Pending)
				h.wantPushed("undo of c", h.complete(cc, "").Pushed, h.uj("a"))
				rtEq(h.t, "workflow", h.runUndo("a").WorkflowState, weir.WorkflowCompensated)
			},
		},
		{
			name: "a failed undo ends compensation_failed while the other undos still run",
			plan: rtPlan(
				rtUndoable(rtT("a")), rtUndoable(rtT("b", "a")), rtUndoable(rtT("c", "a")),
				rtT("d", "b", "c")),
			run: func(h *rtHarness) {
				h.run("a")
				h.run("b")
				h.run("c")
				h.wantPushed("failure of d", h.runFail("d").Pushed, h.uj("c"), h.uj("b"))
				s := h.failUndo("c")
				h.wantPushed("failed undo of c", s.Pushed)
				rtEq(h.t, "workflow after the failed undo", s.WorkflowState, weir.WorkflowCompensating)
				c := h.task("c")
				rtEq(h.t, "undo of c", c.Undo.State, weir.Failed)
				rtEq(h.t, "undo error of c", c.Undo.Error, "undo boom c")
				h.wantPushed("undo of b", h.runUndo("b").Pushed, h.uj("a"))
				s = h.runUndo("a")
				rtEq(h.t, "ended", s.WorkflowEnded, true)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompensationFailed)
				rtEq(h.t, "undo of a", h.task("a").Undo.State, weir.Completed)
			},
		},
		{
			name: "a cancelled pending undo counts as a failed compensation and unblocks nothing twice",
			plan: rtPlan(rtUndoable(rtT("a")), rtUndoable(rtT("c", "a")), rtT("d", "c")),
			run: func(h *rtHarness) {
				h.run("a")
				h.run("c")
				h.runFail("d")
				r := h.cancelJob(h.uj("a"))
				rtSameIDs(h.t, "cancelled", r.Cancelled, []string{h.uj("a")})
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowCompensating)
				s := h.runUndo("c")
				h.wantPushed("undo of c", s.Pushed)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompensationFailed)
			},
		},
		{
			name: "a failure with no undo to run ends the workflow plainly failed",
			plan: rtPlan(rtUndoable(rtT("a")), rtT("b", "a")),
			run: func(h *rtHarness) {
				s := h.runFail("a")
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowFailed)
				w := h.workflow()
				rtEq(h.t, "reason", w.Reason, weir.Reason(""))
				rtEq(h.t, "undo of a", w.Tasks[0].Undo.State, weir.State(""))
				_, err := h.m.GetJob(h.now, h.uj("a"))
				rtErrIs(h.t, "undo job", err, weir.ErrNotFound)
			},
		},
		{
			name: "only completed tasks are compensated",
			plan: rtPlan(rtUndoable(rtT("a")), rtUndoable(rtT("b")), rtT("c", "a")),
			run: func(h *rtHarness) {
				h.run("a")
				s := h.runFail("b")
				rtEq(h.t, "workflow while c is queued", s.WorkflowState, weir.WorkflowRunning)
				s = h.run("c")
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompensating)
				h.wantPushed("end of c", s.Pushed, h.uj("a"))
				rtEq(h.t, "undo of b", h.task("b").Undo.State, weir.State(""))
				_, err := h.m.GetJob(h.now, h.uj("b"))
				rtErrIs(h.t, "undo job of b", err, weir.ErrNotFound)
			},
		},
		{
			name: "an undo runs with its task's priority and retry policy",
			plan: rtPlan(
				func() TaskSpec {
					t := rtUndoable(rtT("a"))
					t.Priority, t.MaxAttempts, t.Backoff = 7, 2, 3*time.Second
					return t
				}(),
				rtT("b", "a")),
			run: func(h *rtHarness) {
				h.run("a")
				h.runFail("b")
				cu := h.startUndo("a")
				rtEq(h.t, "priority", cu.Job.Priority, 7)
				rtEq(h.t, "attempts", cu.Job.MaxAttempts, 2)
				rtEq(h.t, "queue", cu.Job.Queue, "undo-a")
				rtEq(h.t, "id", cu.Job.ID, weir.UndoJobID(rtWF, "a"))
				s := h.fail(cu, "flaky")
				rtEq(h.t, "retried", s.State, weir.Queued)
				rtEq(h.t, "run at", s.RunAt, h.now.Add(3*time.Second))
				h.advance(3 * time.Second)
				s = h.runUndo("a")
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompensated)
				rtEq(h.t, "undo attempts", h.task("a").Undo.Attempt, 2)
			},
		},
	})
}

func TestCancelRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "cancel ends waiting and queued tasks at once, Always tasks too",
			plan: rtPlan(rtT("a"), rtT("b", "a"), rtAlways(rtT("f", "b"))),
			run: func(h *rtHarness) {
				r := h.cancel(nil)
				rtSameIDs(h.t, "cancelled", r.Cancelled, []string{h.tj("a"), h.tj("b"), h.tj("f")})
				rtSameIDs(h.t, "stopping", r.Stopping, nil)
				h.wantPushed("cancel", r.Pushed)
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowCancelled)
				h.wantStates("a=cancelled b=cancelled f=cancelled")
				rtEq(h.t, "error of f", h.task("f").Error, weir.ReasonTextWorkflowCancelled)
				rtSameIDs(h.t, "queue a", h.ready("a"), nil)
				w := h.workflow()
				rtEq(h.t, "cancel requested", w.CancelRequested, true)
				rtEq(h.t, "ended at", w.EndedAt, h.now)
			},
		},
		{
			name: "cancel removes a delayed retry from its queue",
			plan: rtPlan(rtAttempts(2, rtT("a"))),
			run: func(h *rtHarness) {
				h.fail(h.start("a"), "again")
				rtEq(h.t, "delayed before", len(h.m.QueueContents(h.now, "a").Delayed), 1)
				rtSameIDs(h.t, "cancelled", h.cancel(nil).Cancelled, []string{h.tj("a")})
				rtEq(h.t, "queue after", reflect.DeepEqual(h.m.QueueContents(h.now, "a"), QueueContents{}), true)
				h.advance(time.Hour)
				rtSameIDs(h.t, "claim", h.claimIDs(1, "a"), nil)
			},
		},
		{
			name: "cancel tells a running task to stop; its failed attempt then ends it cancelled, never retried",
			plan: rtPlan(rtAttempts(3, rtT("a")), rtT("b", "a")),
			run: func(h *rtHarness) {
				ca := h.start("a")
				r := h.cancel(nil)
				rtSameIDs(h.t, "cancelled", r.Cancelled, []string{h.tj("b")})
				rtSameIDs(h.t, "stopping", r.Stopping, []string{h.tj("a")})
				rtEq(h.t, "workflow while a runs", r.WorkflowState, weir.WorkflowRunning)
				hb := h.heartbeat(ca, time.Minute)
				rtEq(h.t, "heartbeat cancel", hb.Cancel, true)
				rtEq(h.t, "heartbeat lost", hb.Lost, false)
				rtEq(h.t, "job cancel requested", h.job(h.tj("a")).CancelRequested, true)
				s := h.fail(ca, "context canceled")
				rtEq(h.t, "a", s.State, weir.Cancelled)
				rtEq(h.t, "ended", s.WorkflowEnded, true)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCancelled)
				rtEq(h.t, "attempts", h.task("a").Attempt, 1)
				h.advance(time.Hour)
				rtSameIDs(h.t, "claim", h.claimIDs(1, "a"), nil)
			},
		},
		{
			name: "a running task that completes after the cancel ends completed",
			plan: rtPlan(rtUndoable(rtT("a")), rtT("b", "a")),
			run: func(h *rtHarness) {
				ca := h.start("a")
				h.cancel(rtBool(false))
				s := h.complete(ca, "done")
				rtEq(h.t, "a", s.State, weir.Completed)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCancelled)
				h.wantStates("a=completed b=cancelled")
				rtEq(h.t, "undo of a", h.task("a").Undo.State, weir.State(""))
			},
		},
		{
			name: "a running task released after the cancel ends cancelled",
			plan: rtPlan(rtT("a")),
			run: func(h *rtHarness) {
				ca := h.start("a")
				h.cancel(nil)
				s := h.finishOne(Outcome{JobID: ca.Job.ID, Token: ca.Lease.Token, Kind: OutcomeReleased})
				rtEq(h.t, "a", s.State, weir.Cancelled)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCancelled)
			},
		},
		{
			name: "cancel with undo compensates the completed tasks, reason cancel",
			plan: rtUndoOnCancel(rtPlan(rtUndoable(rtT("a")), rtUndoable(rtT("b", "a")))),
			run: func(h *rtHarness) {
				h.run("a")
				r := h.cancel(nil)
				rtSameIDs(h.t, "cancelled", r.Cancelled, []string{h.tj("b")})
				h.wantPushed("cancel", r.Pushed, h.uj("a"))
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowCompensating)
				w := h.workflow()
				rtEq(h.t, "reason", w.Reason, weir.ReasonCancel)
				rtEq(h.t, "cancel undo", w.CancelUndo, true)
				rtEq(h.t, "undo of b", w.Tasks[1].Undo.State, weir.State(""))
				rtEq(h.t, "workflow", h.runUndo("a").WorkflowState, weir.WorkflowCompensated)
			},
		},
		{
			name: "cancel with undo waits for running tasks, then compensates them too",
			plan: rtPlan(rtUndoable(rtT("a")), rtUndoable(rtT("b"))),
			run: func(h *rtHarness) {
				h.run("a")
				cb := h.start("b")
				r := h.cancel(rtBool(true))
				h.wantPushed("cancel", r.Pushed)
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowRunning)
				s := h.complete(cb, "")
				h.wantPushed("late completion", s.Pushed, h.uj("b"), h.uj("a"))
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompensating)
			},
		},
		{
			name: "cancel without undo ends cancelled and runs no undo",
			plan: rtUndoOnCancel(rtPlan(rtUndoable(rtT("a")), rtT("b", "a"))),
			run: func(h *rtHarness) {
				h.run("a")
				r := h.cancel(rtBool(false))
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowCancelled)
				h.wantPushed("cancel", r.Pushed)
				rtEq(h.t, "cancel undo", h.workflow().CancelUndo, false)
				_, err := h.m.GetJob(h.now, h.uj("a"))
				rtErrIs(h.t, "undo job", err, weir.ErrNotFound)
			},
		},
		{
			name: "cancel with undo but nothing to undo ends cancelled",
			plan: rtPlan(rtT("a"), rtUndoable(rtT("b", "a"))),
			run: func(h *rtHarness) {
				h.run("a")
				r := h.cancel(rtBool(true))
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowCancelled)
				rtEq(h.t, "reason", h.workflow().Reason, weir.Reason(""))
			},
		},
		{
			name: "UndoOnCancel is fixed at submit: another value is another plan, and cancel uses the submitted one",
			plan: rtPlan(rtUndoable(rtT("a")), rtT("b", "a")),
			run: func(h *rtHarness) {
				h.run("a")
				_, err := h.m.Submit(h.now, SubmitParams{Plan: rtUndoOnCancel(rtPlan(rtUndoable(rtT("a")), rtT("b", "a")))})
				rtErrIs(h.t, "resubmit with UndoOnCancel", err, weir.ErrWorkflowExists)
				r := h.cancel(nil)
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowCancelled)
				w := h.workflow()
				rtEq(h.t, "undo on cancel", w.UndoOnCancel, false)
				rtEq(h.t, "cancel undo", w.CancelUndo, false)
			},
		},
		{
			name: "a failure before the cancel keeps its compensation, reason failure",
			plan: rtPlan(rtUndoable(rtT("a")), rtT("b"), rtT("c")),
			run: func(h *rtHarness) {
				h.run("a")
				cc := h.start("c")
				rtEq(h.t, "workflow after b failed", h.runFail("b").WorkflowState, weir.WorkflowRunning)
				r := h.cancel(rtBool(false))
				rtSameIDs(h.t, "stopping", r.Stopping, []string{h.tj("c")})
				s := h.fail(cc, "stopped")
				rtEq(h.t, "c", s.State, weir.Cancelled)
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompensating)
				h.wantPushed("end of c", s.Pushed, h.uj("a"))
				rtEq(h.t, "reason", h.workflow().Reason, weir.ReasonFailure)
				rtEq(h.t, "workflow", h.runUndo("a").WorkflowState, weir.WorkflowCompensated)
			},
		},
		{
			name: "a second cancel has no effect",
			plan: rtUndoOnCancel(rtPlan(rtUndoable(rtT("a")))),
			run: func(h *rtHarness) {
				ca := h.start("a")
				first := h.cancel(rtBool(false))
				rtSameIDs(h.t, "first stopping", first.Stopping, []string{h.tj("a")})
				second := h.cancel(rtBool(true))
				rtDeepEq(h.t, "second cancel", second, CancelResult{WorkflowState: weir.WorkflowRunning})
				rtEq(h.t, "cancel undo", h.workflow().CancelUndo, false)
				rtEq(h.t, "workflow", h.complete(ca, "").WorkflowState, weir.WorkflowCancelled)
			},
		},
		{
			name: "cancel of a compensating workflow has no effect",
			plan: rtPlan(rtUndoable(rtT("a")), rtT("b", "a")),
			run: func(h *rtHarness) {
				h.run("a")
				h.runFail("b")
				r := h.cancel(rtBool(false))
				rtDeepEq(h.t, "cancel", r, CancelResult{WorkflowState: weir.WorkflowCompensating})
				w := h.workflow()
				rtEq(h.t, "cancel requested", w.CancelRequested, false)
				rtEq(h.t, "undo of a", w.Tasks[0].Undo.State, weir.Queued)
				rtEq(h.t, "workflow", h.runUndo("a").WorkflowState, weir.WorkflowCompensated)
			},
		},
		{
			name: "cancel of an ended workflow is ErrWorkflowEnded",
			plan: rtPlan(rtT("a")),
			run: func(h *rtHarness) {
				h.run("a")
				r, err := h.m.CancelWorkflow(h.now, CancelWorkflowParams{ID: rtWF})
				rtErrIs(h.t, "cancel", err, weir.ErrWorkflowEnded)
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowCompleted)
				rtEq(h.t, "cancel requested", h.workflow().CancelRequested, false)
			},
		},
		{
			name: "cancel of an unknown workflow is ErrNotFound",
			run: func(h *rtHarness) {
				_, err := h.m.CancelWorkflow(h.now, CancelWorkflowParams{ID: "nope"})
				rtErrIs(h.t, "cancel", err, weir.ErrNotFound)
			},
		},
	})
}

func TestFinishRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "finishing again with the same token returns the same wake-ups and changes nothing",
			plan: rtPlan(rtT("a"), rtT("b", "a"), rtT("c", "a")),
			run: func(h *rtHarness) {
				ca := h.start("a")
				o := rtDone(ca, "r:a")
				first := h.finish(o)
				h.wantPushed("first finish", first.Settled[0].Pushed, h.tj("b"), h.tj("c"))
				h.start("b")
				h.advance(time.Second)
				again := h.finish(o)
				rtDeepEq(h.t, "repeated finish", again, first)
				h.wantStates("a=completed b=running c=queued")
				rtSameIDs(h.t, "queue c", h.ready("c"), []string{h.tj("c")})
				rtSameIDs(h.t, "queue b", h.ready("b"), nil)
				rtEq(h.t, "ended at", h.job(h.tj("a")).EndedAt, rtT0)
			},
		},
		{
			name: "finishing a failed attempt again does not schedule a second retry",
			plan: rtPlan(rtAttempts(3, rtT("a"))),
			run: func(h *rtHarness) {
				o := rtFailed(h.start("a"), "x")
				first := h.finish(o)
				again := h.finish(o)
				rtDeepEq(h.t, "repeated finish", again, first)
				rtEq(h.t, "delayed", len(h.m.QueueContents(h.now, "a").Delayed), 1)
				rtEq(h.t, "attempt", h.job(h.tj("a")).Attempt, 1)
			},
		},
		{
			name: "finishing a job nobody knows is ErrLeaseLost",
			run: func(h *rtHarness) {
				r := h.finish(Outcome{JobID: "nope/a", Token: "1", Kind: OutcomeCompleted})
				rtErrIs(h.t, "settled", r.Settled[0].Err, weir.ErrLeaseLost)
				rtEq(h.t, "job id", r.Settled[0].JobID, "nope/a")
				rtEq(h.t, "state", r.Settled[0].State, weir.State(""))
				h.wantPushed("pushes", r.Settled[0].Pushed)
			},
		},
		{
			name: "finishing a job whose workflow's retention passed is ErrLeaseLost and recreates nothing",
			cfg:  rtConfig(func(c *Config) { c.Retention = time.Minute }),
			plan: rtPlan(rtT("a")),
			run: func(h *rtHarness) {
				o := rtDone(h.start("a"), "r")
				first := h.finish(o).Settled[0]
				h.advance(time.Minute - time.Millisecond)
				rtDeepEq(h.t, "repeat within retention", h.finish(o).Settled[0], first)
				h.advance(time.Millisecond)
				s := h.finish(o).Settled[0]
				rtErrIs(h.t, "repeat after retention", s.Err, weir.ErrLeaseLost)
				_, err := h.m.GetWorkflow(h.now, rtWF)
				rtErrIs(h.t, "workflow", err, weir.ErrNotFound)
				_, err = h.m.GetJob(h.now, h.tj("a"))
				rtErrIs(h.t, "job", err, weir.ErrNotFound)
			},
		},
		{
			name: "a stale lease token changes nothing",
			plan: rtPlan(rtAttempts(2, rtT("a"))),
			run: func(h *rtHarness) {
				old := h.start("a")
				h.advance(rtLease)
				h.expire()
				h.advance(time.Second)
				cur := h.start("a")
				s := h.finish(rtDone(old, "late")).Settled[0]
				rtErrIs(h.t, "stale finish", s.Err, weir.ErrLeaseLost)
				h.wantPushed("stale finish", s.Pushed)
				j := h.job(h.tj("a"))
				rtEq(h.t, "state", j.State, weir.Running)
				rtEq(h.t, "token", j.Lease.Token, cur.Lease.Token)
				rtEq(h.t, "attempt", j.Attempt, 2)
				rtEq(h.t, "result", j.Result == nil, true)
				rtEq(h.t, "stale heartbeat", h.heartbeat(old, time.Minute).Lost, true)
				rtEq(h.t, "deadline", h.job(h.tj("a")).Lease.Deadline, cur.Lease.Deadline)
				rtEq(h.t, "workflow", h.complete(cur, "ok").WorkflowState, weir.WorkflowCompleted)
			},
		},
		{
			name: "another token for a finished job is ErrLeaseLost while the finishing token still gets its Settled",
			plan: rtPlan(rtT("a")),
			run: func(h *rtHarness) {
				ca := h.start("a")
				first := h.complete(ca, "r")
				bad := rtDone(ca, "r")
				bad.Token = "not-" + ca.Lease.Token
				rtErrIs(h.t, "other token", h.finish(bad).Settled[0].Err, weir.ErrLeaseLost)
				rtDeepEq(h.t, "same token", h.finish(rtDone(ca, "r")).Settled[0], first)
			},
		},
		{
			name: "a stale outcome fails alone and the other outcomes of the call settle",
			plan: rtPlan(rtT("a"), rtT("b")),
			run: func(h *rtHarness) {
				ca, cb := h.start("a"), h.start("b")
				stale := rtDone(ca, "")
				stale.Token = "999"
				r := h.finish(stale, rtDone(cb, ""))
				rtErrIs(h.t, "stale", r.Settled[0].Err, weir.ErrLeaseLost)
				rtEq(h.t, "other", r.Settled[1].Err, nil)
				h.wantStates("a=running b=completed")
			},
		},
		{
			name: "finish then claim in one call claims after the outcomes settled",
			plan: rtPlan(rtT("a"), rtT("b", "a")),
			run: func(h *rtHarness) {
				ca := h.start("a")
				r, err := h.m.Finish(h.now, FinishParams{
					Outcomes: []Outcome{rtDone(ca, "")},
					Claim:    &ClaimParams{Queues: []string{"b"}, Max: 2, Lease: rtLease},
				})
				if err != nil {
					h.t.Fatal(err)
				}
				rtSameIDs(h.t, "claimed", rtClaimedIDs(r.Claimed), []string{h.tj("b")})
				rtEq(h.t, "attempt", r.Claimed[0].Job.Attempt, 1)
			},
		},
	})
}

func TestRetryRules(t *testing.T) {
	cfg := rtConfig(func(c *Config) { c.Limits.MaxBackoff = 5 * time.Second })
	rtRun(t, []rtCase{
		{
			name: "attempt n waits Backoff·2^(n-1), capped at MaxBackoff, and is not claimed before",
			cfg:  cfg,
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 6, Backoff: time.Second})
				for n, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
					c := h.claimJob("q", "j")
					rtEq(h.t, "attempt", c.Job.Attempt, n+1)
					s := h.fail(c, "e"+strconv.Itoa(n+1))
					rtEq(h.t, "state", s.State, weir.Queued)
					rtEq(h.t, "run at after attempt "+strconv.Itoa(n+1), s.RunAt, h.now.Add(wait))
					rtEq(h.t, "job run at", h.job("j").RunAt, s.RunAt)
					h.advance(wait - time.Millisecond)
					rtSameIDs(h.t, "claim 1ms early", h.claimIDs(1, "q"), nil)
					h.advance(time.Millisecond)
				}
				s := h.fail(h.claimJob("q", "j"), "last")
				rtEq(h.t, "state", s.State, weir.Failed)
				rtEq(h.t, "run at", s.RunAt, time.Time{})
				j := h.job("j")
				rtEq(h.t, "attempt", j.Attempt, 6)
				rtEq(h.t, "error", j.Error, "last")
				rtEq(h.t, "ended at", j.EndedAt, h.now)
			},
		},
		{
			name: "by default a job has one attempt: its first failure is final",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q"})
				rtEq(h.t, "state", h.fail(h.claimJob("q", "j"), "x").State, weir.Failed)
				rtEq(h.t, "max attempts", h.job("j").MaxAttempts, 1)
			},
		},
		{
			name: "by default the backoff is one second",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 2})
				rtEq(h.t, "run at", h.fail(h.claimJob("q", "j"), "x").RunAt, h.now.Add(weir.DefaultBackoff))
			},
		},
		{
			name: "RetryAfter replaces the backoff for that retry only",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 3, Backoff: 10 * time.Second})
				o := rtFailed(h.claimJob("q", "j"), "x")
				o.RetryAfter = 250 * time.Millisecond
				rtEq(h.t, "run at", h.finishOne(o).RunAt, h.now.Add(250*time.Millisecond))
				h.advance(250 * time.Millisecond)
				rtEq(h.t, "next run at", h.fail(h.claimJob("q", "j"), "y").RunAt, h.now.Add(20*time.Second))
			},
		},
		{
			name: "a RetryAfter that is not whole milliseconds is rounded up, so under 1ms still replaces the backoff",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 3, Backoff: 10 * time.Second})
				o := rtFailed(h.claimJob("q", "j"), "x")
				o.RetryAfter = 500 * time.Microsecond
				rtEq(h.t, "run at", h.finishOne(o).RunAt, h.now.Add(time.Millisecond))
				h.advance(time.Millisecond)
				o = rtFailed(h.claimJob("q", "j"), "y")
				o.RetryAfter = 1500 * time.Microsecond
				rtEq(h.t, "run at", h.finishOne(o).RunAt, h.now.Add(2*time.Millisecond))
			},
		},
		{
			name: "a non-retryable error is final at once",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 5})
				s := h.finishOne(rtFatal(h.claimJob("q", "j"), "bad input"))
				rtEq(h.t, "state", s.State, weir.Failed)
				rtEq(h.t, "attempt", h.job("j").Attempt, 1)
			},
		},
		{
			name: "a cancelled outcome is final and never retried",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 5})
				c := h.claimJob("q", "j")
				s := h.finishOne(Outcome{JobID: "j", Token: c.Lease.Token, Kind: OutcomeCancelled, Error: "gave up"})
				rtEq(h.t, "state", s.State, weir.Cancelled)
				rtEq(h.t, "error", h.job("j").Error, "gave up")
			},
		},
		{
			name: "a released job is ready again at once and its attempt is not counted",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 1})
				c := h.claimJob("q", "j")
				s := h.finishOne(Outcome{JobID: "j", Token: c.Lease.Token, Kind: OutcomeReleased})
				rtEq(h.t, "state", s.State, weir.Queued)
				h.wantPushed("release", s.Pushed, "j")
				rtEq(h.t, "attempt", h.job("j").Attempt, 0)
				c = h.claimJob("q", "j")
				rtEq(h.t, "attempt", c.Job.Attempt, 1)
				rtEq(h.t, "state", h.fail(c, "x").State, weir.Failed)
			},
		},
		{
			name: "a workflow task out of attempts fails and its error is kept, cut at MaxError",
			cfg:  rtConfig(func(c *Config) { c.Limits.MaxError = 4 }),
			plan: rtPlan(rtAttempts(2, rtT("a"))),
			run: func(h *rtHarness) {
				rtEq(h.t, "first", h.fail(h.start("a"), "first").State, weir.Queued)
				rtEq(h.t, "state during retry", h.task("a").State, weir.Queued)
				h.advance(time.Second)
				s := h.fail(h.start("a"), "second")
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowFailed)
				a := h.task("a")
				rtEq(h.t, "error", a.Error, "seco")
				rtEq(h.t, "attempt", a.Attempt, 2)
			},
		},
	})
}

func TestLeaseRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "with no expiry budget an expired lease is a counted attempt with reason lease_expired, final after MaxAttempts",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 2, MaxExpiries: weir.NoExpiries})
				c := h.claimJob("q", "j")
				h.advance(rtLease - time.Millisecond)
				r := h.expire()
				rtEq(h.t, "expired before the deadline", len(r.Expired), 0)
				h.advance(time.Millisecond)
				r = h.expire()
				rtEq(h.t, "expired", len(r.Expired), 1)
				rtEq(h.t, "expired job", r.Expired[0].JobID, "j")
				rtEq(h.t, "expired state", r.Expired[0].State, weir.Queued)
				rtEq(h.t, "expired run at", r.Expired[0].RunAt, h.now.Add(time.Second))
				j := h.job("j")
				rtEq(h.t, "error", j.Error, weir.ReasonTextLeaseExpired)
				rtEq(h.t, "attempt", j.Attempt, 1)
				rtErrIs(h.t, "finish after expiry", h.finish(rtDone(c, "")).Settled[0].Err, weir.ErrLeaseLost)
				h.advance(time.Second)
				c = h.claimJob("q", "j")
				rtEq(h.t, "second attempt", c.Job.Attempt, 2)
				h.advance(rtLease)
				r = h.expire()
				rtEq(h.t, "final state", r.Expired[0].State, weir.Failed)
				j = h.job("j")
				rtEq(h.t, "state", j.State, weir.Failed)
				rtEq(h.t, "error", j.Error, weir.ReasonTextLeaseExpired)
			},
		},
		{
			name: "an expiry within the budget queues the job again at once, uncounted; the next one counts",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", Backoff: time.Second})
				c := h.claimJob("q", "j")
				h.advance(rtLease)
				r := h.expire()
				rtEq(h.t, "expired state", r.Expired[0].State, weir.Queued)
				rtEq(h.t, "expired run at", r.Expired[0].RunAt, time.Time{})
				rtEq(h.t, "expired pushed", len(r.Expired[0].Pushed), 1)
				j := h.job("j")
				rtEq(h.t, "expiries", j.Expiries, 1)
				rtEq(h.t, "max expiries", j.MaxExpiries, weir.DefaultMaxExpiries)
				rtEq(h.t, "error", j.Error, weir.ReasonTextLeaseExpired)
				rtErrIs(h.t, "finish after expiry", h.finish(rtDone(c, "")).Settled[0].Err, weir.ErrLeaseLost)
				c = h.claimJob("q", "j")
				rtEq(h.t, "second attempt", c.Job.Attempt, 2)
				rtEq(h.t, "claimed expiries", c.Job.Expiries, 1)
				h.advance(rtLease)
				r = h.expire()
				rtEq(h.t, "second expiry", r.Expired[0].State, weir.Failed)
				rtEq(h.t, "expiries after", h.job("j").Expiries, 1)
			},
		},
		{
			name: "a task that keeps losing its lease ends failed and fails its workflow",
			plan: rtPlan(rtExpiries(weir.NoExpiries, rtAttempts(2, rtT("a"))), rtT("b", "a")),
			run: func(h *rtHarness) {
				h.start("a")
				h.advance(rtLease)
				h.expire()
				h.advance(time.Second)
				h.start("a")
				h.advance(rtLease)
				r := h.expire()
				rtEq(h.t, "workflow", r.Expired[0].WorkflowState, weir.WorkflowFailed)
				rtEq(h.t, "ended", r.Expired[0].WorkflowEnded, true)
				h.wantStates("a=failed b=cancelled")
				rtEq(h.t, "error", h.task("a").Error, weir.ReasonTextLeaseExpired)
			},
		},
		{
			name: "a claim expires the overdue leases of its queue before it takes jobs",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 2, Backoff: time.Millisecond, MaxExpiries: weir.NoExpiries})
				h.claimJob("q", "j")
				h.advance(rtLease)
				rtSameIDs(h.t, "claim at the deadline", h.claimIDs(1, "q"), nil)
				j := h.job("j")
				rtEq(h.t, "state", j.State, weir.Queued)
				rtEq(h.t, "error", j.Error, weir.ReasonTextLeaseExpired)
				h.advance(time.Millisecond)
				rtEq(h.t, "attempt", h.claimJob("q", "j").Job.Attempt, 2)
			},
		},
		{
			name: "a lease past its deadline that no sweep ended is still held",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q"})
				c := h.claimJob("q", "j")
				h.advance(time.Hour)
				hb := h.heartbeat(c, rtLease)
				rtEq(h.t, "lost", hb.Lost, false)
				rtEq(h.t, "deadline", hb.Deadline, h.now.Add(rtLease))
				h.advance(time.Hour)
				rtEq(h.t, "finish", h.complete(c, "late").State, weir.Completed)
			},
		},
		{
			name: "a heartbeat extends a live lease",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q"})
				c := h.claimJob("q", "j")
				h.advance(20 * time.Second)
				hb := h.heartbeat(c, rtLease)
				rtEq(h.t, "lost", hb.Lost, false)
				rtEq(h.t, "deadline", hb.Deadline, h.now.Add(rtLease))
				h.advance(rtLease - time.Millisecond)
				rtEq(h.t, "expired before the new deadline", len(h.expire().Expired), 0)
				rtEq(h.t, "state", h.complete(c, "").State, weir.Completed)
			},
		},
	})
}

func TestSubmitRules(t *testing.T) {
	base := func() Plan {
		return rtPlan(rtUndoable(rtT("a")), rtT("b", "a"))
	}
	rtRun(t, []rtCase{
		{
			name: "submitting the same plan again is a success with no effect",
			plan: base(),
			run: func(h *rtHarness) {
				h.run("a")
				before := h.workflow()
				h.advance(time.Second)
				r := h.submit(base())
				rtDeepEq(h.t, "resubmit", r, SubmitResult{})
				rtDeepEq(h.t, "workflow", h.workflow(), before)
				rtSameIDs(h.t, "queue a", h.ready("a"), nil)
				rtSameIDs(h.t, "queue b", h.ready("b"), []string{h.tj("b")})
			},
		},
		{
			name: "MaxAttempts 0 and 1, Backoff 0 and DefaultBackoff are the same plan",
			plan: base(),
			run: func(h *rtHarness) {
				p := base()
				p.Tasks[0].MaxAttempts, p.Tasks[0].Backoff = 1, weir.DefaultBackoff
				rtEq(h.t, "created", h.submit(p).Created, false)
				rtEq(h.t, "hash", PlanHash(p), PlanHash(base()))
			},
		},
		{
			name: "another plan under the same ID is ErrWorkflowExists and changes nothing",
			plan: base(),
			run: func(h *rtHarness) {
				before := h.workflow()
				for what, mod := range map[string]func(*Plan){
					"payload":        func(p *Plan) { p.Tasks[0].Payload = []byte("x") },
					"after":          func(p *Plan) { p.Tasks[1].After = nil },
					"always":         func(p *Plan) { p.Tasks[1].Always = true },
					"undo":           func(p *Plan) { p.Tasks[0].Undo = nil },
					"undo payload":   func(p *Plan) { p.Tasks[0].Undo.Payload = nil },
					"priority":       func(p *Plan) { p.Tasks[1].Priority = 1 },
					"attempts":       func(p *Plan) { p.Tasks[1].MaxAttempts = 2 },
					"timeout":        func(p *Plan) { p.Tasks[1].Timeout = time.Second },
					"queue":          func(p *Plan) { p.Tasks[1].Queue = "other" },
					"fail fast":      func(p *Plan) { p.FailFast = true },
					"undo on cancel": func(p *Plan) { p.UndoOnCancel = true },
					"one more task":  func(p *Plan) { p.Tasks = append(p.Tasks, rtT("c")) },
				} {
					p := base()
					mod(&p)
					_, err := h.m.Submit(h.now, SubmitParams{Plan: p})
					rtErrIs(h.t, what, err, weir.ErrWorkflowExists)
				}
				rtDeepEq(h.t, "workflow", h.workflow(), before)
				rtSameIDs(h.t, "queue a", h.ready("a"), []string{h.tj("a")})
			},
		},
		{
			name: "submit keeps its own copy of the plan",
			run: func(h *rtHarness) {
				p := rtPlan(rtUndoable(rtT("a")), rtT("b", "a"))
				p.Tasks[0].Payload = []byte("orig")
				h.submit(p)
				p.Tasks[0].Payload[0] = 'X'
				p.Tasks[0].Undo.Queue = "elsewhere"
				p.Tasks[1].Always = true
				p.Tasks[1].After[0] = "zz"
				rtEq(h.t, "same plan", h.submit(func() Plan {
					q := rtPlan(rtUndoable(rtT("a")), rtT("b", "a"))
					q.Tasks[0].Payload = []byte("orig")
					return q
				}()).Created, false)
				b := h.task("b")
				rtSameIDs(h.t, "after of b", b.After, []string{"a"})
				rtEq(h.t, "always of b", b.Always, false)
				rtEq(h.t, "undo queue of a", h.task("a").Undo.Queue, "undo-a")
				ca := h.start("a")
				rtDeepEq(h.t, "payload", ca.Job.Payload, []byte("orig"))
				h.finishOne(rtFatal(ca, "x"))
				h.wantStates("a=failed b=cancelled")
			},
		},
		{
			name: "enqueue keeps its own copy of the payload",
			run: func(h *rtHarness) {
				payload := []byte("orig")
				h.enqueue(JobSpec{ID: "j", Queue: "q", Payload: payload})
				payload[0] = 'X'
				rtDeepEq(h.t, "payload", h.claimJob("q", "j").Job.Payload, []byte("orig"))
				rtEq(h.t, "same spec", h.enqueue(JobSpec{ID: "j", Queue: "q", Payload: []byte("orig")}).Created, false)
			},
		},
		{
			name: "a snapshot is a copy: changing it changes nothing",
			plan: rtPlan(rtT("a"), rtT("b", "a")),
			run: func(h *rtHarness) {
				h.complete(h.start("a"), "res")
				w := h.workflow()
				w.Tasks[0].Result[0] = 'X'
				w.Tasks[1].After[0] = "zz"
				rtDeepEq(h.t, "result", h.task("a").Result, []byte("res"))
				rtSameIDs(h.t, "after", h.task("b").After, []string{"a"})
			},
		},
	})
}

func TestPlainJobRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "an enqueue with the same ID and spec has no effect",
			run: func(h *rtHarness) {
				s := JobSpec{ID: "j", Queue: "q", Payload: []byte("p"), MaxAttempts: 2}
				rtDeepEq(h.t, "first", h.enqueue(s), EnqueueResult{Created: true, State: weir.Queued})
				h.advance(time.Second)
				s.RunAt = h.now.Add(time.Hour) // RunAt is not part of the spec
				rtDeepEq(h.t, "second", h.enqueue(s), EnqueueResult{State: weir.Queued})
				rtSameIDs(h.t, "ready", h.ready("q"), []string{"j"})
				rtEq(h.t, "created at", h.job("j").CreatedAt, rtT0)
				h.complete(h.claimJob("q", "j"), "r")
				rtDeepEq(h.t, "after the end", h.enqueue(s), EnqueueResult{State: weir.Completed})
				rtSameIDs(h.t, "ready after the end", h.ready("q"), nil)
			},
		},
		{
			name: "an enqueue with the same ID and another spec is ErrJobExists",
			run: func(h *rtHarness) {
				s := JobSpec{ID: "j", Queue: "q", Payload: []byte("p")}
				h.enqueue(s)
				for what, mod := range map[string]func(*JobSpec){
					"queue":    func(s *JobSpec) { s.Queue = "r" },
					"payload":  func(s *JobSpec) { s.Payload = []byte("o") },
					"priority": func(s *JobSpec) { s.Priority = 3 },
					"attempts": func(s *JobSpec) { s.MaxAttempts = 3 },
					"backoff":  func(s *JobSpec) { s.Backoff = time.Minute },
					"timeout":  func(s *JobSpec) { s.Timeout = time.Minute },
				} {
					o := s
					mod(&o)
					_, err := h.m.Enqueue(h.now, EnqueueParams{Job: o})
					rtErrIs(h.t, what, err, weir.ErrJobExists)
				}
				rtDeepEq(h.t, "job payload", h.job("j").Payload, []byte("p"))
				rtEq(h.t, "queue r", len(h.m.QueueContents(h.now, "r").Ready), 0)
			},
		},
		{
			name: "CancelJob of a queued job ends it cancelled and takes it out of its queue",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q"})
				h.enqueue(JobSpec{ID: "later", Queue: "q", RunAt: h.now.Add(time.Minute)})
				r := h.cancelJob("j")
				rtDeepEq(h.t, "cancel", r, CancelResult{Cancelled: []string{"j"}, State: weir.Cancelled})
				r = h.cancelJob("later")
				rtEq(h.t, "cancel delayed", r.State, weir.Cancelled)
				rtDeepEq(h.t, "queue", h.m.QueueContents(h.now, "q"), QueueContents{})
				j := h.job("j")
				rtEq(h.t, "error", j.Error, weir.ReasonTextJobCancelled)
				rtEq(h.t, "ended at", j.EndedAt, h.now)
				h.advance(time.Hour)
				rtSameIDs(h.t, "claim", h.claimIDs(2, "q"), nil)
			},
		},
		{
			name: "CancelJob of a running job tells it to stop; its failed attempt then ends it cancelled",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 3})
				c := h.claimJob("q", "j")
				r := h.cancelJob("j")
				rtDeepEq(h.t, "cancel", r, CancelResult{Stopping: []string{"j"}, State: weir.Running})
				rtEq(h.t, "heartbeat", h.heartbeat(c, time.Minute).Cancel, true)
				rtEq(h.t, "state", h.fail(c, "stopped").State, weir.Cancelled)
			},
		},
		{
			name: "a running job that completes after CancelJob ends completed",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q"})
				c := h.claimJob("q", "j")
				h.cancelJob("j")
				rtEq(h.t, "state", h.complete(c, "r").State, weir.Completed)
				rtDeepEq(h.t, "result", h.job("j").Result, []byte("r"))
			},
		},
		{
			name: "CancelJob of an ended job is ErrJobEnded",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "ok", Queue: "q"})
				h.enqueue(JobSpec{ID: "bad", Queue: "q"})
				h.enqueue(JobSpec{ID: "off", Queue: "q"})
				h.complete(h.claimJob("q", "ok"), "")
				h.fail(h.claimJob("q", "bad"), "x")
				h.cancelJob("off")
				for id, want := range map[string]weir.State{"ok": weir.Completed, "bad": weir.Failed, "off": weir.Cancelled} {
					r, err := h.m.CancelJob(h.now, CancelJobParams{ID: id})
					rtErrIs(h.t, id, err, weir.ErrJobEnded)
					rtEq(h.t, id+" state", r.State, want)
					rtEq(h.t, id+" stored state", h.job(id).State, want)
				}
			},
		},
		{
			name: "CancelJob of an unknown job is ErrNotFound",
			run: func(h *rtHarness) {
				_, err := h.m.CancelJob(h.now, CancelJobParams{ID: "nope"})
				rtErrIs(h.t, "cancel", err, weir.ErrNotFound)
				_, err = h.m.GetJob(h.now, "nope")
				rtErrIs(h.t, "get", err, weir.ErrNotFound)
			},
		},
		{
			name: "CancelJob of a waiting task cancels it with the consequences of a cancelled task",
			plan: rtPlan(rtT("a"), rtT("b", "a"), rtT("c", "b"), rtAlways(rtT("f", "b"))),
			run: func(h *rtHarness) {
				r := h.cancelJob(h.tj("b"))
				rtSameIDs(h.t, "cancelled", r.Cancelled, []string{h.tj("b"), h.tj("c")})
				h.wantPushed("cancel of b", r.Pushed, h.tj("f"))
				rtEq(h.t, "workflow", r.WorkflowState, weir.WorkflowRunning)
				h.wantStates("a=queued b=cancelled c=cancelled f=queued")
				h.wantPushed("finish a", h.run("a").Pushed)
				rtEq(h.t, "workflow", h.run("f").WorkflowState, weir.WorkflowCompleted)
			},
		},
	})
}

func TestQueueRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "a lower priority number is claimed first, FIFO among equals",
			run: func(h *rtHarness) {
				for _, s := range []JobSpec{
					{ID: "p5", Priority: 5}, {ID: "p0a"}, {ID: "m3", Priority: -3},
					{ID: "p0b"}, {ID: "p5b", Priority: 5}, {ID: "p0c"},
				} {
					s.Queue = "q"
					h.enqueue(s)
				}
				want := []string{"m3", "p0a", "p0b", "p0c", "p5", "p5b"}
				rtSameIDs(h.t, "ready", h.ready("q"), want)
				rtSameIDs(h.t, "claimed", h.claimIDs(6, "q"), want)
			},
		},
		{
			name: "a retried job goes behind the jobs of its priority that were pushed before it became due",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "r", Queue: "q", MaxAttempts: 2, Backoff: time.Millisecond})
				c := h.claimJob("q", "r")
				h.enqueue(JobSpec{ID: "x", Queue: "q"})
				h.fail(c, "again")
				h.advance(time.Millisecond)
				rtSameIDs(h.t, "claimed", h.claimIDs(2, "q"), []string{"x", "r"})
			},
		},
		{
			name: "a workflow task runs with its priority",
			plan: rtPlan(rtOn("q", rtT("a")), rtOn("q", func() TaskSpec { t := rtT("b"); t.Priority = -1; return t }())),
			run: func(h *rtHarness) {
				rtSameIDs(h.t, "claimed", h.claimIDs(2, "q"), []string{h.tj("b"), h.tj("a")})
			},
		},
		{
			name: "a job with a RunAt is delayed until then",
			run: func(h *rtHarness) {
				r := h.enqueue(JobSpec{ID: "later", Queue: "q", RunAt: h.now.Add(5 * time.Second)})
				rtEq(h.t, "state", r.State, weir.Queued)
				h.enqueue(JobSpec{ID: "now", Queue: "q", RunAt: h.now.Add(-time.Second)})
				rtDeepEq(h.t, "queues", h.m.Queues(h.now), []weir.QueueInfo{{Name: "q", Ready: 1, Delayed: 1}})
				rtEq(h.t, "run at", h.job("later").RunAt, h.now.Add(5*time.Second))
				rtEq(h.t, "past run at", h.job("now").RunAt, time.Time{})
				rtSameIDs(h.t, "claimed", h.claimIDs(2, "q"), []string{"now"})
				h.advance(5*time.Second - time.Millisecond)
				rtSameIDs(h.t, "1ms early", h.claimIDs(1, "q"), nil)
				h.advance(time.Millisecond)
				rtSameIDs(h.t, "when due", h.claimIDs(1, "q"), []string{"later"})
			},
		},
		{
			name: "ExpireLeases makes due delayed jobs ready and reports them",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "b", Queue: "q", RunAt: h.now.Add(time.Second)})
				h.enqueue(JobSpec{ID: "a", Queue: "p", RunAt: h.now.Add(time.Second)})
				h.advance(time.Second)
				rtDeepEq(h.t, "due", h.expire().Due, []Pushed{{JobID: "a", Queue: "p"}, {JobID: "b", Queue: "q"}})
				rtSameIDs(h.t, "ready", h.ready("q"), []string{"b"})
			},
		},
		{
			name: "a paused queue is not claimed from until it is resumed",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "p1", Queue: "p"})
				h.enqueue(JobSpec{ID: "o1", Queue: "o"})
				if err := h.m.PauseQueue(h.now, "p"); err != nil {
					h.t.Fatal(err)
				}
				rtSameIDs(h.t, "claim while paused", h.claimIDs(2, "p", "o"), []string{"o1"})
				rtEq(h.t, "paused", h.m.Queues(h.now)[1].Paused, true)
				if err := h.m.ResumeQueue(h.now, "p"); err != nil {
					h.t.Fatal(err)
				}
				rtSameIDs(h.t, "claim after resume", h.claimIDs(2, "p", "o"), []string{"p1"})
			},
		},
		{
			name: "a claim drains its queues in the order given",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "a1", Queue: "a", Priority: 9})
				h.enqueue(JobSpec{ID: "b1", Queue: "b", Priority: -9})
				h.enqueue(JobSpec{ID: "a2", Queue: "a", Priority: 9})
				rtSameIDs(h.t, "claimed", h.claimIDs(2, "a", "b", "a"), []string{"a1", "a2"})
				rtSameIDs(h.t, "claimed", h.claimIDs(3, "a", "b"), []string{"b1"})
			},
		},
		{
			name: "purge ends a queue's waiting jobs cancelled, workflow tasks with their cascade",
			plan: rtPlan(rtOn("q", rtT("a")), rtT("r"), rtT("b", "a"), rtAlways(rtT("f", "a"))),
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "later", Queue: "q", RunAt: h.now.Add(time.Hour)})
				h.enqueue(JobSpec{ID: "plain", Queue: "q", Priority: -1})
				r, err := h.m.PurgeQueue(h.now, "q")
				if err != nil {
					h.t.Fatal(err)
				}
				rtSameIDs(h.t, "purged", r.Purged, []string{"plain", h.tj("a"), "later"})
				h.wantPushed("purge", r.Pushed, h.tj("f"))
				h.wantStates("a=cancelled r=queued b=cancelled f=queued")
				rtEq(h.t, "error of a", h.task("a").Error, weir.ReasonTextPurged)
				rtEq(h.t, "plain", h.job("plain").State, weir.Cancelled)
				rtDeepEq(h.t, "queue q", h.m.QueueContents(h.now, "q"), QueueContents{})
				h.run("r")
				rtEq(h.t, "workflow", h.run("f").WorkflowState, weir.WorkflowCompleted)
			},
		},
		{
			name: "purge leaves running jobs alone",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "run", Queue: "q"})
				c := h.claimJob("q", "run")
				r, err := h.m.PurgeQueue(h.now, "q")
				if err != nil {
					h.t.Fatal(err)
				}
				rtSameIDs(h.t, "purged", r.Purged, nil)
				rtEq(h.t, "state", h.complete(c, "").State, weir.Completed)
			},
		},
	})
}

func TestRetentionRules(t *testing.T) {
	hour := rtConfig(func(c *Config) { c.Retention = time.Hour })
	zero := rtConfig(func(c *Config) { c.Retention = 0 })
	rtRun(t, []rtCase{
		{
			name: "an ended workflow and its jobs are removed once its retention passed",
			cfg:  hour,
			plan: rtPlan(rtUndoable(rtT("a")), rtT("b", "a")),
			run: func(h *rtHarness) {
				h.run("a")
				h.runFail("b")
				h.advance(time.Minute)
				s := h.runUndo("a")
				rtEq(h.t, "workflow", s.WorkflowState, weir.WorkflowCompensated)
				ended := h.now
				w := h.workflow()
				rtEq(h.t, "expires at", w.ExpiresAt, ended.Add(time.Hour))
				rtEq(h.t, "job expires at", h.job(h.tj("a")).ExpiresAt, ended.Add(time.Hour))
				h.advance(time.Hour - time.Millisecond)
				h.workflow()
				h.advance(time.Millisecond)
				_, err := h.m.GetWorkflow(h.now, rtWF)
				rtErrIs(h.t, "workflow", err, weir.ErrNotFound)
				for _, id := range []string{h.tj("a"), h.tj("b"), h.uj("a")} {
					_, err := h.m.GetJob(h.now, id)
					rtErrIs(h.t, id, err, weir.ErrNotFound)
				}
				p, err := h.m.ListWorkflows(h.now, weir.ListParams{})
				if err != nil {
					h.t.Fatal(err)
				}
				rtEq(h.t, "listed", len(p.Workflows), 0)
				rtEq(h.t, "resubmit", h.submit(rtPlan(rtT("x"))).Created, true)
			},
		},
		{
			name: "an ended plain job is removed after its retention and its ID can be used again",
			cfg:  hour,
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q"})
				h.complete(h.claimJob("q", "j"), "")
				rtEq(h.t, "expires at", h.job("j").ExpiresAt, h.now.Add(time.Hour))
				h.advance(time.Hour)
				_, err := h.m.GetJob(h.now, "j")
				rtErrIs(h.t, "job", err, weir.ErrNotFound)
				rtEq(h.t, "enqueue again", h.enqueue(JobSpec{ID: "j", Queue: "q", Priority: 1}).Created, true)
			},
		},
		{
			name: "a running workflow is kept however long it runs",
			cfg:  zero,
			plan: rtPlan(rtT("a")),
			run: func(h *rtHarness) {
				h.advance(1000 * time.Hour)
				rtEq(h.t, "workflow", h.wfState(), weir.WorkflowRunning)
			},
		},
		{
			name: "with retention 0 an ended record is gone at the next call",
			cfg:  zero,
			plan: rtPlan(rtT("a")),
			run: func(h *rtHarness) {
				s := h.run("a")
				rtEq(h.t, "settled", s.WorkflowState, weir.WorkflowCompleted)
				_, err := h.m.GetWorkflow(h.now, rtWF)
				rtErrIs(h.t, "workflow", err, weir.ErrNotFound)
				h.enqueue(JobSpec{ID: "j", Queue: "q"})
				h.cancelJob("j")
				_, err = h.m.GetJob(h.now, "j")
				rtErrIs(h.t, "job", err, weir.ErrNotFound)
			},
		},
	})
}

func TestResultRules(t *testing.T) {
	small := rtConfig(func(c *Config) { c.Limits.MaxResult = 4 })
	rtRun(t, []rtCase{
		{
			name: "a result over the cap is ErrTooLarge and nothing of the call is written",
			cfg:  small,
			plan: rtPlan(rtT("a"), rtT("b", "a"), rtT("c")),
			run: func(h *rtHarness) {
				ca, cc := h.start("a"), h.start("c")
				_, err := h.m.Finish(h.now, FinishParams{Outcomes: []Outcome{rtDone(cc, "ok"), rtDone(ca, "12345")}})
				rtErrIs(h.t, "finish", err, weir.ErrTooLarge)
				rtValidation(h.t, err, "", "result", true)
				h.wantStates("a=running b=waiting c=running")
				rtEq(h.t, "c's token", h.job(h.tj("c")).Lease.Token, cc.Lease.Token)
				s := h.complete(ca, "1234")
				h.wantPushed("finish at the cap", s.Pushed, h.tj("b"))
				rtDeepEq(h.t, "result", h.task("a").Result, []byte("1234"))
				cb := h.start("b")
				rtDeepEq(h.t, "deps", cb.Deps, []weir.DepOutcome{{Task: "a", State: weir.Completed, Result: []byte("1234")}})
			},
		},
		{
			name: "a failed attempt keeps no result",
			plan: rtPlan(rtAttempts(2, rtT("a"))),
			run: func(h *rtHarness) {
				o := rtFailed(h.start("a"), "x")
				o.Result = []byte("ignored")
				h.finishOne(o)
				rtEq(h.t, "result", h.task("a").Result == nil, true)
			},
		},
	})
}

func TestListRules(t *testing.T) {
	submitAt := func(h *rtHarness, ids ...string) {
		for _, id := range ids {
			p := rtPlan(rtOn(id, rtT("a")))
			p.ID = id
			h.submit(p)
		}
	}
	ids := func(p weir.WorkflowPage) []string {
		var out []string
		for _, w := range p.Workflows {
			out = append(out, w.ID)
		}
		return out
	}
	list := func(h *rtHarness, p weir.ListParams) weir.WorkflowPage {
		h.t.Helper()
		r, err := h.m.ListWorkflows(h.now, p)
		if err != nil {
			h.t.Fatal(err)
		}
		return r
	}
	rtRun(t, []rtCase{
		{
			name: "workflows list newest first, then by ID descending",
			run: func(h *rtHarness) {
				submitAt(h, "w1")
				h.advance(time.Millisecond)
				submitAt(h, "w2")
				h.advance(time.Millisecond)
				submitAt(h, "w3", "w4")
				p := list(h, weir.ListParams{})
				rtSameIDs(h.t, "listed", ids(p), []string{"w4", "w3", "w2", "w1"})
				rtEq(h.t, "cursor", p.NextCursor, "")
			},
		},
		{
			name: "a state filter lists only workflows in that state",
			run: func(h *rtHarness) {
				submitAt(h, "w1", "w2", "w3")
				h.wf = "w2"
				h.run("a")
				rtSameIDs(h.t, "running", ids(list(h, weir.ListParams{State: weir.WorkflowRunning})), []string{"w3", "w1"})
				rtSameIDs(h.t, "completed", ids(list(h, weir.ListParams{State: weir.WorkflowCompleted})), []string{"w2"})
				rtSameIDs(h.t, "failed", ids(list(h, weir.ListParams{State: weir.WorkflowFailed})), nil)
			},
		},
		{
			name: "paging with a cursor is stable while workflows are added between pages",
			run: func(h *rtHarness) {
				for i := 1; i <= 5; i++ {
					submitAt(h, "w"+strconv.Itoa(i))
					h.advance(time.Millisecond)
				}
				p1 := list(h, weir.ListParams{Limit: 2})
				rtSameIDs(h.t, "page 1", ids(p1), []string{"w5", "w4"})
				submitAt(h, "w6")
				p2 := list(h, weir.ListParams{Limit: 2, Cursor: p1.NextCursor})
				rtSameIDs(h.t, "page 2", ids(p2), []string{"w3", "w2"})
				p3 := list(h, weir.ListParams{Limit: 2, Cursor: p2.NextCursor})
				rtSameIDs(h.t, "page 3", ids(p3), []string{"w1"})
				rtEq(h.t, "last cursor", p3.NextCursor, "")
				rtSameIDs(h.t, "first page again", ids(list(h, weir.ListParams{Limit: 2})), []string{"w6", "w5"})
				exact := list(h, weir.ListParams{Limit: 3, Cursor: p1.NextCursor})
				rtEq(h.t, "no cursor after an exactly full last page", exact.NextCursor, "")
			},
		},
	})
}

func TestClockRules(t *testing.T) {
	rtRun(t, []rtCase{
		{
			name: "time never goes backwards: an earlier time counts as the latest one seen",
			run: func(h *rtHarness) {
				h.enqueue(JobSpec{ID: "j", Queue: "q", MaxAttempts: 2})
				h.advance(10 * time.Second)
				c := h.claimJob("q", "j")
				rtEq(h.t, "deadline", c.Lease.Deadline, rtAt(10*time.Second+rtLease))
				h.now = rtT0
				s := h.fail(c, "x")
				rtEq(h.t, "run at", s.RunAt, rtAt(11*time.Second))
				h.enqueue(JobSpec{ID: "k", Queue: "q"})
				rtEq(h.t, "created at", h.job("k").CreatedAt, rtAt(10*time.Second))
				rtSameIDs(h.t, "claim at the earlier time", h.claimIDs(2, "q"), []string{"k"})
			},
		},
		{
			name: "times are kept in whole milliseconds",
			run: func(h *rtHarness) {
				h.now = rtT0.Add(1500 * time.Microsecond)
				h.enqueue(JobSpec{ID: "j", Queue: "q"})
				rtEq(h.t, "created at", h.job("j").CreatedAt, rtAt(time.Millisecond))
			},
		},
	})
}

// TestDeterminism feeds two models the same pseudo-random sequence of calls
// and requires deep-equal replies, step by step.
func TestDeterminism(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run("seed "+strconv.FormatUint(seed, 10), func(t *testing.T) {
			a, b := rtDrive(seed, 400), rtDrive(seed, 400)
			claims := 0
			for i := range a {
				if !reflect.DeepEqual(a[i], b[i]) {
					t.Fatalf("step %d differs:\n %+v\n %+v", i, a[i], b[i])
				}
				if a[i].op == "claim" && a[i].n > 0 {
					claims++
				}
			}
			if claims == 0 {
				t.Fatalf("the sequence claimed nothing: it tests nothing")
			}
		})
	}
}

// rtStep is one recorded call of rtDrive.
type rtStep struct {
	op  string
	n   int // items in the reply (claims, settled, ...)
	out any
	err string
}

// rtDrive runs a pseudo-random sequence of n calls on a fresh model and
// records every reply and a final snapshot of every workflow and queue.
func rtDrive(seed uint64, n int) []rtStep {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := NewModel(*rtConfig(func(c *Config) { c.Retention = 20 * time.Second }))
	now := rtT0
	queues := []string{"q0", "q1", "q2"}
	var steps []rtStep
	var held []Claimed
	var wfs []string
	rec := func(op string, k int, out any, err error) {
		steps = append(steps, rtStep{op: op, n: k, out: out, err: rtErrText(err)})
	}
	for i := 0; i < n; i++ {
		now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		switch op := rng.IntN(10); op {
		case 0:
			id := "w" + strconv.Itoa(i)
			var tasks []TaskSpec
			for k := range 1 + rng.IntN(6) {
				ts := TaskSpec{Name: "t" + strconv.Itoa(k), Queue: queues[rng.IntN(3)], MaxAttempts: 1 + rng.IntN(3),
					Backoff: time.Duration(1+rng.IntN(2000)) * time.Millisecond, Always: rng.IntN(4) == 0}
				for d := range k {
					if rng.IntN(3) == 0 {
						ts.After = append(ts.After, "t"+strconv.Itoa(d))
					}
				}
				if rng.IntN(2) == 0 {
					ts.Undo = &UndoSpec{Queue: queues[rng.IntN(3)]}
				}
				tasks = append(tasks, ts)
			}
			r, err := m.Submit(now, SubmitParams{Plan: Plan{ID: id, Tasks: tasks, FailFast: rng.IntN(2) == 0, UndoOnCancel: rng.IntN(2) == 0}})
			wfs = append(wfs, id)
			rec("submit", len(r.Pushed), r, err)
		case 1:
			r, err := m.Enqueue(now, EnqueueParams{Job: JobSpec{ID: "j" + strconv.Itoa(rng.IntN(50)), Queue: queues[rng.IntN(3)],
				Priority: rng.IntN(3) - 1, MaxAttempts: 1 + rng.IntN(2), RunAt: now.Add(time.Duration(rng.IntN(3)) * time.Second)}})
			rec("enqueue", 0, r, err)
		case 2, 3, 4:
			c, err := m.Claim(now, ClaimParams{Queues: []string{queues[rng.IntN(3)], queues[rng.IntN(3)]}, Max: 1 + rng.IntN(3), Lease: time.Duration(1+rng.IntN(10)) * time.Second})
			held = append(held, c...)
			rec("claim", len(c), c, err)
		case 5, 6, 7:
			if len(held) == 0 {
				continue
			}
			var os []Outcome
			for range 1 + rng.IntN(min(3, len(held))) {
				k := rng.IntN(len(held))
				c := held[k]
				held = slices.Delete(held, k, k+1)
				o := Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Result: []byte{byte(i)}}
				o.Kind = []OutcomeKind{OutcomeCompleted, OutcomeCompleted, OutcomeFailed, OutcomeCancelled, OutcomeReleased}[rng.IntN(5)]
				if o.Kind == OutcomeFailed {
					o.Error, o.NonRetryable = "e"+strconv.Itoa(i), rng.IntN(3) == 0
				}
				os = append(os, o)
			}
			r, err := m.Finish(now, FinishParams{Outcomes: os})
			rec("finish", len(r.Settled), r, err)
		case 8:
			if len(wfs) == 0 {
				continue
			}
			var undo *bool
			if u := rng.IntN(3); u < 2 {
				undo = rtBool(u == 0)
			}
			r, err := m.CancelWorkflow(now, CancelWorkflowParams{ID: wfs[rng.IntN(len(wfs))], Undo: undo})
			rec("cancel", len(r.Cancelled), r, err)
		case 9:
			r, err := m.ExpireLeases(now, ExpireParams{})
			rec("expire", len(r.Expired), r, err)
		}
	}
	for _, id := range wfs {
		w, err := m.GetWorkflow(now, id)
		rec("get", 0, w, err)
	}
	for _, q := range queues {
		rec("queue", 0, m.QueueContents(now, q), nil)
	}
	return steps
}

func TestStoreTime(t *testing.T) {
	for _, c := range []struct {
		name              string
		source, last, off int64
		wantNow, wantOff  int64
	}{
		{"first call", 5000, 0, 0, 5000, 0},
		{"source ahead", 5000, 4000, 0, 5000, 0},
		{"source equal", 5000, 5000, 0, 5000, 0},
		{"step back: time stays, offset is the step", 4000, 5000, 0, 5000, 1000},
		{"after a step back: time goes on at the source's pace", 4300, 5000, 1000, 5300, 1000},
		{"a second step back adds to the offset", 3000, 5300, 1000, 5300, 2300},
		{"source caught up: offset dropped", 5300, 5300, 2300, 5300, 0},
		{"source stepped forward past: offset dropped", 9000, 5300, 2300, 9000, 0},
		{"partial correction: jumps by it, keeps the offset", 5000, 5300, 2300, 7300, 2300},
	} {
		now, off := StoreTime(c.source, c.last, c.off)
		if now != c.wantNow || off != c.wantOff {
			t.Errorf("%s: StoreTime(%d, %d, %d) = %d, %d; want %d, %d", c.name, c.source, c.last, c.off, now, off, c.wantNow, c.wantOff)
		}
	}
}

// TestReadsMoveNoClock: a read after a step back leaves the clock as the
// last write left it, as the Redis store's reads (which write nothing) do.
func TestReadsMoveNoClock(t *testing.T) {
	m := NewModel(DefaultConfig())
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	if _, err := m.Enqueue(at(10_000), EnqueueParams{Job: JobSpec{ID: "j", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetJob(at(20_000), "j"); err != nil {
		t.Fatal(err)
	}
	m.Queues(at(20_000))
	if got := m.Now().UnixMilli(); got != 10_000 {
		t.Fatalf("after reads at 20000: the model's time is %d, want the last write's 10000", got)
	}
	// A step back to 4000 then a write at 4500: time goes on from 10000.
	c, err := m.Claim(at(4_000), ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Second})
	if err != nil || len(c) != 1 {
		t.Fatalf("claim: %v %v", c, err)
	}
	if got := c[0].Lease.Deadline.UnixMilli(); got != 11_000 {
		t.Errorf("lease deadline after a step back %d, want 11000", got)
	}
	res, err := m.ExpireLeases(at(5_000), ExpireParams{})
	if err != nil || len(res.Expired) != 1 {
		t.Errorf("one second of the source after the step back: expired %v (%v), want j", res.Expired, err)
	}
}
