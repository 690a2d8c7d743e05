package workflowfile

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"reflect"
	"strings"
	"testing"
)

// The strict decoding of decode.go: each looseness a lenient decoder
// would let through (case-variant and duplicate keys, unknown fields) is
// refused in JSON and in YAML, naming the field by its full path.
func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		format     Format
		doc        string
		path, want string // want: a substring of the problem
	}{
		// Keys match by exact name.
		{FormatJSON, `{"Tasks":[{"name":"a","run":"x"}]}`, "Tasks", "unknown field"},
		{FormatJSON, `{"tasks":[{"Name":"a","RUN":"true"}]}`, "tasks[0].Name", "unknown field"},
		{FormatYAML, "TASKS: [{name: a, run: x}]\n", "TASKS", "unknown field"},
		// A key given twice.
		{FormatJSON, `{"id":"a","id":"b","tasks":[{"name":"a","run":"x"}]}`, "id", `"id" is given twice`},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","run":"y"}]}`, "tasks[0].run", "given twice"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","undo":{"run":"y","run":"z"}}]}`, "tasks[0].undo.run", "given twice"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","na\u006de":"b"}]}`, "tasks[0].name", "given twice"},
		{FormatYAML, "id: a\nid: b\ntasks: [{name: a, run: x}]\n", "id", "line 2: the key \"id\" is given twice (also line 1)"},
		{FormatYAML, "tasks:\n  - name: a\n    run: x\n    name: b\n", "tasks[0].name", "given twice"},
		// null for a field that is not nullable (none is).
		{FormatJSON, `{"id":null,"tasks":[{"name":"a","run":"x"}]}`, "id", "null is not allowed"},
		{FormatJSON, `{"fail_fast":null,"tasks":[{"name":"a","run":"x"}]}`, "fail_fast", "null is not allowed"},
		{FormatJSON, `{"undo_on_cancel":null,"tasks":[{"name":"a","run":"x"}]}`, "undo_on_cancel", "null is not allowed"},
		{FormatJSON, `{"tasks":null}`, "tasks", "null is not allowed"},
		{FormatJSON, `{"tasks":[null]}`, "tasks[0]", "null is not a task"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","after":null}]}`, "tasks[0].after", "null is not allowed"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x"},{"name":"b","run":"x","after":["a",null]}]}`, "tasks[1].after[1]", "null is not a string"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","undo":null}]}`, "tasks[0].undo", "null is not an undo"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","retries":null}]}`, "tasks[0].retries", "null is not allowed"},
		{FormatJSON, `{"tasks":[{"name":null,"run":"x"}]}`, "tasks[0].name", "null is not allowed"},
		{FormatYAML, "id: ~\ntasks: [{name: a, run: x}]\n", "id", "line 1: null is not allowed"},
		{FormatYAML, "fail_fast:\ntasks: [{name: a, run: x}]\n", "fail_fast", "null is not allowed"},
		{FormatYAML, "tasks:\n  - name: a\n    run: x\n    after: [~]\n", "tasks[0].after[0]", "null is not a string"},
		{FormatYAML, "tasks: [~]\n", "tasks[0]", "null is not a task"},
		{FormatYAML, "tasks:\n  - name: a\n    run: x\n    undo:\n", "tasks[0].undo", "null is not an undo"},
		// Unknown fields, at their full path.
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","undo":{"run":"y","colour":1}}]}`, "tasks[0].undo.colour", "unknown field"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x"},{"name":"b","run":"x","colour":"red"}]}`, "tasks[1].colour", "unknown field"},
		{FormatJSON, `{"colour":1,"tasks":[{"name":"a","run":"x"}]}`, "colour", "unknown field"},
		{FormatYAML, "tasks:\n  - name: a\n    run: x\n    undo:\n      run: y\n      colour: red\n", "tasks[0].undo.colour", "line 6: unknown field"},
		// Types.
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","retries":3.0}]}`, "tasks[0].retries", "the JSON number 3.0 is not an integer"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","retries":1e2}]}`, "tasks[0].retries", "is not an integer"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","retries":99999999999}]}`, "tasks[0].retries", "out of range"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","retries":"3"}]}`, "tasks[0].retries", "a JSON string is not an integer"},
		{FormatJSON, `{"tasks":[{"name":"a","run":1}]}`, "tasks[0].run", "is not a string"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x","after":"b"}]}`, "tasks[0].after", "is not a list of task names"},
		{FormatJSON, `{"tasks":{}}`, "tasks", "a JSON object is not a list of tasks"},
		{FormatJSON, `[1,2]`, "", "a JSON array is not a workflow (an object)"},
		{FormatYAML, "fail_fast: yes\ntasks: [{name: a, run: x}]\n", "fail_fast", "`yes` is not true or false"},
		{FormatYAML, "tasks: [{name: a, run: x, retries: 3.0}]\n", "tasks[0].retries", "`3.0` is not an integer"},
		{FormatYAML, "tasks: [{name: a, run: !!binary aGk=}]\n", "tasks[0].run", "tag !!binary is not supported"},
		{FormatYAML, "- a\n", "", "a list is not a workflow (a mapping)"},
		{FormatYAML, "tasks:\n  - &t\n    name: a\n    <<: *t\n", "tasks[0]", "takes the fields of the mapping it is in"},
		{FormatYAML, "tasks:\n  - name: a\n    run: x\n    undo: &u {run: x, <<: [{q: 1}, *u]}\n", "tasks[0].undo", "takes the fields of the mapping it is in"},
		// Syntax and shape.
		{FormatJSON, `{"tasks":[{"name":"a","run":"x"}]} {}`, "", "more than one JSON value"},
		{FormatJSON, `{"tasks":[{"name":"a","run":"x"}]} x`, "", "data after the JSON value"},
		{FormatJSON, `{"tasks":[`, "", "ends in the middle"},
		{FormatJSON, `{"tasks":[}`, "", "invalid character"},
		{FormatJSON, "{\"id\":\"\xff\"}", "", "not UTF-8"},
		{FormatJSON, strings.Repeat("[", 100) + strings.Repeat("]", 100), "", "nested more than 64 deep"},
		{FormatJSON, "  ", "", "the file is empty"},
		{FormatYAML, "tasks: [a\n", "", "invalid YAML"},
		{FormatYAML, "tasks: []\n---\nid: x\n", "", "more than one document"},
	} {
		_, err := Parse("w", []byte(c.doc), Options{Format: c.format, Dir: "/d"})
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want an *Error at %q", c.doc, err, c.path)
			continue
		}
		if fe.Path != c.path || !strings.Contains(fe.Problem, c.want) {
			t.Errorf("%s: error at %q: %q, want at %q: %q", c.doc, fe.Path, fe.Problem, c.path, c.want)
		}
		for _, leak := range []string{"workflowfile.", "[]string", "*bool", "interface {}"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: the error shows a Go type (%q): %v", c.doc, leak, err)
			}
		}
	}
}

// A task with a valid name is named in the error, whatever the order of
// its fields.
func TestDecodeNamesTheTask(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"tasks":[{"retries":"x","name":"fetch","run":"x"}]}`,
		"tasks:\n  - retries: x\n    name: fetch\n    run: x\n",
	} {
		_, err := Parse("w", []byte(doc), Options{Dir: "/d"})
		var fe *Error
		if !errors.As(err, &fe) || fe.TaskName != "fetch" || fe.Task != `task "fetch"` || fe.Path != "tasks[0].retries" {
			t.Errorf("%s: %#v", doc, err)
		}
	}
}

// A file reads the same in JSON and in YAML; YAML's anchors, aliases and
// merge keys still work.
func TestDecodeJSONAndYAMLAgree(t *testing.T) {
	t.Parallel()
	limits := weir.DefaultLimits()
	j := `{"id":"w","fail_fast":true,"undo_on_cancel":false,"tasks":[
		{"name":"a","run":"echo a","queue":"q","retries":2,"backoff":"250ms","timeout":"1m30s"},
		{"name":"b","run":"echo b","after":["a"],"always":true,"undo":{"run":"echo u","queue":"u"}}]}`
	y := `id: w
fail_fast: true
undo_on_cancel: false
tasks:
  - &a {name: a, run: echo a, queue: q, retries: 2, backoff: 250ms, timeout: 1m30s}
  - <<: *a
    name: b
    run: echo b
    queue: default
    retries: 0
    backoff: "0"
    timeout: "0"
    after: [a]
    always: true
    undo: {run: echo u, queue: u}
`
	fj, err := decodeFile("w", []byte(j), FormatJSON, limits)
	if err != nil {
		t.Fatal(err)
	}
	fy, err := decodeFile("w", []byte(y), FormatYAML, limits)
	if err != nil {
		t.Fatal(err)
	}
	// The merge key gave b nothing it set itself.
	fj.Tasks[1].Queue, fj.Tasks[1].Backoff, fj.Tasks[1].Timeout = "default", "0", "0"
	// and b's fields given are its own and the merged ones, once each
	if got := strings.Join(fy.Tasks[1].set, " "); got != "name run queue retries backoff timeout after always undo" {
		t.Errorf("YAML b's fields given: %s", got)
	}
	fj.Tasks[1].set = fy.Tasks[1].set
	if !reflect.DeepEqual(fj, fy) {
		t.Errorf("JSON %+v\nYAML %+v", fj, fy)
	}
}

// Aliases of aliases cannot make the decoder visit more values than its
// budget: each task merges (<<) ten aliases of the previous task, so the
// last one expands to 10^12 mappings.
func TestDecodeAliasBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("tasks:\n  - &t0 {name: t0, run: x}\n")
	for i := 1; i < 13; i++ {
		fmt.Fprintf(&b, "  - &t%d\n    name: t%d\n    <<: [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*t%d", i-1)
		}
		b.WriteString("]\n")
	}
	_, err := decodeFile("w", []byte(b.String()), FormatYAML, weir.DefaultLimits())
	if err == nil || !strings.Contains(err.Error(), "too many values") {
		t.Fatalf("an alias bomb: %v", err)
	}
}
