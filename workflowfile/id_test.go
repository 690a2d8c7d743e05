package workflowfile

import (
	"errors"
	"strings"
	"testing"
)

// An empty id is refused, never replaced by a generated one: in a
// workflow file and in a job document, in YAML and in JSON.
func TestEmptyIDRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		format Format
		doc    string
		job    bool
	}{
		{FormatYAML, "id: ''\ntasks: [{name: a, run: x}]\n", false},
		{FormatYAML, "id: \"\"\ntasks: [{name: a, run: x}]\n", false},
		{FormatJSON, `{"id":"","tasks":[{"name":"a","run":"x"}]}`, false},
		{FormatYAML, "id: ''\nqueue: q\n", true},
		{FormatJSON, `{"id":"","queue":"q"}`, true},
	} {
		var err error
		if c.job {
			_, err = ParseJob("w", []byte(c.doc), Options{Format: c.format})
		} else {
			_, err = Parse("w", []byte(c.doc), Options{Format: c.format, Dir: "/d"})
		}
		var fe *Error
		if !errors.As(err, &fe) || fe.Path != "id" || !strings.Contains(fe.Problem, "an empty ID") {
			t.Errorf("%q: %v, want an error at id: an empty ID", c.doc, err)
		}
	}
	// Left out, it is generated.
	if f, err := Parse("w", []byte("tasks: [{name: a, run: x}]\n"), Options{}); err != nil || f.Plan.ID == "" {
		t.Errorf("no id: %v", err)
	}
}
