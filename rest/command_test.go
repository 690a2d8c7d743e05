package rest

import (
	"github.com/weirflow/weir/shell"
	"net/http"
	"strings"
	"testing"
)

// A shell command no worker could start (over sh -c's argument bound, or
// with a NUL byte) is 400 at the submit, naming its field, and nothing is
// submitted; one of the bound is accepted.
func TestSubmitCommandThatCannotStart(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	long := strings.Repeat("x", shell.MaxCommand+1)
	for _, c := range []struct {
		body  wfFile
		field string
	}{
		{wfFile{"id": "long", "tasks": tasks(tk("a", long))}, "tasks[0].run"},
		{wfFile{"id": "long-undo", "tasks": tasks(tk("a", "true", "undo", map[string]any{"run": long}))}, "tasks[0].undo.run"},
		{wfFile{"id": "nul", "tasks": tasks(tk("a", "true"), tk("b", "echo \x00", "after", []string{"a"}))}, "tasks[1].run"},
	} {
		r := a.want(http.StatusBadRequest, "POST", "/v1/workflows", c.body)
		wantErr(t, r, "INVALID", c.field)
		a.want(http.StatusNotFound, "GET", "/v1/workflows/"+c.body["id"].(string), nil)
	}
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "longest", "tasks": tasks(tk("a", long[1:]))})
}
