package conformance

import (
	"strconv"
	"strings"

	"github.com/weirflow/weir/engine"
)

// genAdd gives a completed outcome of a task (job ID "<wf>/<task>") tasks
// to add to its workflow (spec/states.md, Dynamic tasks), one outcome of
// a task in four: one to three tasks, each depending on the finishing
// task, on tasks added before it, on the plan's tasks (some of which may
// not exist), now and then with a name the workflow already has, with or
// without gating the finishing task's dependents; some are signal tasks or
// delayed (genSignal).
func (d *differ) genAdd(o *engine.Outcome) {
	wf, task, ok := strings.Cut(o.JobID, "/")
	if !ok || strings.Contains(task, "/") || d.intRange(0, 3, "addtasks") != 0 {
		return
	}
	n := d.intRange(1, 3, "addn")
	o.GateDependents = d.bool("addgate")
	for k := 0; k < n; k++ {
		ts := engine.TaskSpec{
			Name:   wf + "s" + strconv.Itoa(d.step) + "x" + strconv.Itoa(k),
			Queue:  sampled(d, []string{"q1", "q2"}, "addqueue"),
			Always: d.intRange(0, 3, "addalways") == 0,
			Key:    sampled(d, []string{"", "", "A"}, "addkey"),
		}
		if d.intRange(0, 7, "addclash") == 0 {
			ts.Name = "t" + strconv.Itoa(d.intRange(0, 2, "addclashname"))
		}
		if d.intRange(0, 3, "addundo") == 0 {
			ts.Undo = &engine.UndoSpec{Queue: "q1"}
		}
		d.genSignal(&ts)
		if d.bool("addpayload") {
			ts.Payload = []byte("a" + strconv.Itoa(k))
		}
		if d.intRange(0, 1, "addonfinisher") == 0 {
			ts.After = append(ts.After, task)
		}
		for x := 0; x < k; x++ {
			if d.intRange(0, 2, "adddep") == 0 {
				ts.After = append(ts.After, o.Add[x].Name)
			}
		}
		if d.intRange(0, 2, "addplandep") == 0 {
			dep := "t" + strconv.Itoa(d.intRange(0, 5, "addplandepname"))
			if dep != task {
				ts.After = append(ts.After, dep)
			}
		}
		if ts.Always && len(ts.After) > 0 {
			ts.OnFailure = d.intRange(0, 1, "addonfailure") == 0
		}
		if ts.Always {
			ts.NoAbsorb = d.intRange(0, 2, "addnoabsorb") == 0
		}
		o.Add = append(o.Add, ts)
	}
}
