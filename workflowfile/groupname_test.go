package workflowfile

import (
	"errors"
	"strings"
	"testing"
)

// A chain's or batch's name is checked whether or not it has callbacks
// (each callback is the task "<name>.<callback>"), and a group comes
// without tasks, even an empty list of them.
func TestGroupNameAndTasks(t *testing.T) {
	t.Parallel()
	steps := `"steps":[{"name":"s","run":"x"}]`
	for _, c := range []struct {
		doc, path, want string
	}{
		{`{"chain":{"name":"` + strings.Repeat("n", 57) + `",` + steps + `}}`, "chain.name", "must match ^[A-Za-z0-9_.-]{1,56}$"},
		{`{"batch":{"name":"a b",` + steps + `}}`, "batch.name", `group name "a b"`},
		{`{"batch":{"name":"",` + steps + `}}`, "batch.name", `group name ""`},
		{`{"tasks":[],"chain":{` + steps + `}}`, "chain", "tasks or a chain, not both"},
	} {
		_, err := Parse("w", []byte(c.doc), Options{Dir: "/d"})
		var fe *Error
		if !errors.As(err, &fe) || fe.Path != c.path || !strings.Contains(fe.Problem, c.want) {
			t.Errorf("%s: %v, want an error at %s: %s", c.doc, err, c.path, c.want)
		}
	}
	for _, name := range []string{strings.Repeat("n", 56), ".", "a.b"} {
		doc := `{"chain":{"name":"` + name + `",` + steps + `,"then":{"run":"t"},"catch":{"run":"c"},"finally":{"run":"f"}}}`
		if _, err := Parse("w", []byte(doc), Options{Dir: "/d"}); err != nil {
			t.Errorf("group name %q: %v", name, err)
		}
	}
}
