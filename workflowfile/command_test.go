package workflowfile

import (
	"encoding/json"
	"errors"
	"github.com/weirflow/weir/shell"
	"strings"
	"testing"
)

// A command no worker could start is refused at the submit, naming its
// place: one over shell.MaxCommand bytes (sh -c's argument) or holding a NUL.
func TestCommandThatCannotStart(t *testing.T) {
	t.Parallel()
	long := ": " + strings.Repeat("x", shell.MaxCommand-1) // shell.MaxCommand+1 bytes
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	task := func(fields map[string]any) map[string]any {
		m := map[string]any{"name": "a"}
		for k, v := range fields {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		name, doc  string
		path, want string
	}{
		{"long run", js(map[string]any{"tasks": []any{task(map[string]any{"run": long})}}), "tasks[0].run", "over the limit of 131071"},
		{"long undo", js(map[string]any{"tasks": []any{task(map[string]any{"run": "x", "undo": map[string]any{"run": long}})}}), "tasks[0].undo.run", "over the limit of 131071"},
		{"long step", js(map[string]any{"batch": map[string]any{"steps": []any{task(map[string]any{"run": long})}}}), "batch.steps[0].run", "put it in a script file"},
		{"NUL in run", `{"tasks":[{"name":"a","run":"echo a\u0000b"}]}`, "tasks[0].run", "NUL byte (at byte 6)"},
		{"NUL in undo", `{"tasks":[{"name":"a","run":"x","undo":{"run":"\u0000"}}]}`, "tasks[0].undo.run", "NUL byte (at byte 0)"},
		{"NUL in YAML", "tasks:\n  - name: a\n    run: \"echo \\0\"\n", "tasks[0].run", "NUL byte"},
		{"NUL in a callback", `{"chain":{"steps":[{"name":"a","run":"x"}],"finally":{"run":"a\u0000"}}}`, "chain.finally.run", "NUL byte"},
	} {
		_, err := Parse("w", []byte(c.doc), Options{Dir: "/d"})
		var fe *Error
		if !errors.As(err, &fe) || fe.Path != c.path || !strings.Contains(fe.Problem, c.want) {
			t.Errorf("%s: %v, want an error at %s: %s", c.name, err, c.path, c.want)
		}
	}
	// A file of tasks to add is checked the same way.
	if _, _, err := ParseAdded("add", []byte(`{"tasks":[{"name":"b","run":"\u0000"}]}`), Options{}); err == nil || !strings.Contains(err.Error(), "NUL byte") {
		t.Errorf("an added task with a NUL: %v", err)
	}
	// shell.MaxCommand bytes are fine.
	ok := js(map[string]any{"tasks": []any{task(map[string]any{"run": long[:shell.MaxCommand], "undo": map[string]any{"run": long[:shell.MaxCommand]}})}})
	if _, err := Parse("w", []byte(ok), Options{Dir: "/d"}); err != nil {
		t.Errorf("a command of shell.MaxCommand bytes: %v", err)
	}
}
