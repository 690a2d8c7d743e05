package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// DefaultSignalQueue is the queue a signal task names unless SignalQueue
// says otherwise: an open signal task with a timeout waits in its delayed
// set, and a worker's claims from it are what fire the timeout.
const DefaultSignalQueue = "signals"

// SignalOption is one option of AddSignal, made by SignalTimeout or
// SignalQueue. It prints as the call that made it.
type SignalOption struct {
	text string
	f    func(*engine.TaskSpec)
}

// String returns the option as the call that made it.
func (o SignalOption) String() string { return o.text }

// SignalTimeout fails the signal task with reason "timeout"
// (weir.ReasonTextSignalTimeout) when no signal came d after it opened.
// Whole milliseconds; the default is none. The timeout fires when a worker
// claims from the task's queue (SignalQueue), or at ExpireLeases.
func SignalTimeout(d time.Duration) SignalOption {
	return SignalOption{text: "SignalTimeout(" + d.String() + ")", f: func(s *engine.TaskSpec) { s.SignalTimeout = d }}
}

// SignalQueue names the queue whose sweeps fire the signal task's timeout
// (DefaultSignalQueue when not given).
func SignalQueue(name string) SignalOption {
	return SignalOption{text: "SignalQueue(" + strconv.Quote(name) + ")", f: func(s *engine.TaskSpec) { s.Queue = name }}
}

// AddSignal adds a signal task named name, whose result is an R, and
// returns its handle (After, Always and Undo apply as to any task). No
// worker runs it: once its dependencies have ended it is open
// (weir.Open) until Workflow.Signal completes it with a value, which its
// dependents read as its result, or Workflow.SignalFail fails it. A
// signal task is how a workflow waits for something outside it: an
// approval, a payment, a webhook.
func AddSignal[R any](w *Workflow, name string, opts ...SignalOption) *Task[R] {
	n := &node{wf: w, index: -1, spec: engine.TaskSpec{Name: name, Queue: DefaultSignalQueue, Signal: true}}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.changeLocked(name) {
		return &Task[R]{n: n}
	}
	for _, o := range opts {
		if o.f != nil {
			o.f(&n.spec)
		}
	}
	n.index = len(w.nodes)
	w.nodes = append(w.nodes, n)
	return &Task[R]{n: n}
}

// Signal completes the open signal task named task with value (encoded as
// a task's result is), from any process. The same signal again is a
// success that changes nothing; a task whose dependencies have not all
// ended is weir.ErrNotOpen; one that ended otherwise (another signal, its
// timeout, a cancel of the workflow) is weir.ErrSignalled.
func (w *Workflow) Signal(ctx context.Context, task string, value any) error {
	b, err := encode(value)
	if err != nil {
		return &weir.BuildError{Task: task, Problem: "signal value: " + err.Error()}
	}
	return w.signal(ctx, engine.SignalParams{Workflow: w.id, Task: task, Kind: engine.OutcomeCompleted, Value: b})
}

// SignalFail fails the open signal task named task with reason, from any
// process, as Signal completes it: its dependents are cancelled (Always
// ones run), and the workflow fails or compensates as for any failed
// task. A failed signal task is never retried.
func (w *Workflow) SignalFail(ctx context.Context, task, reason string) error {
	return w.signal(ctx, engine.SignalParams{Workflow: w.id, Task: task, Kind: engine.OutcomeFailed, Reason: reason})
}

func (w *Workflow) signal(ctx context.Context, p engine.SignalParams) error {
	c, err := w.client()
	if err != nil {
		return err
	}
	s, ok := c.store.(engine.Signaller)
	if !ok {
		return fmt.Errorf("weir: store %T has no signal tasks: %w", c.store, errors.ErrUnsupported)
	}
	_, err = s.Signal(ctx, p)
	return err
}
