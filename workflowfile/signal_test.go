package workflowfile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// signal, timeout, delay and start_at read into the plan; a signal task
// with a command, a delay on a signal task and a bad start_at are refused
// naming the field.
func TestSignalAndDelayFields(t *testing.T) {
	f, err := Parse("f.yaml", []byte(`
start_at: 2026-12-24T18:00:00+01:00
tasks:
  - name: build
    run: make
    delay: 1m
  - name: approve
    after: [build]
    signal: true
    timeout: 24h
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Plan
	if !p.StartAt.Equal(time.Date(2026, 12, 24, 17, 0, 0, 0, time.UTC)) || p.Tasks[0].Delay != time.Minute {
		t.Errorf("start_at %v, delay %v", p.StartAt, p.Tasks[0].Delay)
	}
	a := p.Tasks[1]
	if !a.Signal || a.SignalTimeout != 24*time.Hour || a.Timeout != 0 || a.Payload != nil || a.Queue != DefaultQueue {
		t.Errorf("signal task %+v", a)
	}
	for _, c := range []struct{ doc, field string }{
		{"tasks: [{name: a, signal: true, run: x}]", "run"},
		{"tasks: [{name: a, signal: true, payload: 1, queue: q}]", "payload"},
		{"tasks: [{name: a, signal: true, delay: 1s}]", "delay"},
		{"tasks: [{name: a, signal: true, timeout: 1000000h}]", "timeout"},
		{"tasks: [{name: a, run: x, delay: soon}]", "delay"},
		{"start_at: tomorrow\ntasks: [{name: a, run: x}]", "start_at"},
		{"start_at: 2026-12-24T18:00:00Z\ntasks: [{name: a, signal: true}]", "start_at"},
	} {
		_, err := Parse("f.yaml", []byte(c.doc), Options{})
		var fe *Error
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want an error in field %s", c.doc, err, c.field)
		}
	}
}

// ParseSignal: value, fail, neither, both.
func TestParseSignal(t *testing.T) {
	s, err := ParseSignal("s", []byte(`{"value": {"by": "ana"}}`), Options{})
	if err != nil || s.Kind != engine.OutcomeCompleted || len(s.Value) == 0 {
		t.Errorf("value: %+v, %v", s, err)
	}
	s, err = ParseSignal("s", []byte(`{"fail": "no"}`), Options{})
	if err != nil || s.Kind != engine.OutcomeFailed || s.Reason != "no" || s.Value != nil {
		t.Errorf("fail: %+v, %v", s, err)
	}
	s, err = ParseSignal("s", []byte(`{}`), Options{})
	if err != nil || s.Kind != engine.OutcomeCompleted || string(s.Value) != "\xc0" {
		t.Errorf("empty: %+v, %v", s, err)
	}
	if _, err := ParseSignal("s", []byte(`{"value": 1, "fail": "x"}`), Options{}); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("both: %v", err)
	}
}
