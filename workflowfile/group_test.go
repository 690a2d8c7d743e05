package workflowfile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/engine"
)

func TestParseChainAndBatch(t *testing.T) {
	chain := `
chain:
  name: ingest
  steps:
    - {name: fetch, run: ./fetch.sh}
    - {name: parse, run: ./parse.sh}
    - {name: load, run: ./load.sh, retries: 2}
  then: {run: ./ok.sh}
  catch: {run: ./alert.sh, queue: alerts}
  finally: {run: ./cleanup.sh}
`
	f, err := Parse("chain.yaml", []byte(chain), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]engine.TaskSpec{}
	var names []string
	for _, ts := range f.Plan.Tasks {
		got[ts.Name] = ts
		names = append(names, ts.Name)
	}
	if want := []string{"fetch", "parse", "load", "ingest.then", "ingest.catch", "ingest.finally"}; !slices.Equal(names, want) {
		t.Fatalf("tasks %v, want %v", names, want)
	}
	steps := []string{"fetch", "parse", "load"}
	for _, c := range []struct {
		name              string
		after             []string
		always, onFailure bool
	}{
		{"fetch", nil, false, false},
		{"parse", []string{"fetch"}, false, false},
		{"load", []string{"parse"}, false, false},
		{"ingest.then", steps, false, false},
		{"ingest.catch", steps, true, true},
		{"ingest.finally", append(slices.Clone(steps), "ingest.then", "ingest.catch"), true, false},
	} {
		ts := got[c.name]
		if !slices.Equal(ts.After, c.after) || ts.Always != c.always || ts.OnFailure != c.onFailure {
			t.Errorf("%s: after %v always %t on_failure %t; want %v %t %t", c.name, ts.After, ts.Always, ts.OnFailure, c.after, c.always, c.onFailure)
		}
	}
	if got["load"].MaxAttempts != 3 || got["ingest.catch"].Queue != "alerts" {
		t.Errorf("step and callback fields not kept: %+v %+v", got["load"], got["ingest.catch"])
	}

	batch := `{"batch": {"allow_failures": true, "steps": [{"name": "a", "run": "x"}, {"name": "b", "run": "y"}], "then": {"run": "z"}}}`
	f, err = Parse("batch.json", []byte(batch), Options{})
	if err != nil {
		t.Fatal(err)
	}
	then := f.Plan.Tasks[2]
	if then.Name != "batch.then" || !then.Always || !slices.Equal(then.After, []string{"a", "b"}) || f.Plan.Tasks[1].After != nil {
		t.Errorf("batch with allow_failures: %+v", f.Plan.Tasks)
	}
}

// A group's catch and finally do not absorb its steps' failures, unless
// the group allows failures (spec/workflow-file.md, Chain and batch).
func TestParseGroupCallbacksNoAbsorb(t *testing.T) {
	for _, c := range []struct {
		file     string
		noAbsorb bool
	}{
		{"batch: {name: b, steps: [{name: a, run: x}], catch: {run: y}, finally: {run: z}}", true},
		{"chain: {name: b, steps: [{name: a, run: x}], catch: {run: y}, finally: {run: z}}", true},
		{"batch: {name: b, allow_failures: true, steps: [{name: a, run: x}], catch: {run: y}, finally: {run: z}}", false},
	} {
		f, err := Parse("g.yaml", []byte(c.file), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ts := range f.Plan.Tasks {
			want := c.noAbsorb && (ts.Name == "b.catch" || ts.Name == "b.finally")
			if ts.NoAbsorb != want {
				t.Errorf("%s: task %s NoAbsorb %t, want %t", c.file, ts.Name, ts.NoAbsorb, want)
			}
		}
	}
}

func TestParseGroupErrors(t *testing.T) {
	cases := []struct{ name, file, path, problem string }{
		{"step with after", "batch: {steps: [{name: a, run: x}, {name: b, run: y, after: [a]}]}", "batch.steps[1].after", "takes no after"},
		{"callback with a name", "batch: {steps: [{name: a, run: x}], then: {name: t, run: y}}", "batch.then.name", "takes no name"},
		// of several fields a callback takes not, the first in the format's
		// order is named, every time (the case runs a few times)
		{"callback with four fields it takes not", "batch: {steps: [{name: a, run: x}], catch: {on_failure: true, always: true, after: [a], name: c, run: y}}", "batch.catch.name", "takes no name"},
		{"callback with three fields it takes not", "batch: {steps: [{name: a, run: x}], catch: {on_failure: true, always: true, after: [a], run: y}}", "batch.catch.after", "takes no after"},
		{"callback without run", "chain: {steps: [{name: a, run: x}], catch: {queue: q}}", "chain.catch.run", "required"},
		{"chain allowing failures", "chain: {allow_failures: true, steps: [{name: a, run: x}]}", "chain.allow_failures", "cannot allow failures"},
		{"no steps", "batch: {then: {run: x}}", "batch.steps", "at least one step"},
		{"tasks and a batch", "tasks: [{name: a, run: x}]\nbatch: {steps: [{name: b, run: y}]}", "batch", "not both"},
		{"chain and batch", "chain: {steps: [{name: a, run: x}]}\nbatch: {steps: [{name: b, run: y}]}", "batch", "one chain or batch"},
		{"unknown group field", "batch: {steps: [{name: a, run: x}], colour: red}", "batch.colour", "unknown field"},
		{"duplicate step", "batch: {steps: [{name: a, run: x}, {name: a, run: y}]}", "batch.steps[1].name", "duplicate"},
		{"callback name taken by a step", "batch: {name: g, steps: [{name: g.then, run: x}], then: {run: y}}", "batch.then.name", "duplicate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 8 {
				checkGroupError(t, c.file, c.path, c.problem)
			}
		})
	}
}

// checkGroupError parses file and wants an *Error at path whose problem
// contains problem.
func checkGroupError(t *testing.T, file, path, problem string) {
	t.Helper()
	_, err := Parse("g.yaml", []byte(file), Options{})
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("Parse: %v, want an *Error", err)
	}
	if fe.Path != path || !strings.Contains(fe.Problem, problem) {
		t.Errorf("error %q at path %q; want %q containing %q", fe.Problem, fe.Path, path, problem)
	}
}

// An error about a step or callback names its place, as the spec says
// (batch.steps[1].run), with the task's name when it has one; whether the
// file or the engine's plan check found it.
func TestGroupErrorsNameTheirPlace(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"batch: {steps: [{name: s1, run: x}, {name: s2, run: ' '}]}", `g.yaml: batch.steps[1].run (task "s2"): required`},
		{"chain: {steps: [{name: s1, run: x}], then: {run: y, queue: 'bad q'}}", `g.yaml: chain.then.queue (task "chain.then"): queue name "bad q"`},
		{"batch: {steps: [{name: s1, run: x, priority: 5000}]}", `g.yaml: batch.steps[0].priority (task "s1"): 5000 is outside`},
		{"batch: {steps: [{name: s1, run: x, colour: red}]}", `g.yaml: batch.steps[0].colour (task "s1"): line 1: unknown field`},
		{"batch: {steps: [{name: s1, run: x}, {run: y}]}", `g.yaml: batch.steps[1].name: required`},
		{"batch: {steps: [{name: a, run: x}, {name: b, run: y, after: [a]}]}", `g.yaml: batch.steps[1].after: a step takes no after`},
		{"batch: {name: g, steps: [{name: s1, run: x}], catch: {run: y, signal: true}}", `g.yaml: batch.catch.run (task "g.catch"): a signal task runs nothing`},
		// outside a group, the task by name and the field, as before
		{"tasks: [{name: a, run: ' '}]", `g.yaml: task "a": field run: required`},
		{"batch: {steps: []}", `g.yaml: field batch.steps: a batch needs at least one step`},
	} {
		_, err := Parse("g.yaml", []byte(c.file), Options{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to start with %q", c.file, err, c.want)
		}
	}
}
