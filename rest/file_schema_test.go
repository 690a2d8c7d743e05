package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weirflow/weir/shell"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	"github.com/weirflow/weir/workflowfile"
)

// The request schemas of spec/openapi.yaml against the server's own reading
// of the same documents (workflowfile.Parse, ParseJob): every file of
// examples/ is valid by both, each field the format documents is in the
// schema and known to the server, and documents that use each field, well
// and badly, get the same verdict from both, except where a case says why
// the schema cannot say it.

// jsonOf is the JSON value a client sends for the YAML (or JSON) document
// data: scalars by their YAML tag (a timestamp is its text), aliases and
// merge keys expanded; numbers as encoding/json decodes them.
func jsonOf(t *testing.T, data []byte) any {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var conv func(n *yaml.Node) any
	conv = func(n *yaml.Node) any {
		for n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		switch n.Kind {
		case yaml.DocumentNode:
			return conv(n.Content[0])
		case yaml.SequenceNode:
			l := []any{}
			for _, e := range n.Content {
				l = append(l, conv(e))
			}
			return l
		case yaml.MappingNode:
			m := map[string]any{}
			var merged []map[string]any
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.ShortTag() == "!!merge" {
					switch mv := conv(v).(type) {
					case map[string]any:
						merged = append(merged, mv)
					case []any:
						for _, e := range mv {
							merged = append(merged, e.(map[string]any))
						}
					}
					continue
				}
				m[k.Value] = conv(v)
			}
			for _, mm := range merged {
				for k, v := range mm {
					if _, ok := m[k]; !ok {
						m[k] = v
					}
				}
			}
			return m
		}
		switch n.ShortTag() {
		case "!!str", "!!timestamp":
			return n.Value
		case "!!null":
			return nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				t.Fatalf("line %d: %v", n.Line, err)
			}
			return b
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil {
				t.Fatalf("line %d: %v", n.Line, err)
			}
			return i
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				t.Fatalf("line %d: %v", n.Line, err)
			}
			return f
		}
		t.Fatalf("line %d: a scalar tagged %s", n.Line, n.Tag)
		return nil
	}
	b, err := json.Marshal(conv(&doc))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// short is a schema error without the schema it dumps: where and why.
func short(err error) string {
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return fmt.Sprintf("at /%s: %s", strings.Join(se.JSONPointer(), "/"), se.Reason)
	}
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// Every workflow file in examples/ (and every job document, by its own
// schema, should one be added) validates against the schema of the REST
// API's request body, and the server accepts it, in its own syntax and as
// the JSON a client would send: a client generated from the document can
// submit every example.
func TestExamplesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	doc, _ := loadSpec(t, "http://127.0.0.1:1")
	schemas := doc.Components.Schemas
	var files []string
	err := filepath.WalkDir("../examples", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 9 || !slices.Contains(files, "../examples/approval.yaml") {
		t.Fatalf("examples found: %v", files) // the walk must find them
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v := jsonOf(t, data)
		js, _ := json.Marshal(v)
		m, _ := v.(map[string]any)
		if _, job := m["queue"]; job {
			// a job document (weir enqueue, POST /v1/jobs)
			if err := schemas["JobRequest"].Value.VisitJSON(v); err != nil {
				t.Errorf("%s: the JobRequest schema refuses it: %s", path, short(err))
			}
			if _, err := workflowfile.ParseJob(path, js, workflowfile.Options{Format: workflowfile.FormatJSON}); err != nil {
				t.Errorf("%s as JSON: %v", path, err)
			}
			continue
		}
		if err := schemas["WorkflowFile"].Value.VisitJSON(v); err != nil {
			t.Errorf("%s: the WorkflowFile schema refuses it: %s", path, short(err))
		}
		if _, err := workflowfile.Parse(path, data, workflowfile.Options{Dir: "/d"}); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if _, err := workflowfile.Parse(path, js, workflowfile.Options{Format: workflowfile.FormatJSON}); err != nil {
			t.Errorf("%s as JSON: %v", path, err)
		}
	}
}

// docFields are the fields a table of spec/workflow-file.md lists under
// the heading (its first column).
func docFields(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile("../spec/workflow-file.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("spec/workflow-file.md has no %q", heading)
	}
	if end := strings.Index(after, "\n#"); end >= 0 {
		after = after[:end]
	}
	var fields []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\|").FindAllStringSubmatch(after, -1) {
		fields = append(fields, m[1])
	}
	return fields
}

// The schema has every field spec/workflow-file.md documents, and no
// other; the server knows each of them (a document giving one is not
// refused as an unknown field).
func TestOpenAPIHasTheFileFields(t *testing.T) {
	t.Parallel()
	doc, _ := loadSpec(t, "http://127.0.0.1:1")
	schemas := doc.Components.Schemas
	keys := func(s *openapi3.Schema) []string {
		var k []string
		for name := range s.Properties {
			k = append(k, name)
		}
		slices.Sort(k)
		return k
	}
	workflow, task := docFields(t, "### Workflow"), docFields(t, "### Task")
	var taskOwn, undo []string
	for _, f := range task {
		if u, ok := strings.CutPrefix(f, "undo."); ok {
			undo = append(undo, u)
		} else {
			taskOwn = append(taskOwn, f)
		}
	}
	for _, c := range []struct {
		schema string
		doc    []string
	}{{"WorkflowFile", workflow}, {"TaskFields", taskOwn}, {"UndoFile", undo}} {
		want := slices.Sorted(slices.Values(c.doc))
		if schemas[c.schema] == nil {
			t.Errorf("no schema %s", c.schema)
			continue
		}
		if got := keys(schemas[c.schema].Value); !slices.Equal(got, want) {
			t.Errorf("%s has the fields %v; spec/workflow-file.md documents %v", c.schema, got, want)
		}
	}
	if len(workflow) < 9 || len(taskOwn) < 16 || len(undo) < 3 {
		t.Fatalf("the tables read: %v, %v", workflow, task) // the reading must find them
	}
	known := func(doc string) {
		t.Helper()
		_, err := workflowfile.Parse("w", []byte(doc), workflowfile.Options{Format: workflowfile.FormatJSON})
		if err != nil && strings.Contains(err.Error(), "unknown field") {
			t.Errorf("%s: %v", doc, err)
		}
	}
	for _, f := range workflow {
		known(fmt.Sprintf(`{%q: true, "tasks": [{"name": "a", "run": "x"}]}`, f))
	}
	for _, f := range taskOwn {
		known(fmt.Sprintf(`{"tasks": [{"name": "a", %q: true}]}`, f))
	}
	for _, f := range undo {
		known(fmt.Sprintf(`{"tasks": [{"name": "a", "run": "x", "undo": {%q: true}}]}`, f))
	}
}

// schemaCase is a request body, the server's verdict on it, and why the
// schema's differs, when it does.
type schemaCase struct {
	name, doc string
	ok        bool   // the server accepts it
	why       string // the schema gives the other verdict: why it cannot say it
}

// checkSchemaCases checks each case's body against schema and parse, the
// server's reading of it.
func checkSchemaCases(t *testing.T, schema *openapi3.Schema, parse func([]byte) error, cases []schemaCase) {
	t.Helper()
	for _, c := range cases {
		var v any
		if err := json.Unmarshal([]byte(c.doc), &v); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		serverErr, specErr := parse([]byte(c.doc)), schema.VisitJSON(v)
		switch {
		case (serverErr == nil) != c.ok:
			t.Errorf("%s: the server says %v, want ok %v", c.name, serverErr, c.ok)
		case c.why == "" && (specErr == nil) != c.ok:
			t.Errorf("%s: the server says %v, the schema %s", c.name, serverErr, short(specErr))
		case c.why != "" && (specErr == nil) == c.ok:
			t.Errorf("%s: the schema now agrees with the server (%s): drop the case's why", c.name, short(specErr))
		}
	}
}

// A workflow file that uses each field, well and badly: the schema and the
// server agree on it, or the case says why the schema cannot.
func TestWorkflowFileSchemaAgreesWithServer(t *testing.T) {
	t.Parallel()
	doc, _ := loadSpec(t, "http://127.0.0.1:1")
	parse := func(b []byte) error {
		_, err := workflowfile.Parse("w", b, workflowfile.Options{Format: workflowfile.FormatJSON})
		return err
	}
	task := func(fields string) string { return `{"tasks":[{"name":"a","run":"x"},{"name":"b"` + fields + `}]}` }
	group := func(kind, fields string) string {
		return `{"` + kind + `":{"steps":[{"name":"s1","run":"x"},{"name":"s2","run":"y"}]` + fields + `}}`
	}
	long := strings.Repeat("x", shell.MaxCommand)
	const calendar = "a calendar's rules"
	cases := []schemaCase{
		// Every field, well used.
		{"every workflow field", `{"id":"w-1","fail_fast":true,"undo_on_cancel":false,"start_at":"2030-01-02T03:04:05Z","deadline":"2h",
			"webhook":{"url":"https://example.com/h","secret":"billing","queue":"hooks","attempts":3,"backoff":"2s"},
			"tasks":[{"name":"a","run":"x"}]}`, true, ""},
		{"every task field", `{"tasks":[{"name":"a","run":"x"},{"name":"b","run":"y","queue":"q","priority":-3,"key":"tenant-7","after":["a"],
			"always":true,"retries":2,"max_expiries":0,"backoff":"250ms","timeout":"1m30s","delay":"10m","undo":{"run":"z","queue":"u"}},
			{"name":"c","after":["a"],"on_failure":true,"queue":"go","payload":{"n":[1,null]},"undo":{"payload":"p"}}]}`, true, ""},
		{"a signal task", task(`,"after":["a"],"signal":true,"timeout":"24h"`), true, ""},
		{"a signal task that is false", task(`,"run":"y","signal":false`), true, ""},
		{"a deadline at a time", `{"deadline":"2030-01-02T03:04:05.5+01:00","tasks":[{"name":"a","run":"x"}]}`, true, ""},
		{"a start time with an offset", `{"start_at":"2030-01-02T03:04:05.123-07:30","tasks":[{"name":"a","run":"x"}]}`, true, ""},
		{"a chain with everything", group("chain", `,"name":"c.1","then":{"run":"t","queue":"q","retries":1,"undo":{"run":"u"}},"catch":{"run":"c"},"finally":{"run":"f","delay":"1s","key":"k"}`), true, ""},
		{"a batch with everything", group("batch", `,"name":"emails","allow_failures":true,"then":{"run":"t"},"catch":{"queue":"go","payload":1},"finally":{"run":"f"}`), true, ""},
		{"steps with task fields", `{"batch":{"steps":[{"name":"s","run":"x","always":true,"retries":1,"priority":5,"delay":"1s","undo":{"run":"u"}},{"name":"g","signal":true}]}}`, true, ""},
		{"callbacks with always and on_failure false", group("batch", `,"then":{"run":"t","always":false,"on_failure":false}`), true, ""},
		{"a step with on_failure false", `{"chain":{"steps":[{"name":"s","run":"x","on_failure":false}]}}`, true, ""},
		{"a group name of 56", group("chain", `,"name":"`+strings.Repeat("n", 56)+`","finally":{"run":"f"}`), true, ""},
		{"a group name .", group("chain", `,"name":"."`), true, ""},
		{"the longest command", task(`,"run":"` + long + `","undo":{"run":"` + long + `"}`), true, ""},

		// Badly used: both refuse.
		{"start_at not a time", `{"start_at":"tomorrow","tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"start_at without a zone", `{"start_at":"2030-01-02T03:04:05","tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"start_at in lower case", `{"start_at":"2030-01-02t03:04:05z","tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"start_at off the calendar", `{"start_at":"2030-02-30T00:00:00Z","tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"start_at a number", `{"start_at":1,"tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"deadline neither", `{"deadline":"soon","tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"deadline negative", `{"deadline":"-1h","tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"signal a string", task(`,"signal":"yes"`), false, ""},
		{"delay not a duration", task(`,"run":"y","delay":"1 minute"`), false, ""},
		{"delay negative", task(`,"run":"y","delay":"-1s"`), false, ""},
		{"webhook attempts over", `{"webhook":{"url":"http://h/","attempts":1001},"tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"webhook backoff not a duration", `{"webhook":{"url":"http://h/","backoff":"fast"},"tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"webhook without url", `{"webhook":{"secret":"s"},"tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"webhook unknown field", `{"webhook":{"url":"http://h/","colour":1},"tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"a callback with a name", group("chain", `,"then":{"name":"t","run":"t"}`), false, ""},
		{"a callback with after", group("chain", `,"finally":{"run":"f","after":["s1"]}`), false, ""},
		{"a callback always", group("batch", `,"then":{"run":"t","always":true}`), false, ""},
		{"a callback on_failure", group("batch", `,"catch":{"run":"t","on_failure":true}`), false, ""},
		{"a callback with an unknown field", group("batch", `,"then":{"run":"t","colour":1}`), false, ""},
		{"a callback null", group("batch", `,"then":null`), false, ""},
		{"a step with after", `{"batch":{"steps":[{"name":"s","run":"x"},{"name":"t","run":"x","after":["s"]}]}}`, false, ""},
		{"a step with empty after", `{"batch":{"steps":[{"name":"s","run":"x","after":[]}]}}`, false, ""},
		{"a step on_failure", `{"batch":{"steps":[{"name":"s","run":"x"},{"name":"t","run":"x","on_failure":true}]}}`, false, ""},
		{"a step without a name", `{"batch":{"steps":[{"run":"x"}]}}`, false, ""},
		{"a group name of 57", group("chain", `,"name":"`+strings.Repeat("n", 57)+`"`), false, ""},
		{"a group name with a space", group("batch", `,"name":"a b"`), false, ""},
		{"an empty group name", group("batch", `,"name":""`), false, ""},
		{"no steps", `{"chain":{"steps":[]}}`, false, ""},
		{"no steps field", `{"chain":{"then":{"run":"x"}}}`, false, ""},
		{"tasks and a chain", `{"tasks":[{"name":"a","run":"x"}],"chain":{"steps":[{"name":"s","run":"x"}]}}`, false, ""},
		{"no tasks and a chain", `{"tasks":[],"chain":{"steps":[{"name":"s","run":"x"}]}}`, false, ""},
		{"a chain and a batch", `{"chain":{"steps":[{"name":"s","run":"x"}]},"batch":{"steps":[{"name":"t","run":"x"}]}}`, false, ""},
		{"a command too long", task(`,"run":"` + long + `x"`), false, ""},
		{"an undo command too long", task(`,"run":"y","undo":{"run":"` + long + `x"}`), false, ""},
		{"a NUL in a command", task(`,"run":"a\u0000"`), false, ""},
		{"gate_dependents in a workflow file", `{"gate_dependents":true,"tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"an empty id", `{"id":"","tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"an empty webhook secret", `{"webhook":{"url":"http://h/","secret":""},"tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"an empty start_at", `{"start_at":"","tasks":[{"name":"a","run":"x"}]}`, false, ""},
		{"an empty timeout", task(`,"run":"y","timeout":""`), false, ""},
		{"an empty queue", task(`,"run":"y","queue":""`), false, ""},
		{"id ..", `{"id":"..","tasks":[{"name":"a","run":"x"}]}`, false, ""},

		// The server refuses; the schema cannot say why.
		{"a zero deadline", `{"deadline":"0s","tasks":[{"name":"a","run":"x"}]}`, false, "a zero duration"},
		{"a deadline off the calendar", `{"deadline":"2030-02-30T00:00:00Z","tasks":[{"name":"a","run":"x"}]}`, false, calendar},
		{"a delay in microseconds", task(`,"run":"y","delay":"1500us"`), false, "whole milliseconds"},
		{"a signal task with run", task(`,"signal":true,"run":"y"`), false, acrossFields},
		{"a signal task with a delay", task(`,"signal":true,"delay":"1s"`), false, acrossFields},
		{"a start time and a signal root", `{"start_at":"2030-01-02T03:04:05Z","tasks":[{"name":"a","signal":true}]}`, false, acrossFields},
		{"a task with neither run nor payload", task(``), false, acrossFields},
		{"a chain allowing failures", group("chain", `,"allow_failures":true`), false, acrossFields},
		{"on_failure without after", `{"tasks":[{"name":"a","run":"x","on_failure":true}]}`, false, acrossFields},
		{"webhook url not http", `{"webhook":{"url":"ftp://h/"},"tasks":[{"name":"a","run":"x"}]}`, false, "a URL's scheme"},

		// The server accepts; the schema refuses.
		{"a decimal comma", `{"start_at":"2030-01-02T03:04:05,5Z","tasks":[{"name":"a","run":"x"}]}`, true, "Go reads a decimal comma; RFC 3339 has none"},
	}
	checkSchemaCases(t, doc.Components.Schemas["WorkflowFile"].Value, parse, cases)
}

// A job document's times: the schema and the server agree.
func TestJobRequestSchemaAgreesWithServer(t *testing.T) {
	t.Parallel()
	doc, _ := loadSpec(t, "http://127.0.0.1:1")
	parse := func(b []byte) error {
		_, err := workflowfile.ParseJob("job", b, workflowfile.Options{Format: workflowfile.FormatJSON})
		return err
	}
	checkSchemaCases(t, doc.Components.Schemas["JobRequest"].Value, parse, []schemaCase{
		{"every field", `{"id":"j","queue":"q","payload":[1],"priority":1,"retries":1,"max_expiries":2,"backoff":"1s","timeout":"2s",
			"run_at":"2030-01-02T03:04:05.250Z","unique":{"key":"k","for":"1m"},"key":"tenant"}`, true, ""},
		{"a delay", `{"queue":"q","delay":"10m"}`, true, ""},
		{"run_at not a time", `{"queue":"q","run_at":"tomorrow"}`, false, ""},
		{"run_at without a zone", `{"queue":"q","run_at":"2030-01-02T03:04:05"}`, false, ""},
		{"an empty id", `{"id":"","queue":"q"}`, false, ""},
		{"id .", `{"id":".","queue":"q"}`, false, ""},
		{"a key ..", `{"queue":"q","key":".."}`, false, ""},
		{"delay and run_at", `{"queue":"q","delay":"1s","run_at":"2030-01-02T03:04:05Z"}`, false, acrossFields},
	})
}

// acrossFields is why a schema cannot say a rule: it is across fields.
const acrossFields = "a rule across fields"
