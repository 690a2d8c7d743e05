package conformance

import (
	"strconv"
	"time"

	"github.com/weirflow/weir/engine"
)

// genSignal makes task ts a signal task, with or without a timeout, in one
// plan of four (spec/states.md, Signal), or else gives it a delay, one in
// five (spec/states.md, Delayed tasks). It is called once ts has its
// other fields (its undo included).
func (d *differ) genSignal(ts *engine.TaskSpec) {
	if d.intRange(0, 3, "signal") != 0 {
		if d.intRange(0, 4, "taskdelay") == 0 {
			ts.Delay = sampled(d, []time.Duration{10 * time.Millisecond, 300 * time.Millisecond}, "delayv")
		}
		return
	}
	ts.Signal = true
	ts.SignalTimeout = sampled(d, []time.Duration{0, 100 * time.Millisecond, time.Second}, "sigtimeout")
	// what a signal task cannot have (spec/states.md, Signal): no key, and
	// without an undo no retry policy or priority; no choice is drawn, so
	// a sequence's other choices stay as they were
	ts.Key = ""
	if ts.Undo == nil {
		ts.Priority, ts.MaxAttempts, ts.MaxExpiries, ts.Backoff, ts.Timeout = 0, 0, 0, 0, 0
	}
}

// genStartAt gives plan p a start time, past or to come, one plan in
// four.
func (d *differ) genStartAt(p *engine.Plan) {
	if d.intRange(0, 3, "startat") == 0 {
		p.StartAt = d.clock().Add(sampled(d, []time.Duration{-100 * time.Millisecond, 200 * time.Millisecond}, "startatv"))
	}
}

// genDeadline gives plan p a deadline (spec/states.md, Deadline), one plan
// in three: after the submit by the store's clock, or at a time, past (the
// submit is refused) or to come.
func (d *differ) genDeadline(p *engine.Plan) {
	switch d.intRange(0, 5, "deadline") {
	case 0:
		p.DeadlineIn = sampled(d, []time.Duration{50 * time.Millisecond, 300 * time.Millisecond, 2 * time.Second}, "deadlinein")
	case 1:
		p.Deadline = d.clock().Add(sampled(d, []time.Duration{-50 * time.Millisecond, 100 * time.Millisecond, time.Second}, "deadlineat"))
	}
}

// signal sends one signal to the model and the store (a store that is no
// engine.Signaller is skipped): a task that may be a signal task, open or
// not, or no task at all; a repeat of it is the last operation.
func (d *differ) signal() {
	p := engine.SignalParams{
		Workflow: sampled(d, []string{"w1", "w2", "w3"}, "wf"),
		Task:     "t" + strconv.Itoa(d.intRange(0, 6, "sigtask")),
		Kind:     sampled(d, []engine.OutcomeKind{engine.OutcomeCompleted, engine.OutcomeCompleted, engine.OutcomeFailed}, "sigkind"),
	}
	if p.Kind == engine.OutcomeCompleted {
		if d.bool("sigvalue") {
			p.Value = []byte(sampled(d, []string{"", "ok"}, "sigvaluev"))
		}
	} else {
		p.Reason = sampled(d, []string{"", "no"}, "sigreason")
	}
	s, ok := d.s.(engine.Signaller)
	if !ok {
		return
	}
	d.last = func() {
		now := d.clock()
		mr, merr := d.m.Signal(now, p)
		sr, serr := s.Signal(d.ctx, p)
		d.sameErr("signal "+p.Workflow+"/"+p.Task, merr, serr)
		d.same("signal "+p.Workflow+"/"+p.Task, mr, sr)
	}
	d.last()
}
