package client

import (
	"fmt"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// Step is one task of a Chain or a Batch, made by NewStep: a name, a
// queue and a payload, added to the workflow by the group.
type Step struct {
	name string
	add  func(w *Workflow) *node
}

// NewStep returns a step named name that runs a job with payload on queue
// q, with opts, as AddTask would add it.
func NewStep[P, R any](name string, q Queue[P, R], payload P, opts ...JobOption) Step {
	return Step{name: name, add: func(w *Workflow) *node { return AddTask(w, name, q, payload, opts...).n }}
}

// Group is a chain or a batch of steps in a workflow, with its callbacks:
// Then, Catch and Finally. It is sugar over the workflow's DAG: each step
// and each callback is a task of the workflow, run by whichever worker
// claims it from its queue, so a callback runs even if the process that
// submitted the workflow is gone. A callback's handler reads the group's
// counts and first failure with worker.JobInfo.Group.
type Group struct {
	w       *Workflow
	name    string
	chain   bool
	steps   []*node
	then    *node
	catch   *node
	finally *node
	allow   bool
}

// Chain adds steps to w, each running after the one before it completed:
// a step that fails (or is cancelled) ends the chain, and the steps after
// it are cancelled. name names the group; its callbacks are the tasks
// "<name>.then", "<name>.catch" and "<name>.finally".
func Chain(w *Workflow, name string, steps ...Step) *Group {
	return newGroup(w, name, true, steps)
}

// Batch adds steps to w, all of which may run at once. name names the
// group; its callbacks are the tasks "<name>.then", "<name>.catch" and
// "<name>.finally".
func Batch(w *Workflow, name string, steps ...Step) *Group {
	return newGroup(w, name, false, steps)
}

func newGroup(w *Workflow, name string, chain bool, steps []Step) *Group {
	g := &Group{w: w, name: name, chain: chain}
	if len(steps) == 0 {
		g.fail("a group needs at least one step")
		return g
	}
	for i, s := range steps {
		if s.add == nil {
			g.fail(fmt.Sprintf("step %d is the zero Step (use NewStep)", i))
			return g
		}
		n := s.add(w)
		if n.index < 0 {
			return g // AddTask recorded why
		}
		if chain && i > 0 {
			(&Task[struct{}]{n: n}).After(&Task[struct{}]{n: g.steps[i-1]})
		}
		g.steps = append(g.steps, n)
	}
	return g
}

func (g *Group) fail(problem string) {
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	g.w.failLocked(&weir.BuildError{Task: g.name, Problem: problem})
}

// Steps returns the group's steps, in order, as tasks other tasks can run
// after.
func (g *Group) Steps() []TaskRef {
	out := make([]TaskRef, len(g.steps))
	for i, n := range g.steps {
		out[i] = &Task[struct{}]{n: n}
	}
	return out
}

// After makes the group start after deps: a chain's first step, or every
// step of a batch, runs once deps completed (see Task.After).
func (g *Group) After(deps ...TaskRef) *Group {
	for i, n := range g.steps {
		if g.chain && i > 0 {
			break
		}
		(&Task[struct{}]{n: n}).After(deps...)
	}
	return g
}

// AllowFailures makes a batch's Then run once every step ended, whatever
// the outcomes, and so keeps the steps' failures from failing the workflow
// (a failure whose dependents all absorb it is absorbed: the steps'
// dependents are then the callbacks only, and with AllowFailures its Catch
// and Finally absorb too). A chain cannot allow failures:
// it is a *weir.BuildError.
func (g *Group) AllowFailures() *Group {
	if g.chain {
		g.fail("a chain cannot allow failures (a failed step ends it)")
		return g
	}
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	if !g.w.changeLocked(g.name) {
		return g
	}
	g.allow = true
	if g.then != nil {
		g.then.spec.Always = true
	}
	for _, n := range []*node{g.catch, g.finally} {
		if n != nil {
			n.spec.NoAbsorb = false
		}
	}
	return g
}

// callback adds the group's callback kind (weir.GroupThen, GroupCatch or
// GroupFinally) as task "<group>.<kind>".
func callback[P, R any](g *Group, kind string, q Queue[P, R], payload P, opts []JobOption) *Task[R] {
	name := g.name + "." + kind
	problem := ""
	switch {
	case len(g.steps) == 0:
		problem = "a callback of a group without steps"
	case kind != weir.GroupFinally && g.finally != nil:
		problem = "Then and Catch come before Finally"
	case kind == weir.GroupThen && g.then != nil, kind == weir.GroupCatch && g.catch != nil, kind == weir.GroupFinally && g.finally != nil:
		problem = "the group has its " + kind + " callback already"
	}
	if problem != "" {
		g.fail(problem)
		return &Task[R]{n: &node{wf: g.w, index: -1, spec: engine.TaskSpec{Name: name}}}
	}
	t := AddTask(g.w, name, q, payload, opts...)
	if t.n.index < 0 {
		return t
	}
	deps := g.Steps()
	switch kind {
	case weir.GroupThen:
		g.then = t.n
		t.After(deps...)
		if g.allow {
			t.Always()
		}
	case weir.GroupCatch:
		g.catch = t.n
		t.After(deps...).OnFailure()
	case weir.GroupFinally:
		g.finally = t.n
		for _, n := range []*node{g.then, g.catch} {
			if n != nil {
				deps = append(deps, &Task[struct{}]{n: n})
			}
		}
		t.After(deps...).Always()
	}
	if kind != weir.GroupThen && !g.allow {
		// a catch or a finally runs after a failed step without
		// absorbing it: the workflow still fails (AllowFailures absorbs)
		t.set(func(s *engine.TaskSpec) { s.NoAbsorb = true })
	}
	return t
}

// Then adds the group's success callback: a task "<group>.then" with
// payload on queue q that runs once every step completed (with
// AllowFailures: once every step ended). It is cancelled when a step
// fails or is cancelled (without AllowFailures).
func Then[P, R any](g *Group, q Queue[P, R], payload P, opts ...JobOption) *Task[R] {
	return callback(g, weir.GroupThen, q, payload, opts)
}

// Catch adds the group's failure callback: a task "<group>.catch" with
// payload on queue q that runs once every step ended, if one of them
// failed or was cancelled; its handler finds the first in
// JobInfo.Group().FirstFailure. When every step completed it ends
// cancelled with error "no_failure", without running (Task.OnFailure).
// A Catch does not keep the workflow from failing: use AllowFailures.
func Catch[P, R any](g *Group, q Queue[P, R], payload P, opts ...JobOption) *Task[R] {
	return callback(g, weir.GroupCatch, q, payload, opts)
}

// Finally adds the group's last callback: a task "<group>.finally" with
// payload on queue q that runs once every step ended, whatever the
// outcomes, and after Then and Catch (added before it) ended. Like a
// Catch, a Finally does not keep the workflow from failing: a failed step
// fails it (and the steps' undos run) unless the group AllowFailures.
func Finally[P, R any](g *Group, q Queue[P, R], payload P, opts ...JobOption) *Task[R] {
	return callback(g, weir.GroupFinally, q, payload, opts)
}
