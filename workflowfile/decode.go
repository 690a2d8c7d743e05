package workflowfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/weirflow/weir/engine"
)

// The strict decoding of a workflow file, JSON or YAML, into fileWorkflow.
// Both are read into a yaml.Node tree (JSON by its own tokenizer) and then
// mapped field by field, so that the two formats refuse the same things:
// a key that is not a field by its exact name, a key given twice, null for
// any field, a value of the wrong type. An error names the field by its
// full path (tasks[0].undo.colour).

// minFileNodes is the least number of values (YAML aliases expanded) a file
// may hold; fileNodes raises it for larger store limits.
const minFileNodes = 1 << 20

// fileNodes bounds the values the decoder visits: a file that expands past
// it (YAML aliases of aliases) is refused before it costs memory or time.
func fileNodes(limits weir.Limits) int {
	return max(minFileNodes, 16*limits.MaxTasks+2*limits.MaxEdges)
}

// decodeFile decodes data strictly as format.
func decodeFile(path string, data []byte, format Format, limits weir.Limits) (fileWorkflow, error) {
	d := &fileDecoder{path: path, json: format == FormatJSON, budget: fileNodes(limits), maxPayload: limits.MaxPayload}
	if len(bytes.TrimSpace(data)) == 0 {
		return fileWorkflow{}, &Error{File: path, Problem: "the file is empty"}
	}
	var root *yaml.Node
	var err error
	if d.json {
		root, err = jsonNodes(data)
		if err != nil {
			return fileWorkflow{}, &Error{File: path, Problem: "invalid JSON: " + err.Error()}
		}
	} else if root, err = yamlNodes(data); err != nil {
		return fileWorkflow{}, &Error{File: path, Problem: err.Error()}
	}
	return d.workflow(root)
}

// yamlNodes parses exactly one YAML document.
func yamlNodes(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty")
		}
		return nil, errors.New("invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid YAML: more than one document")
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0], nil
	}
	return nil, errors.New("the file is empty")
}

// maxJSONDepth bounds the nesting of a JSON file (a workflow needs 4).
const maxJSONDepth = 64

var jsonInteger = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// jsonNodes parses exactly one JSON value into nodes tagged as YAML's core
// schema would tag them (!!str, !!int, !!float, !!bool, !!null).
func jsonNodes(data []byte) (*yaml.Node, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("the data is not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := jsonValue(dec, 0)
	if err != nil {
		return nil, jsonSyntax(dec, err)
	}
	switch _, err := dec.Token(); {
	case errors.Is(err, io.EOF):
		return n, nil
	case err == nil:
		return nil, errors.New("more than one JSON value")
	default:
		return nil, fmt.Errorf("data after the JSON value at byte %d", dec.InputOffset())
	}
}

func jsonSyntax(dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("at byte %d: %s", se.Offset, se.Error())
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("the data ends in the middle of a value")
	}
	return fmt.Errorf("at byte %d: %v", dec.InputOffset(), err)
}

func jsonValue(dec *json.Decoder, depth int) (*yaml.Node, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("nested more than %d deep", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	scalar := func(tag, v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v} }
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string) // the decoder allows only strings here
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m.Content = append(m.Content, scalar("!!str", key), v)
			}
			_, err := dec.Token() // '}'
			return m, err
		}
		s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for dec.More() {
			v, err := jsonValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			s.Content = append(s.Content, v)
		}
		_, err := dec.Token() // ']'
		return s, err
	case string:
		return scalar("!!str", t), nil
	case json.Number:
		if jsonInteger.MatchString(string(t)) {
			return scalar("!!int", string(t)), nil
		}
		return scalar("!!float", string(t)), nil
	case bool:
		return scalar("!!bool", strconv.FormatBool(t)), nil
	case nil:
		return scalar("!!null", "null"), nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// fileDecoder maps nodes onto the fields of a workflow file.
type fileDecoder struct {
	path   string
	json   bool
	budget int // nodes that may still be visited
	// maxPayload bounds one payload as msgpack, and payloadBytes counts
	// the bytes of the payloads decoded so far (bounded by MaxCommands):
	// YAML aliases cannot make a large plan of a small file.
	maxPayload, payloadBytes int
	merging                  map[*yaml.Node]bool // the mappings whose merge keys are being expanded
}

// maxMergeDepth bounds merge keys within merged mappings.
const maxMergeDepth = 16

// fileErr is a decoding error at a path; task is the path of the task it
// is in ("tasks[3]", "batch.then"; "" for none) and name that task's name
// when it has a valid one.
func (d *fileDecoder) fileErr(task, name, field string, n *yaml.Node, problem string) *Error {
	prefix := "invalid JSON: "
	if !d.json {
		prefix = ""
		if n != nil && n.Line > 0 {
			prefix = fmt.Sprintf("line %d: ", n.Line)
		}
	}
	return taskError(d.path, task, name, field, prefix+problem)
}

// taskError is an Error about field (a path inside the task at path task,
// or in the workflow when task is "").
func taskError(path, task, name, field, problem string) *Error {
	fe := &Error{File: path, Field: field, Path: field, Problem: problem}
	if task != "" {
		fe.Task = task
		fe.Path = fe.Task
		if field != "" {
			fe.Path += "." + field
		}
		if engine.ValidName(name) {
			fe.Task, fe.TaskName = fmt.Sprintf("task %q", name), name
		}
	}
	return fe
}

// where is the place of a field being decoded.
type where struct {
	task  string // the task's path ("tasks[3]", "batch.then"); "": the workflow
	name  string // the task's name, when valid
	field string // the path inside the task (or workflow)
}

func (w where) in(field string) where {
	if w.field != "" {
		field = w.field + "." + field
	}
	return where{w.task, w.name, field}
}

// at is the place of item i of a list field.
func (w where) at(i int) where {
	return where{w.task, w.name, fmt.Sprintf("%s[%d]", w.field, i)}
}

func (d *fileDecoder) fail(w where, n *yaml.Node, format string, args ...any) error {
	return d.fileErr(w.task, w.name, w.field, n, fmt.Sprintf(format, args...))
}

// visit resolves aliases and counts n against the budget.
func (d *fileDecoder) visit(w where, n *yaml.Node) (*yaml.Node, error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	d.budget--
	if d.budget < 0 {
		return nil, d.fail(w, n, "the file holds too many values once its aliases are expanded")
	}
	return n, nil
}

// describe names what n is, for "X is not Y".
func (d *fileDecoder) describe(n *yaml.Node) string {
	if d.json {
		switch n.Kind {
		case yaml.MappingNode:
			return "a JSON object"
		case yaml.SequenceNode:
			return "a JSON array"
		}
		switch n.Tag {
		case "!!str":
			return "a JSON string"
		case "!!int", "!!float":
			return "the JSON number " + n.Value
		case "!!bool":
			return "a JSON " + n.Value
		}
		return "a JSON null"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	return "`" + v + "`"
}

// want is the words for each kind of value, in the two formats.
func (d *fileDecoder) want(kind string) string {
	words := map[string][2]string{
		"workflow": {"a workflow (a mapping)", "a workflow (an object)"},
		"task":     {"a task (a mapping)", "a task (an object)"},
		"undo":     {"an undo (a mapping with run or payload, and queue)", "an undo (an object with run or payload, and queue)"},
		"webhook":  {"a webhook (a mapping with url)", "a webhook (an object with url)"},
		"labels":   {"labels (a mapping of keys to strings)", "labels (an object of keys to strings)"},
		"payload":  {"a payload", "a payload"},
		"job":      {"a job (a mapping)", "a job (an object)"},
		"tasks":    {"a list of tasks", "a list of tasks"},
		"group":    {"a chain or batch (a mapping with steps)", "a chain or batch (an object with steps)"},
		"after":    {"a list of task names", "a list of task names"},
		"string":   {"a string", "a string"},
		"bool":     {"true or false", "true or false"},
		"int":      {"an integer", "an integer"},
	}[kind]
	if d.json {
		return words[1]
	}
	return words[0]
}

// scalar checks that n is a scalar of one of the core tags, not null.
func (d *fileDecoder) scalar(w where, n *yaml.Node, kind string) (*yaml.Node, error) {
	n, err := d.visit(w, n)
	if err != nil {
		return nil, err
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		if strings.HasSuffix(w.field, "]") {
			return nil, d.fail(w, n, "null is not %s", d.want(kind))
		}
		return nil, d.fail(w, n, "null is not allowed: leave the field out for its default")
	}
	if n.Kind != yaml.ScalarNode {
		return nil, d.fail(w, n, "%s is not %s", d.describe(n), d.want(kind))
	}
	switch n.ShortTag() {
	case "!!str", "!!int", "!!float", "!!bool", "!!timestamp":
		return n, nil
	}
	return nil, d.fail(w, n, "the tag %s is not supported", n.Tag)
}

func (d *fileDecoder) str(w where, n *yaml.Node) (string, error) {
	n, err := d.scalar(w, n, "string")
	if err != nil {
		return "", err
	}
	if d.json && n.Tag != "!!str" {
		return "", d.fail(w, n, "%s is not a string", d.describe(n))
	}
	// YAML: a plain scalar is text whatever it looks like (id: 2024).
	return n.Value, nil
}

func (d *fileDecoder) bool(w where, n *yaml.Node) (bool, error) {
	n, err := d.scalar(w, n, "bool")
	if err != nil {
		return false, err
	}
	if n.ShortTag() != "!!bool" {
		return false, d.fail(w, n, "%s is not true or false", d.describe(n))
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, d.fail(w, n, "%s is not true or false", d.describe(n))
	}
	return b, nil
}

func (d *fileDecoder) int(w where, n *yaml.Node) (int, error) {
	n, err := d.scalar(w, n, "int")
	if err != nil {
		return 0, err
	}
	if n.ShortTag() != "!!int" {
		return 0, d.fail(w, n, "%s is not an integer", d.describe(n))
	}
	var v int64
	if d.json {
		v, err = strconv.ParseInt(n.Value, 10, 32)
	} else if err = n.Decode(&v); err == nil && (v < -1<<31 || v > 1<<31-1) {
		err = errors.New("out of range")
	}
	if err != nil {
		return 0, d.fail(w, n, "%s is out of range", d.describe(n))
	}
	return int(v), nil
}

// mapping returns the fields of a mapping node in order, with merge keys
// (<<) expanded; a key given twice, or a key that is not a string, is an
// error.
func (d *fileDecoder) mapping(w where, n *yaml.Node, kind string) ([]*yaml.Node, error) {
	n, err := d.visit(w, n)
	if err != nil {
		return nil, err
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil, d.fail(w, n, "null is not %s", d.want(kind))
	}
	if n.Kind != yaml.MappingNode {
		return nil, d.fail(w, n, "%s is not %s", d.describe(n), d.want(kind))
	}
	d.budget -= len(n.Content) / 2
	if d.budget < 0 {
		return nil, d.fail(w, n, "the file holds too many values once its aliases are expanded")
	}
	var out []*yaml.Node
	seen := map[string]*yaml.Node{}
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" && !d.json {
			merged = append(merged, v)
			continue
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			return nil, d.fail(w, k, "a key that is not a string: the fields are listed in spec/workflow-file.md")
		}
		if first, dup := seen[k.Value]; dup {
			if d.json {
				return nil, d.fail(w.in(k.Value), k, "the key %q is given twice", k.Value)
			}
			return nil, d.fail(w.in(k.Value), k, "the key %q is given twice (also line %d)", k.Value, first.Line)
		}
		seen[k.Value] = k
		out = append(out, k, v)
	}
	// A merge key adds the fields of its mappings that are not given.
	if len(merged) > 0 {
		if d.merging[n] {
			return nil, d.fail(w, n, "a merge key (<<) takes the fields of the mapping it is in")
		}
		if len(d.merging) >= maxMergeDepth {
			return nil, d.fail(w, n, "merge keys (<<) nested more than %d deep", maxMergeDepth)
		}
		if d.merging == nil {
			d.merging = map[*yaml.Node]bool{}
		}
		d.merging[n] = true
		defer delete(d.merging, n)
	}
	for _, m := range merged {
		m, err := d.visit(w, m)
		if err != nil {
			return nil, err
		}
		srcs := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			srcs = m.Content
		}
		for _, src := range srcs {
			fields, err := d.mapping(w, src, kind)
			if err != nil {
				return nil, err
			}
			for i := 0; i+1 < len(fields); i += 2 {
				if _, given := seen[fields[i].Value]; !given {
					seen[fields[i].Value] = fields[i]
					out = append(out, fields[i], fields[i+1])
				}
			}
		}
	}
	return out, nil
}

func (d *fileDecoder) unknown(w where, k *yaml.Node) error {
	return d.fail(w.in(k.Value), k, "unknown field (the fields are listed in spec/workflow-file.md)")
}

func (d *fileDecoder) workflow(n *yaml.Node) (fileWorkflow, error) {
	var f fileWorkflow
	top := where{}
	fields, err := d.mapping(top, n, "workflow")
	if err != nil {
		return f, err
	}
	for i := 0; i < len(fields); i += 2 {
		k, v := fields[i], fields[i+1]
		w := top.in(k.Value)
		f.set = append(f.set, k.Value)
		switch k.Value {
		case "gate_dependents":
			f.GateDependents, err = d.bool(w, v)
		case "id":
			f.ID, err = d.id(w, v)
		case "fail_fast":
			f.FailFast, err = d.bool(w, v)
		case "undo_on_cancel":
			var b bool
			b, err = d.bool(w, v)
			f.UndoOnCancel = &b
		case "tasks":
			f.Tasks, err = d.tasks(w, v)
		case "chain", "batch":
			if f.group != nil {
				err = d.fail(w, k, "a workflow has one chain or batch (or tasks)")
			} else {
				f.group, err = d.group(w, k.Value, v)
			}
		case "start_at":
			f.StartAt, err = d.optStr(w, v)
		case "deadline":
			f.Deadline, err = d.optStr(w, v)
		case "webhook":
			f.Webhook, err = d.webhook(w, v)
		case "name":
			f.WorkflowName, err = d.str(w, v)
		case "labels":
			f.Labels, err = d.labels(w, v)
		default:
			err = d.unknown(top, k)
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

func (d *fileDecoder) tasks(w where, n *yaml.Node) ([]fileTask, error) {
	n, err := d.visit(w, n)
	if err != nil {
		return nil, err
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil, d.fail(w, n, "null is not allowed: a workflow needs at least one task")
	}
	if n.Kind != yaml.SequenceNode {
		return nil, d.fail(w, n, "%s is not a list of tasks", d.describe(n))
	}
	ts := make([]fileTask, len(n.Content))
	for i, tn := range n.Content {
		if ts[i], err = d.task(fmt.Sprintf("tasks[%d]", i), tn); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// taskName returns the value of a task mapping's name field when it is a
// valid name, to name the task in errors about its other fields.
func (d *fileDecoder) taskName(n *yaml.Node) string {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		for v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if k.Value == "name" && v.Kind == yaml.ScalarNode && (v.Tag == "!!str" || !d.json) && engine.ValidName(v.Value) {
			return v.Value
		}
	}
	return ""
}

func (d *fileDecoder) task(path string, n *yaml.Node) (fileTask, error) {
	t := fileTask{path: path}
	w := where{task: path, name: d.taskName(n)}
	fields, err := d.mapping(w, n, "task")
	if err != nil {
		return t, err
	}
	for j := 0; j < len(fields); j += 2 {
		k, v := fields[j], fields[j+1]
		fw := w.in(k.Value)
		t.set = append(t.set, k.Value)
		switch k.Value {
		case "name":
			t.Name, err = d.str(fw, v)
		case "run":
			t.Run, err = d.str(fw, v)
		case "queue":
			t.Queue, err = d.optStr(fw, v)
		case "after":
			t.After, err = d.after(fw, v)
		case "always":
			t.Always, err = d.bool(fw, v)
		case "on_failure":
			t.OnFailure, err = d.bool(fw, v)
		case "undo":
			t.Undo, err = d.undo(fw, v)
		case "payload":
			var pv payloadValue
			if pv, err = d.payload(fw, v); err == nil {
				t.Payload = &pv
			}
		case "priority":
			t.Priority, err = d.int(fw, v)
		case "key":
			t.Key, err = d.optStr(fw, v)
		case "signal":
			t.Signal, err = d.bool(fw, v)
		case "delay":
			t.Delay, err = d.optStr(fw, v)
		default:
			var ok bool
			if ok, err = d.retryField(fw, k.Value, v, &t.fileRetry); !ok {
				err = d.unknown(w, k)
			}
		}
		if err != nil {
			return t, err
		}
	}
	return t, nil
}

func (d *fileDecoder) after(w where, n *yaml.Node) ([]string, error) {
	n, err := d.visit(w, n)
	if err != nil {
		return nil, err
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil, d.fail(w, n, "null is not allowed: leave the field out for no dependencies")
	}
	if n.Kind != yaml.SequenceNode {
		return nil, d.fail(w, n, "%s is not a list of task names", d.describe(n))
	}
	out := make([]string, len(n.Content))
	for i, e := range n.Content {
		if out[i], err = d.str(w.at(i), e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// labels decodes a workflow's labels: a mapping of strings to strings
// (engine.ValidateNameLabels checks them after).
func (d *fileDecoder) labels(w where, n *yaml.Node) (map[string]string, error) {
	fields, err := d.mapping(w, n, "labels")
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(fields)/2)
	for j := 0; j < len(fields); j += 2 {
		k, v := fields[j], fields[j+1]
		if out[k.Value], err = d.str(w.in(k.Value), v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// webhook decodes a workflow's webhook: url, secret, queue, attempts,
// backoff (spec/workflow-file.md).
func (d *fileDecoder) webhook(w where, n *yaml.Node) (*fileWebhook, error) {
	fields, err := d.mapping(w, n, "webhook")
	if err != nil {
		return nil, err
	}
	h := &fileWebhook{}
	for j := 0; j < len(fields); j += 2 {
		k, v := fields[j], fields[j+1]
		switch k.Value {
		case "url":
			h.URL, err = d.str(w.in("url"), v)
		case "secret":
			h.Secret, err = d.optStr(w.in("secret"), v)
		case "queue":
			h.Queue, err = d.optStr(w.in("queue"), v)
		case "attempts":
			h.Attempts, err = d.int(w.in("attempts"), v)
		case "backoff":
			h.Backoff, err = d.optStr(w.in("backoff"), v)
		default:
			err = d.unknown(w, k)
		}
		if err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (d *fileDecoder) undo(w where, n *yaml.Node) (*fileUndo, error) {
	fields, err := d.mapping(w, n, "undo")
	if err != nil {
		return nil, err
	}
	u := &fileUndo{}
	for j := 0; j < len(fields); j += 2 {
		k, v := fields[j], fields[j+1]
		switch k.Value {
		case "run":
			u.Run, err = d.str(w.in("run"), v)
		case "queue":
			u.Queue, err = d.optStr(w.in("queue"), v)
		case "payload":
			var pv payloadValue
			if pv, err = d.payload(w.in("payload"), v); err == nil {
				u.Payload = &pv
			}
		default:
			err = d.unknown(w, k)
		}
		if err != nil {
			return nil, err
		}
	}
	return u, nil
}
