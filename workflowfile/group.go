package workflowfile

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/weirflow/weir"
)

// fileGroup is a workflow's chain or batch (spec/workflow-file.md, Chain
// and batch): steps, and callbacks that become the tasks "<name>.then",
// "<name>.catch" and "<name>.finally", as client.Chain and client.Batch
// build them.
type fileGroup struct {
	kind          string // "chain" or "batch"
	Name          string
	AllowFailures bool
	Steps         []fileTask
	// the callbacks, nil when not given
	Then, Catch, Finally *fileTask
}

func (d *fileDecoder) group(w where, kind string, n *yaml.Node) (*fileGroup, error) {
	g := &fileGroup{kind: kind, Name: kind}
	fields, err := d.mapping(w, n, "group")
	if err != nil {
		return nil, err
	}
	for j := 0; j < len(fields); j += 2 {
		k, v := fields[j], fields[j+1]
		fw := w.in(k.Value)
		switch k.Value {
		case "name":
			g.Name, err = d.str(fw, v)
		case "allow_failures":
			g.AllowFailures, err = d.bool(fw, v)
		case "steps":
			g.Steps, err = d.steps(fw, v)
		case weir.GroupThen, weir.GroupCatch, weir.GroupFinally:
			var t fileTask
			if t, err = d.task(fw.field, v); err == nil {
				switch k.Value {
				case weir.GroupThen:
					g.Then = &t
				case weir.GroupCatch:
					g.Catch = &t
				default:
					g.Finally = &t
				}
			}
		default:
			err = d.unknown(w, k)
		}
		if err != nil {
			return nil, err
		}
	}
	return g, nil
}

func (d *fileDecoder) steps(w where, n *yaml.Node) ([]fileTask, error) {
	n, err := d.visit(w, n)
	if err != nil {
		return nil, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, d.fail(w, n, "%s is not a list of steps (tasks)", d.describe(n))
	}
	ts := make([]fileTask, len(n.Content))
	for i, tn := range n.Content {
		if ts[i], err = d.task(fmt.Sprintf("%s[%d]", w.field, i), tn); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// groupTasks returns g's steps and callbacks as the workflow's tasks, in
// the order client.Chain and client.Batch add them: the steps (a chain's
// each after the one before), Then, Catch, Finally.
func groupTasks(path string, g *fileGroup) ([]fileTask, error) {
	fail := func(task, field, format string, args ...any) error {
		return taskError(path, task, "", field, fmt.Sprintf(format, args...))
	}
	switch {
	case len(g.Steps) == 0:
		return nil, fail("", g.kind+".steps", "a %s needs at least one step", g.kind)
	case g.AllowFailures && g.kind == "chain":
		return nil, fail("", "chain.allow_failures", "a chain cannot allow failures (a failed step ends it)")
	case !validGroupName(g.Name):
		return nil, fail("", g.kind+".name", "group name %q must match ^[A-Za-z0-9_.-]{1,56}$: its callbacks are the tasks <name>.then, <name>.catch and <name>.finally", g.Name)
	}
	var tasks []fileTask
	var names []string
	for i, s := range g.Steps {
		switch {
		case s.After != nil:
			return nil, fail(s.path, "after", "a step takes no after: the %s orders its steps", g.kind)
		case s.OnFailure:
			return nil, fail(s.path, "on_failure", "a step cannot be on_failure: give the %s a catch", g.kind)
		}
		if g.kind == "chain" && i > 0 {
			s.After = []string{g.Steps[i-1].Name}
		}
		tasks = append(tasks, s)
		names = append(names, s.Name)
	}
	var callbacks []string
	for _, cb := range []struct {
		kind string
		t    *fileTask
	}{{weir.GroupThen, g.Then}, {weir.GroupCatch, g.Catch}, {weir.GroupFinally, g.Finally}} {
		if cb.t == nil {
			continue
		}
		t := *cb.t
		// in the file format's order, so that of several the first is named
		for _, f := range []struct {
			field string
			given bool
		}{{"name", t.Name != ""}, {"after", t.After != nil}, {"always", t.Always}, {"on_failure", t.OnFailure}} {
			if f.given {
				return nil, fail(t.path, f.field, "a callback takes no %s: it is the task %q, run after the %s's steps", f.field, g.Name+"."+cb.kind, g.kind)
			}
		}
		t.Name = g.Name + "." + cb.kind
		t.After = append([]string(nil), names...)
		switch cb.kind {
		case weir.GroupThen:
			t.Always = g.AllowFailures
		case weir.GroupCatch:
			t.Always, t.OnFailure = true, true
			t.noAbsorb = !g.AllowFailures
		case weir.GroupFinally:
			t.Always = true
			t.noAbsorb = !g.AllowFailures
			t.After = append(t.After, callbacks...)
		}
		callbacks = append(callbacks, t.Name)
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// inGroup reports whether e is about a step or callback of a chain or
// batch: its place (batch.steps[1].run) names it, as spec/workflow-file.md
// says, rather than the task's generated or repeated name.
func (e *Error) inGroup() bool {
	return e.Task != "" && (strings.HasPrefix(e.Path, "chain.") || strings.HasPrefix(e.Path, "batch."))
}

// writeGroupPlace writes the place of e, in a group: "PATH: ", with the
// task's name when it has one ("batch.steps[1].run (task "bob"): ").
func (e *Error) writeGroupPlace(b *strings.Builder) {
	b.WriteString(e.Path)
	if e.TaskName != "" {
		fmt.Fprintf(b, " (task %q)", e.TaskName)
	}
	b.WriteString(": ")
}
