package workflowfile

import (
	"fmt"
	"github.com/weirflow/weir"
	"time"

	"github.com/weirflow/weir/engine"
)

// parseStartAt parses a workflow's start_at, an RFC 3339 time; "" is none.
func parseStartAt(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time (example: 2026-12-24T18:00:00Z)", s)
	}
	return t.UTC(), nil
}

// A task with `signal: true` is a signal task (spec/workflow-file.md,
// Signal tasks): nothing runs it; once its `after` tasks ended it waits
// for `weir signal` (or the REST API's signal route), and its `timeout`
// is how long it waits.

// signalConflict names the field of task t, a signal task, that a signal
// task cannot have, and why; "" when none.
func signalConflict(t fileTask) (field, problem string) {
	switch {
	case t.Run != "":
		return "run", "a signal task runs nothing: it ends by a signal (weir signal), not by a command"
	case t.Payload != nil:
		return "payload", "a signal task runs nothing: it ends by a signal, not by a Go handler"
	}
	return "", ""
}

// signalSpec makes spec a signal task: the file's timeout, which bounds
// an attempt of other tasks, is how long it waits for its signal.
func signalSpec(spec *engine.TaskSpec) {
	spec.Signal = true
	spec.SignalTimeout, spec.Timeout = spec.Timeout, 0
}

// Signal is a parsed signal document (spec/rest.md, Signals): how a
// signal ends its task, as the REST API's signal route and `weir signal`
// take it.
type Signal struct {
	// Kind is engine.OutcomeCompleted, or engine.OutcomeFailed with fail.
	Kind engine.OutcomeKind
	// Value is the document's value as msgpack (a task's result, as a Go
	// handler's would be stored); the msgpack null when it has none.
	Value []byte
	// Reason is the document's fail.
	Reason string
}

// ParseSignal strictly decodes data, a signal document named name: an
// object with value (any value: the task completes with it as its result)
// or fail (a string: the task fails with it as its reason), not both;
// neither completes the task with null. Every problem is an *Error naming
// the field. o.Dir is not used.
func ParseSignal(name string, data []byte, o Options) (*Signal, error) {
	limits, format := o.Limits, o.Format
	if limits == (weir.Limits{}) {
		limits = weir.DefaultLimits()
	}
	if format == FormatAuto {
		format = formatOf(name, data)
	}
	d := &fileDecoder{path: name, json: format == FormatJSON, budget: fileNodes(limits), maxPayload: limits.MaxResult}
	root, err := d.root(data)
	if err != nil {
		return nil, err
	}
	top := where{}
	fields, err := d.mapping(top, root, "signal")
	if err != nil {
		return nil, err
	}
	s := &Signal{Kind: engine.OutcomeCompleted, Value: []byte{0xc0}}
	var hasValue, hasFail bool
	for i := 0; i < len(fields); i += 2 {
		k, v := fields[i], fields[i+1]
		w := top.in(k.Value)
		switch k.Value {
		case "value":
			var pv payloadValue
			if pv, err = d.payload(w, v); err == nil {
				s.Value, hasValue = pv.msgpack, true
			}
		case "fail":
			s.Reason, err = d.str(w, v)
			hasFail = true
		default:
			err = d.fail(w, k, "unknown field (a signal has value or fail: spec/rest.md)")
		}
		if err != nil {
			return nil, err
		}
	}
	if hasFail {
		if hasValue {
			return nil, taskError(name, "", "", "fail", "a signal has value (the task completes) or fail (it fails), not both")
		}
		s.Kind, s.Value = engine.OutcomeFailed, nil
	}
	return s, nil
}
