package engine

import "github.com/weirflow/weir"

// Promotion: making a task runnable once its dependencies all ended, or a
// root at submit or re-run (spec/states.md, Task ended step 2, Signal,
// Delayed tasks): a signal task opens, a task with a Delay, or a root of a
// plan that starts later, is pushed delayed, any other is pushed ready.
// The Redis store's counterpart is redisstore/lua/include/promote.lua.

// promote makes task j, whose dependencies all ended (or a root at
// submit), runnable: a signal task opens, any other is pushed, ready or
// delayed (pushDelayed).
func (m *Model) promote(j *job, now int64, fx *effects) {
	ts := &j.wf.c.plan.Tasks[j.task]
	if !ts.Signal {
		m.pushDelayed(j, ts, now, fx)
		return
	}
	j.state = weir.Open
	m.emit(weir.EventOpened, j.id, 0, "", now)
	if ts.SignalTimeout > 0 {
		// the queue's sweep fails it when due (signalTimedOut)
		j.runAt = now + ms(ts.SignalTimeout)
		m.queue(j.queue).delayed.add(j.id, j.runAt, 0)
	}
}

// pushDelayed pushes task j (spec ts) whose dependencies ended at now:
// ready, or delayed until now + its Delay; a root of a plan with a later
// StartAt, until then plus its Delay.
func (m *Model) pushDelayed(j *job, ts *TaskSpec, now int64, fx *effects) {
	base := now
	// a root of the submitted plan waits for StartAt; a task added at run
	// time without a dependency is pushed by the finish that adds it, as
	// any other task (spec/states.md, Delayed tasks)
	if len(ts.After) == 0 && j.addedBy == "" && !j.wf.c.plan.StartAt.IsZero() {
		base = max(base, j.wf.c.plan.StartAt.UnixMilli())
	}
	if at := base + ms(ts.Delay); at > now {
		j.runAt = at
	}
	m.push(j, now, fx)
}
