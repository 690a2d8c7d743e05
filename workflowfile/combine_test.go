package workflowfile

import (
	"errors"
	"strings"
	"testing"
)

// Fields that contradict each other, or that a signal task has nothing to
// apply to, are refused naming the field, in a plan and in a file of tasks
// to add; the same fields with what gives them a meaning are accepted.
func TestCombinationConflicts(t *testing.T) {
	for _, c := range []struct{ doc, path, problem string }{
		{"tasks: [{name: a, run: x}, {name: b, run: y, after: [a], on_failure: true, always: false}]", "tasks[1].always", "leave always out"},
		{"tasks: [{name: a, signal: true, key: k}]", "tasks[0].key", "claimed by no worker"},
		{"tasks: [{name: a, signal: true, key: k, undo: {run: x}}]", "tasks[0].key", "claimed by no worker"},
		{"tasks: [{name: a, signal: true, priority: 5}]", "tasks[0].priority", "priority applies to its undo only"},
		{"tasks: [{name: a, signal: true, retries: 3}]", "tasks[0].retries", "retries applies to its undo only"},
		{"tasks: [{name: a, signal: true, retries: 0}]", "tasks[0].retries", "retries applies to its undo only"},
		{"tasks: [{name: a, signal: true, max_expiries: 2}]", "tasks[0].max_expiries", "max_expiries applies to its undo only"},
		{"tasks: [{name: a, signal: true, backoff: 1s, timeout: 1h}]", "tasks[0].backoff", "backoff applies to its undo only"},
		// of several, the first in the format's order, every time
		{"tasks: [{name: a, signal: true, backoff: 1s, max_expiries: 2, retries: 1, priority: 1}]", "tasks[0].priority", "priority"},
		{"batch: {steps: [{name: a, signal: true, retries: 1}]}", "batch.steps[0].retries", "retries applies"},
	} {
		for range 4 {
			_, err := Parse("f.yaml", []byte(c.doc), Options{})
			var fe *Error
			if !errors.As(err, &fe) || fe.Path != c.path || !strings.Contains(fe.Problem, c.problem) {
				t.Errorf("%s: %v; want an error at %s saying %q", c.doc, err, c.path, c.problem)
			}
		}
	}
	added := "tasks: [{name: s, signal: true, retries: 2, after: [x]}]"
	if _, _, err := ParseAdded("add.yaml", []byte(added), Options{}); err == nil || !strings.Contains(err.Error(), "field retries") {
		t.Errorf("added tasks %s: %v, want an error in field retries", added, err)
	}
	for _, doc := range []string{
		"tasks: [{name: a, run: x}, {name: b, run: y, after: [a], on_failure: true, always: true}]",
		"tasks: [{name: a, run: x}, {name: b, run: y, after: [a], on_failure: true}]",
		"tasks: [{name: a, signal: true, timeout: 1h, queue: approvals}]",
		"tasks: [{name: a, signal: true, priority: 5, retries: 3, max_expiries: 2, backoff: 1s, undo: {run: ./revert.sh}}]",
	} {
		if _, err := Parse("f.yaml", []byte(doc), Options{}); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
}

// A schedule's workflow file gives no id (each tick's workflow has the
// tick's ID): CheckSchedule refuses one naming the field; a file without
// one passes.
func TestCheckSchedule(t *testing.T) {
	f, err := Parse("s.yaml", []byte("id: nightly\ntasks: [{name: a, run: x}]"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = f.CheckSchedule()
	var fe *Error
	if !errors.As(err, &fe) || fe.Path != "id" || !strings.Contains(err.Error(), "s.yaml: field id: a schedule's workflow takes no id") {
		t.Errorf("CheckSchedule of a file with an id: %v", err)
	}
	if f, err = Parse("s.yaml", []byte("tasks: [{name: a, run: x}]"), Options{}); err != nil || f.CheckSchedule() != nil {
		t.Errorf("a file without an id: %v, %v", err, f.CheckSchedule())
	}
}
