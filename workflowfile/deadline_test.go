package workflowfile

import (
	"errors"
	"testing"
	"time"
)

// deadline: a duration is DeadlineIn, an RFC 3339 time Deadline; anything
// else, a zero or negative duration, and a plan the engine refuses (more
// than 100 years) name the field.
func TestDeadlineField(t *testing.T) {
	f, err := Parse("f.yaml", []byte("deadline: 2h\ntasks: [{name: a, run: x}]"), Options{})
	if err != nil || f.Plan.DeadlineIn != 2*time.Hour || !f.Plan.Deadline.IsZero() {
		t.Fatalf("deadline 2h: %+v, %v", f, err)
	}
	f, err = Parse("f.json", []byte(`{"deadline": "2026-12-24T18:00:00+01:00", "tasks": [{"name": "a", "run": "x"}]}`), Options{})
	if err != nil || !f.Plan.Deadline.Equal(time.Date(2026, 12, 24, 17, 0, 0, 0, time.UTC)) || f.Plan.DeadlineIn != 0 {
		t.Fatalf("deadline at a time: %+v, %v", f, err)
	}
	for _, doc := range []string{
		"deadline: soon\ntasks: [{name: a, run: x}]",
		"deadline: 0s\ntasks: [{name: a, run: x}]",
		"deadline: -1h\ntasks: [{name: a, run: x}]",
		"deadline: 1500us\ntasks: [{name: a, run: x}]",
		"deadline: 1000000h\ntasks: [{name: a, run: x}]",
	} {
		_, err := Parse("f.yaml", []byte(doc), Options{})
		var fe *Error
		if !errors.As(err, &fe) || fe.Field != "deadline" && fe.Field != "deadline_in" {
			t.Errorf("%q: %v, want an error in field deadline", doc, err)
		}
	}
}
