package engine

import (
	"github.com/weirflow/weir"
	"slices"
	"strings"
)

// Dynamic tasks (spec/states.md, Dynamic tasks): a completed finish of a
// workflow's task may add tasks to its workflow (Outcome.Add), in the same
// step as the finish.

// ValidateAdd checks what every store checks of an outcome's additions
// before it looks at the workflow: the finishing job is a task (its ID is
// "<workflow>/<task>"), each added task's own fields, names unique among
// the additions, dependencies not repeated, at most MaxTasks of them.
func ValidateAdd(o Outcome, l weir.Limits) error {
	if len(o.Add) == 0 {
		return nil
	}
	if strings.Count(o.JobID, "/") != 1 {
		return invalid("", "add", "job %q is not a workflow's task: only a task adds tasks", o.JobID)
	}
	if len(o.Add) > l.MaxTasks {
		return tooLarge("", "add", "%d tasks added, the limit is %d", len(o.Add), l.MaxTasks)
	}
	seen := make(map[string]bool, len(o.Add))
	for _, t := range o.Add {
		if !ValidName(t.Name) {
			return invalid(t.Name, "name", "task name %q must "+NameRule, t.Name)
		}
		if seen[t.Name] {
			return invalid(t.Name, "name", "duplicate task name")
		}
		if err := validateTaskFields(t, l); err != nil {
			return err
		}
		deps := make(map[string]bool, len(t.After))
		for _, a := range t.After {
			if a == t.Name {
				return invalid(t.Name, "after", "a task cannot depend on itself")
			}
			if deps[a] {
				return invalid(t.Name, "after", "dependency %q is listed twice", a)
			}
			deps[a] = true
		}
		seen[t.Name] = true
	}
	return nil
}

// addCheck validates the additions of the outcomes of one finish call
// against the workflows as the call finds them, before anything changes:
// the outcomes that will settle a completed attempt of a task (the lease
// held, not a repeat) and add tasks. Names are unique in the grown plan
// (the tasks other outcomes of the call add included); a dependency names
// a task of the workflow as the call found it or one listed before in the
// same Add; with GateDependents, a dependency on the workflow's tasks is
// the finishing task or one that ended; the grown plan stays within
// MaxTasks and MaxEdges.
func (m *Model) addCheck(outs []Outcome) error {
	type grown struct{ tasks, edges int }
	var added map[*workflow]*grown
	var names map[*workflow]map[string]bool
	seen := map[LeaseRef]bool{}
	for _, o := range outs {
		if len(o.Add) == 0 || o.Kind != OutcomeCompleted {
			continue
		}
		j := m.jobs[o.JobID]
		ref := LeaseRef{JobID: o.JobID, Token: o.Token}
		if j == nil || j.wf == nil || j.undo || j.state != weir.Running || j.token != o.Token || seen[ref] {
			continue
		}
		seen[ref] = true
		w := j.wf
		if added == nil {
			added, names = map[*workflow]*grown{}, map[*workflow]map[string]bool{}
		}
		g := added[w]
		if g == nil {
			g = &grown{tasks: len(w.tasks), edges: w.edges()}
			added[w] = g
			names[w] = map[string]bool{}
		}
		index := w.index()
		mine := make(map[string]bool, len(o.Add))
		for _, t := range o.Add {
			if _, ok := index[t.Name]; ok || names[w][t.Name] {
				return invalid(t.Name, "name", "workflow %q already has a task of that name", w.id)
			}
			for _, a := range t.After {
				if mine[a] {
					continue
				}
				d, ok := index[a]
				if !ok {
					return invalid(t.Name, "after", "dependency %q is neither a task of workflow %q nor one added before this one", a, w.id)
				}
				if o.GateDependents && d != j.task && !w.tasks[d].state.Ended() {
					return invalid(t.Name, "after", "dependency %q has not ended: with GateDependents an added task depends only on ended tasks, the finishing task and tasks added with it", a)
				}
			}
			mine[t.Name] = true
			g.edges += len(t.After)
		}
		for n := range mine {
			names[w][n] = true
		}
		g.tasks += len(o.Add)
		if g.tasks > m.cfg.Limits.MaxTasks {
			return tooLarge("", "add", "workflow %q would have %d tasks, the limit is %d", w.id, g.tasks, m.cfg.Limits.MaxTasks)
		}
		if o.GateDependents {
			g.edges += len(w.gated(j.task)) * len(o.Add)
		}
		if g.edges > m.cfg.Limits.MaxEdges {
			return tooLarge("", "add", "workflow %q would have %d dependency edges, the limit is %d", w.id, g.edges, m.cfg.Limits.MaxEdges)
		}
	}
	return nil
}

// edges counts w's dependency edges.
func (w *workflow) edges() int {
	n := 0
	for _, d := range w.c.deps {
		n += len(d)
	}
	return n
}

// index maps w's task names to their indices.
func (w *workflow) index() map[string]int {
	idx := make(map[string]int, len(w.tasks))
	for i, t := range w.c.plan.Tasks {
		idx[t.Name] = i
	}
	return idx
}

// gated returns the dependents of task f that wait, ascending: those
// GateDependents makes wait for the added tasks.
func (w *workflow) gated(f int) []int {
	var out []int
	for _, d := range w.c.dependents[f] {
		if w.tasks[d].state == weir.Waiting {
			out = append(out, d)
		}
	}
	return out
}

// grow adds the tasks of completed outcome o of task f (just ended) to
// its workflow w and returns the added tasks that a dependency cancelled
// at once (ended failed or cancelled, and the task is not Always), for
// the cascade that follows. An added task waits for its dependencies that
// have not ended, the finishing task included (its cascade, which
// follows, counts it); an ended one that completed is satisfied. With
// gating, the waiting dependents of f get every added task as a
// dependency. The added tasks without a dependency left are pushed (or
// opened), in the order given.
func (m *Model) grow(w *workflow, f int, o Outcome, now int64, fx *effects) []int {
	if w.cancelReq || w.failFastFired {
		return nil
	}
	c := w.c
	base := len(w.tasks)
	index := w.index()
	var gated []int
	if o.GateDependents {
		gated = w.gated(f)
	}
	finisher := c.plan.Tasks[f].Name
	m.emit(weir.EventWorkflowGrown, w.id, 0, finisher, now)
	var born []int
	for k, ts := range o.Add {
		i := base + k
		ts = clonePlan(Plan{Tasks: []TaskSpec{ts}}).Tasks[0]
		c.plan.Tasks = append(c.plan.Tasks, ts)
		c.deps = append(c.deps, nil)
		c.dependents = append(c.dependents, nil)
		j := &job{
			id: weir.TaskJobID(w.id, ts.Name), queue: ts.Queue, payload: ts.Payload,
			priority: ts.Priority, maxAttempts: attemptsOrDefault(ts.MaxAttempts), maxExpiries: expiriesOrDefault(ts.MaxExpiries),
			backoff: ms(backoffOrDefault(ts.Backoff)), timeout: ms(ts.Timeout),
			state: weir.Waiting, created: w.created, wf: w, task: i, key: ts.Key, addedBy: finisher,
		}
		w.tasks = append(w.tasks, j)
		w.open = append(w.open, 0)
		w.remaining++
		m.jobs[j.id] = j
		index[ts.Name] = i
		reason := ""
		for _, a := range ts.After {
			d := index[a]
			c.deps[i] = append(c.deps[i], d)
			c.dependents[d] = append(c.dependents[d], i)
			td := w.tasks[d]
			switch {
			case d == f || d >= base || !td.state.Ended():
				w.open[i]++
			case td.state == weir.Completed || ts.Always:
				if td.state != weir.Completed {
					j.depFailed = true
				}
			case reason == "":
				reason = weir.DependencyReason(a, td.state)
			}
		}
		if reason == "" && ts.OnFailure && w.open[i] == 0 && !j.depFailed {
			// a catch whose dependencies all completed already
			reason = weir.ReasonTextNoFailure
		}
		if reason != "" {
			m.cancelTask(j, reason, now, fx)
			born = append(born, i)
		}
	}
	for _, d := range gated {
		for k := range o.Add {
			i := base + k
			c.deps[d] = append(c.deps[d], i)
			c.plan.Tasks[d].After = append(c.plan.Tasks[d].After, o.Add[k].Name)
			w.open[d]++
		}
	}
	if len(gated) > 0 {
		for k := range o.Add {
			i := base + k
			c.dependents[i] = append(slices.Clone(gated), c.dependents[i]...)
		}
	}
	for k := range o.Add {
		i := base + k
		if w.tasks[i].state == weir.Waiting && w.open[i] == 0 {
			m.promote(w.tasks[i], now, fx)
		}
	}
	return born
}
