package workflowfile

import "slices"

// Fields that each make sense alone but not together are refused, never
// ignored (spec/workflow-file.md): the file would say one thing and the
// workflow do another.

// given reports whether the file gave task t the field k.
func (t fileTask) given(k string) bool { return slices.Contains(t.set, k) }

// combinationConflict names the field of task t that its other fields
// contradict or leave with nothing to apply to, and why; "" when none.
// Of several, the first in the format's order is named.
func combinationConflict(t fileTask) (field, problem string) {
	if t.OnFailure && t.given("always") && !t.Always {
		return "always", "an on_failure task is always an always task (it waits for every task it runs after, whatever their outcome): leave always out"
	}
	if !t.Signal {
		return "", ""
	}
	if t.given("key") {
		return "key", "a signal task is claimed by no worker: a concurrency key holds nothing (its undo runs without one)"
	}
	if t.Undo != nil {
		return "", "" // the retry policy and priority are the undo's
	}
	for _, k := range []string{"priority", "retries", "max_expiries", "backoff"} {
		if t.given(k) {
			return k, "a signal task runs nothing and a failing signal is never retried: " + k + " applies to its undo only, and it has none"
		}
	}
	return "", ""
}

// CheckSchedule returns an *Error when f cannot be the workflow a
// schedule submits at each tick: it gives an id, which would be ignored,
// since each tick submits the workflow under the tick's own ID
// (spec/states.md, Schedules). `weir schedule put --workflow` and the
// REST API's PUT /v1/schedules/{name} call it.
func (f *File) CheckSchedule() error {
	if f.haveID {
		return &Error{File: f.Name, Field: "id", Path: "id",
			Problem: "a schedule's workflow takes no id: each tick submits it under the tick's own ID (<schedule>.<unix seconds of the tick>); leave id out"}
	}
	return nil
}
