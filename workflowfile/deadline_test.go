package workflowfile

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// deadline: a duration is DeadlineIn, an RFC 3339 time Deadline; anything
// else, a zero or negative duration, and a plan the engine refuses (more
// than 100 years) name the field, deadline (not the engine's deadline_in),
// and say what is wrong with it.
func TestDeadlineField(t *testing.T) {
	f, err := Parse("f.yaml", []byte("deadline: 2h\ntasks: [{name: a, run: x}]"), Options{})
	if err != nil || f.Plan.DeadlineIn != 2*time.Hour || !f.Plan.Deadline.IsZero() {
		t.Fatalf("deadline 2h: %+v, %v", f, err)
	}
	f, err = Parse("f.json", []byte(`{"deadline": "2026-12-24T18:00:00+01:00", "tasks": [{"name": "a", "run": "x"}]}`), Options{})
	if err != nil || !f.Plan.Deadline.Equal(time.Date(2026, 12, 24, 17, 0, 0, 0, time.UTC)) || f.Plan.DeadlineIn != 0 {
		t.Fatalf("deadline at a time: %+v, %v", f, err)
	}
	for _, c := range []struct{ deadline, problem string }{
		{"soon", "neither a duration after the submit"},
		{"0s", "a deadline is a positive duration"},
		{`"0"`, "a deadline is a positive duration"},
		{"-1h", "is negative"},
		{"1500us", "is not whole milliseconds"},
		{"1000000h", "100 years"},
	} {
		doc := "deadline: " + c.deadline + "\ntasks: [{name: a, run: x}]"
		_, err := Parse("f.yaml", []byte(doc), Options{})
		var fe *Error
		if !errors.As(err, &fe) || fe.Field != "deadline" || !strings.Contains(fe.Problem, c.problem) {
			t.Errorf("%q: %v, want an error in field deadline saying %q", doc, err, c.problem)
		}
	}
}
