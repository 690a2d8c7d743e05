package workflowfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
)

type inner struct {
	Name  string  `json:"name"`
	Ratio float64 `json:"ratio"`
}

type order struct {
	ID     int64             `json:"id"`
	Cents  uint64            `json:"cents"`
	Small  int8              `json:"small"`
	Price  float64           `json:"price"`
	OK     bool              `json:"ok"`
	Items  []inner           `json:"items"`
	ByName map[string]inner  `json:"by_name"`
	Extra  map[string]string `json:"extra"`
	Ptr    *inner            `json:"ptr"`
	Note   string            // no tag: matched by its name
}

// payloadOf parses a workflow file with one task whose payload is given
// as text in format, and returns the stored payload.
func payloadOf(t *testing.T, format Format, payload string) []byte {
	t.Helper()
	var doc string
	if format == FormatJSON {
		doc = `{"tasks": [{"name": "a", "queue": "q", "payload": ` + payload + `}]}`
	} else {
		doc = "tasks:\n  - name: a\n    queue: q\n    payload: " + payload + "\n"
	}
	f, err := Parse("f", []byte(doc), Options{Format: format})
	if err != nil {
		t.Fatalf("%s: %v", payload, err)
	}
	return f.Plan.Tasks[0].Payload
}

// A value a Go producer would send, written as JSON in a file, decodes into
// the same value in a Go handler.
func TestPayloadDecodesAsGoValue(t *testing.T) {
	want := order{
		ID: -1 << 62, Cents: 1<<64 - 1, Small: -8, Price: 2.5, OK: true,
		Items:  []inner{{"a", 0.25}, {"b", 3}},
		ByName: map[string]inner{"x": {"x", -1e-3}},
		Extra:  map[string]string{},
		Note:   "as is",
	}
	js, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	b := payloadOf(t, FormatJSON, string(js))
	got, err := client.Decode[order](b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, %v\nwant %+v", got, err, want)
	}
}

// JSON does not tell 1 from 1.0: an integral number is an integer, which
// int and float fields both take.
func TestPayloadNumbers(t *testing.T) {
	type nums struct {
		I int     `json:"i"`
		F float64 `json:"f"`
		U uint64  `json:"u"`
	}
	for _, tc := range []struct {
		json string
		want nums
	}{
		{`{"i": 1.0, "f": 2, "u": 3e2}`, nums{1, 2, 300}},
		{`{"i": -9223372036854775808, "f": 0.5, "u": 18446744073709551615}`, nums{-1 << 63, 0.5, 1<<64 - 1}},
		{`{"i": -0, "f": -1.25e-3, "u": 0}`, nums{0, -1.25e-3, 0}},
	} {
		got, err := client.Decode[nums](payloadOf(t, FormatJSON, tc.json))
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.json, got, err, tc.want)
		}
	}
	// As an untyped value, 1.5 stays a float and 2.0 is an integer.
	v, err := client.Decode[[]any](payloadOf(t, FormatJSON, `[1.5, 2.0]`))
	if err != nil || len(v) != 2 || v[0] != 1.5 || reflect.ValueOf(v[1]).Kind() == reflect.Float64 {
		t.Errorf("untyped [1.5, 2.0]: %#v, %v", v, err)
	}
}

// The same object with its keys in any order, in JSON or YAML, is the same
// payload (so that an idempotent submit matches).
func TestPayloadCanonical(t *testing.T) {
	a := payloadOf(t, FormatJSON, `{"b": 1, "a": {"y": [true, null], "x": "s"}}`)
	b := payloadOf(t, FormatJSON, `{"a": {"x": "s", "y": [true, null]}, "b": 1}`)
	c := payloadOf(t, FormatYAML, `{a: {x: s, y: [true, ~]}, b: 1}`)
	if !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Errorf("payloads differ:\n%x\n%x\n%x", a, b, c)
	}
}

func TestPayloadErrors(t *testing.T) {
	for _, tc := range []struct {
		format     Format
		doc        string
		path, says string
	}{
		{FormatJSON, `{"tasks": [{"name": "a", "run": "x", "queue": "q", "payload": 1}]}`, "tasks[0].payload", "not both"},
		{FormatJSON, `{"tasks": [{"name": "a", "payload": 1}]}`, "tasks[0].queue", "required with payload"},
		{FormatJSON, `{"tasks": [{"name": "a"}]}`, "tasks[0].run", "or a payload"},
		{FormatJSON, `{"tasks": [{"name": "a", "queue": "q", "payload": 1, "undo": {"run": "x", "payload": 2}}]}`, "tasks[0].undo.payload", "not both"},
		{FormatJSON, `{"tasks": [{"name": "a", "queue": "q", "payload": 1, "undo": {}}]}`, "tasks[0].undo.run", "or a payload"},
		{FormatJSON, `{"tasks": [{"name": "a", "queue": "q", "payload": {"k": [1, {"z": 1, "z": 2}]}}]}`, "tasks[0].payload.k[1].z", "given twice"},
		{FormatYAML, "tasks:\n  - name: a\n    queue: q\n    payload: {n: .nan}\n", "tasks[0].payload.n", "not a finite number"},
		{FormatYAML, "tasks:\n  - name: a\n    queue: q\n    payload: {1: x}\n", "tasks[0].payload", "not a string"},
		{FormatJSON, `{"tasks": [{"name": "a", "queue": "q", "payload": 1, "priority": 1001}]}`, "tasks[0].priority", "outside"},
	} {
		_, err := Parse("f", []byte(tc.doc), Options{Format: tc.format})
		var fe *Error
		if !errors.As(err, &fe) || fe.Path != tc.path || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v (path %q), want path %q saying %q", tc.doc, err, pathOf(fe), tc.path, tc.says)
		}
	}
}

// File lists the queues of Go handlers and the fields a shell worker would
// run.
func TestFileShellAndGoQueues(t *testing.T) {
	doc := `{"tasks": [
	  {"name": "a", "run": "echo a", "undo": {"queue": "go", "payload": {"k": 1}}},
	  {"name": "b", "queue": "go", "payload": {"run": "looks like a command"}},
	  {"name": "c", "queue": "go2", "payload": [1], "undo": {"run": "echo undo"}}]}`
	f, err := Parse("f", []byte(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tasks[0].run", "tasks[1].payload", "tasks[2].undo.run"}; !slices.Equal(f.Shell, want) {
		t.Errorf("Shell %q, want %q", f.Shell, want)
	}
	if want := []string{"go", "go2"}; !slices.Equal(f.GoQueues, want) {
		t.Errorf("GoQueues %q, want %q", f.GoQueues, want)
	}
	if want := []string{"default", "go", "go2"}; !slices.Equal(f.Queues, want) {
		t.Errorf("Queues %q, want %q", f.Queues, want)
	}
}

func TestParseJobDefaults(t *testing.T) {
	j, err := ParseJob("job", []byte(`{"queue": "q"}`), Options{Format: FormatJSON})
	if err != nil {
		t.Fatal(err)
	}
	if j.Spec.Queue != "q" || j.Spec.MaxAttempts != 1 || j.Spec.MaxExpiries != 0 || !bytes.Equal(j.Spec.Payload, []byte{0xc0}) ||
		j.Spec.Delay != 0 || j.Spec.Unique != nil || !j.Spec.RunAt.IsZero() || j.Shell != "" || len(j.Spec.ID) != 26 {
		t.Errorf("job %+v", j)
	}
	// What a Go client stores for a nil payload.
	if b, _ := client.NewQueue[any, any]("q").EncodePayload(nil); !bytes.Equal(b, j.Spec.Payload) {
		t.Errorf("nil payload %x, Go client's %x", j.Spec.Payload, b)
	}
}

func pathOf(fe *Error) string {
	if fe == nil {
		return ""
	}
	return fe.Path
}

// YAML aliases cannot make a payload, or a plan, far larger than the
// file: encoding stops at the payload limit, and at MaxCommands for all
// the file's payloads.
func TestPayloadAliasesBounded(t *testing.T) {
	s := `"` + strings.Repeat("x", 1000) + `"`
	level := func(anchor, item string) string {
		return "&" + anchor + " [" + strings.TrimSuffix(strings.Repeat(item+", ", 10), ", ") + "]"
	}
	one := "tasks:\n  - name: a\n    queue: q\n    payload: {a: " + level("l0", s) + ", b: " + level("l1", "*l0") +
		", c: " + level("l2", "*l1") + ", d: " + level("l3", "*l2") + ", e: [*l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3]}\n"
	_, err := Parse("f", []byte(one), Options{})
	if err == nil || !strings.Contains(err.Error(), "over the limit of 1048576 bytes") {
		t.Errorf("a payload of 100 MB from a few KB: %v", err)
	}

	// 40 tasks share a payload of about 0.9 MB.
	big := "[" + strings.TrimSuffix(strings.Repeat("*l1, ", 9), ", ") + "]"
	var b strings.Builder
	b.WriteString("tasks:\n  - name: t0\n    queue: q\n    payload: {a: " + level("l0", s) + ", b: " + level("l1", "*l0") + "}\n")
	b.WriteString("  - name: t1\n    queue: q\n    payload: &big " + big + "\n")
	for i := 2; i < 40; i++ {
		fmt.Fprintf(&b, "  - name: t%d\n    queue: q\n    payload: *big\n", i)
	}
	_, err = Parse("f", []byte(b.String()), Options{})
	if err == nil || !strings.Contains(err.Error(), "payloads total more than") {
		t.Errorf("40 aliases of a payload of 0.9 MB: %v", err)
	}
}

func TestParseJobDelayAndUnique(t *testing.T) {
	j, err := ParseJob("job", []byte(`{"queue": "q", "delay": "1m", "unique": {"key": "acct-7", "for": "10m"}}`), Options{Format: FormatJSON})
	if err != nil {
		t.Fatal(err)
	}
	if j.Spec.Delay != time.Minute || j.Spec.Unique == nil || *j.Spec.Unique != (engine.Unique{Key: "acct-7", For: 10 * time.Minute}) {
		t.Errorf("delay %v, unique %+v", j.Spec.Delay, j.Spec.Unique)
	}
	if j, err := ParseJob("job", []byte("queue: q\nunique: {}\n"), Options{}); err != nil || j.Spec.Unique == nil || *j.Spec.Unique != (engine.Unique{}) {
		t.Errorf("unique {}: %+v, %v", j, err)
	}
	for body, field := range map[string]string{
		`{"queue": "q", "unique": {"for": "-1s"}}`: "unique.for",
		`{"queue": "q", "unique": {"ttl": "1s"}}`:  "unique.ttl",
		`{"queue": "q", "unique": "k"}`:            "unique",
	} {
		var fe *Error
		if _, err := ParseJob("job", []byte(body), Options{Format: FormatJSON}); !errors.As(err, &fe) || pathOf(fe) != field {
			t.Errorf("%s: %v (path %q); want an error at %s", body, err, pathOf(fe), field)
		}
	}
}
