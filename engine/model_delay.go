package engine

import (
	"time"
)

// Delayed tasks and workflows (spec/states.md, Delayed tasks): a task's
// Delay holds it in its queue's delayed set after its dependencies ended;
// a plan's StartAt holds its roots until then.

// validateDelay checks a task's Delay: whole milliseconds in [0, 100
// years], and not on a signal task.
func validateDelay(t TaskSpec) error {
	switch {
	case t.Delay == 0:
		return nil
	case t.Delay < 0 || t.Delay%time.Millisecond != 0 || t.Delay > maxSignalTimeout:
		return invalid(t.Name, "delay", "%v is not whole milliseconds in [0, 100 years]", t.Delay)
	case t.Signal:
		return invalid(t.Name, "delay", "a signal task opens when its dependencies end: it has no delay")
	}
	return nil
}

// validateStartAt checks a plan's StartAt: not before the Unix epoch, and
// no signal task among the roots of a plan that starts later (it would
// open before the workflow starts).
func validateStartAt(p Plan) error {
	if p.StartAt.IsZero() {
		return nil
	}
	if p.StartAt.UnixMilli() <= 0 {
		return invalid("", "start_at", "%v is before the Unix epoch", p.StartAt)
	}
	for _, t := range p.Tasks {
		if len(t.After) == 0 && t.Signal {
			return invalid(t.Name, "start_at", "a signal task without dependencies opens at submit: a workflow with a start time cannot have one")
		}
	}
	return nil
}
