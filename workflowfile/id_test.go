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

// An optional string field given empty is refused at its path, never
// read as left out (the OpenAPI document's patterns refuse it too).
func TestEmptyOptionalStringsRefused(t *testing.T) {
	t.Parallel()
	task := func(f string) string { return `{"tasks":[{"name":"a","run":"x"` + f + `}]}` }
	for _, c := range []struct {
		doc, path string
		job       bool
	}{
		{task(`,"queue":""`), "tasks[0].queue", false},
		{task(`,"key":""`), "tasks[0].key", false},
		{task(`,"delay":""`), "tasks[0].delay", false},
		{task(`,"timeout":""`), "tasks[0].timeout", false},
		{task(`,"backoff":""`), "tasks[0].backoff", false},
		{task(`,"undo":{"run":"y","queue":""}`), "tasks[0].undo.queue", false},
		{`{"start_at":"","tasks":[{"name":"a","run":"x"}]}`, "start_at", false},
		{`{"deadline":"","tasks":[{"name":"a","run":"x"}]}`, "deadline", false},
		{`{"webhook":{"url":"http://h/","secret":""},"tasks":[{"name":"a","run":"x"}]}`, "webhook.secret", false},
		{`{"webhook":{"url":"http://h/","queue":""},"tasks":[{"name":"a","run":"x"}]}`, "webhook.queue", false},
		{`{"webhook":{"url":"http://h/","backoff":""},"tasks":[{"name":"a","run":"x"}]}`, "webhook.backoff", false},
		{`{"queue":"q","delay":""}`, "delay", true},
		{`{"queue":"q","run_at":""}`, "run_at", true},
		{`{"queue":"q","key":""}`, "key", true},
	} {
		var err error
		if c.job {
			_, err = ParseJob("w", []byte(c.doc), Options{Format: FormatJSON})
		} else {
			_, err = Parse("w", []byte(c.doc), Options{Format: FormatJSON, Dir: "/d"})
		}
		var fe *Error
		if !errors.As(err, &fe) || fe.Path != c.path || !strings.Contains(fe.Problem, "an empty value") {
			t.Errorf("%s: %v, want an error at %s: an empty value", c.doc, err, c.path)
		}
	}
}
