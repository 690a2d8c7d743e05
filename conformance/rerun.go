package conformance

import (
	"github.com/weirflow/weir"
	"sort"
	"strings"

	"github.com/weirflow/weir/engine"
)

// rerun re-runs a workflow's failed part (spec/states.md, RerunWorkflow):
// mostly one the model holds ended failed, cancelled or completed, when the sequence
// made one so, else any of the sequence's workflow IDs (the refusals); a
// repeat of it (as if its reply was lost) is the last operation, and
// finds the workflow running.
func (d *differ) rerun() {
	d.t.Helper()
	now := d.clock()
	var ended []string
	for id := range d.plans {
		w, err := d.m.GetWorkflow(now, id)
		if err == nil && rerunnable(w.State) {
			ended = append(ended, id)
		}
	}
	sort.Strings(ended)
	p := engine.RerunWorkflowParams{ID: sampled(d, []string{"w1", "w2", "w3", "b/d"}, "wf")}
	if len(ended) > 0 && d.intRange(0, 3, "rerunended") > 0 {
		p.ID = sampled(d, ended, "rerunwf")
	}
	d.rerunID(p)
}

// rerunnable reports whether a workflow in state s may be re-run (when a
// task of it failed or was cancelled).
func rerunnable(s weir.WorkflowState) bool {
	return s == weir.WorkflowFailed || s == weir.WorkflowCancelled || s == weir.WorkflowCompleted
}

// rerunEnded follows a finish that ended a workflow failed, cancelled or
// completed with a re-run of it, one time in two.
func (d *differ) rerunEnded(settled []engine.Settled) {
	d.t.Helper()
	for _, st := range settled {
		if !st.WorkflowEnded || !rerunnable(st.WorkflowState) {
			continue
		}
		if wf, _, ok := strings.Cut(st.JobID, "/"); ok && d.intRange(0, 1, "finishrerun") == 0 {
			d.rerunID(engine.RerunWorkflowParams{ID: wf})
		}
		return
	}
}

// rerunID re-runs workflow p.ID in the model and the store and compares
// them; a repeat of it is the last operation.
func (d *differ) rerunID(p engine.RerunWorkflowParams) {
	d.t.Helper()
	d.last = func() {
		now := d.clock()
		mr, merr := d.m.RerunWorkflow(now, p)
		sr, serr := d.s.RerunWorkflow(d.ctx, p)
		d.sameErr("rerun "+p.ID, merr, serr)
		d.same("rerun "+p.ID, mr, sr)
	}
	d.last()
}
