package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
)

// The workflow file, as spec/workflow-file.md documents it. Durations are
// strings (time.ParseDuration) so that YAML and JSON read the same way.
type fileWorkflow struct {
	ID           string     `yaml:"id" json:"id"`
	FailFast     bool       `yaml:"fail_fast" json:"fail_fast"`
	UndoOnCancel *bool      `yaml:"undo_on_cancel" json:"undo_on_cancel"`
	Tasks        []fileTask `yaml:"tasks" json:"tasks"`
}

type fileTask struct {
	Name    string    `yaml:"name" json:"name"`
	Run     string    `yaml:"run" json:"run"`
	Queue   string    `yaml:"queue" json:"queue"`
	After   []string  `yaml:"after" json:"after"`
	Always  bool      `yaml:"always" json:"always"`
	Retries int       `yaml:"retries" json:"retries"`
	Backoff string    `yaml:"backoff" json:"backoff"`
	Timeout string    `yaml:"timeout" json:"timeout"`
	Undo    *fileUndo `yaml:"undo" json:"undo"`
}

type fileUndo struct {
	Run   string `yaml:"run" json:"run"`
	Queue string `yaml:"queue" json:"queue"`
}

// DefaultQueue is the queue of a task that names none.
const DefaultQueue = "default"

// FileError is a problem with a workflow file: it names the file and, when
// it is in one task, the task (by name, or by position when unnamed) and
// the field.
type FileError struct {
	File    string
	Task    string // `task "x"` or `tasks[3]`; empty for the workflow
	Field   string // e.g. "retries", "undo.run"; empty when unknown
	Problem string
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	if e.Task != "" {
		b.WriteString(e.Task)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString("field ")
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	return b.String()
}

// loadedFile is a validated workflow file.
type loadedFile struct {
	Path   string
	Plan   engine.Plan
	Queues []string // every queue the file names (tasks and undos), in first-use order
}

// loadFile reads, strictly parses and validates the workflow file at path
// into a plan of shell tasks whose working directory is the file's
// directory.
func loadFile(path string, limits engine.Limits) (*loadedFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &FileError{File: path, Problem: "cannot read the file: " + err.Error()}
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, &FileError{File: path, Problem: err.Error()}
	}
	return parseFile(path, data, dir, limits)
}

// decodeFile decodes data strictly: JSON (by extension .json, or content
// starting with '{') with unknown fields refused, else YAML with unknown
// fields refused. Exactly one document is allowed.
func decodeFile(path string, data []byte) (fileWorkflow, error) {
	trimmed := bytes.TrimSpace(data)
	if strings.EqualFold(filepath.Ext(path), ".json") || bytes.HasPrefix(trimmed, []byte("{")) {
		return decodeJSON(path, data)
	}
	var f fileWorkflow
	if len(trimmed) == 0 {
		return f, &FileError{File: path, Problem: "the file is empty"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return f, &FileError{File: path, Problem: "the file is empty"}
		}
		return f, yamlError(path, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return f, &FileError{File: path, Problem: "invalid YAML: more than one document"}
	}
	return f, nil
}

var (
	yamlLine    = regexp.MustCompile(`^line (\d+): (.*)$`)
	yamlUnknown = regexp.MustCompile(`^field (\S+) not found in type .*$`)
	yamlType    = regexp.MustCompile("^cannot unmarshal !!\\w+ (`.*`|.*) into (.*)$")
)

var goTypeWords = map[string]string{
	"int": "an integer", "bool": "true or false", "string": "a string",
	"[]string": "a list of task names", "[]main.fileTask": "a list of tasks",
	"main.fileTask": "a task (a mapping)", "main.fileUndo": "an undo (a mapping with run and queue)",
	"*main.fileUndo": "an undo (a mapping with run and queue)", "main.fileWorkflow": "a workflow (a mapping)",
	"*bool": "true or false",
}

// yamlError turns a YAML decoding error into a FileError naming the task
// and the field, found from the error's line.
func yamlError(path string, data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return &FileError{File: path, Problem: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	m := yamlLine.FindStringSubmatch(te.Errors[0])
	if m == nil {
		return &FileError{File: path, Problem: "invalid YAML: " + te.Errors[0]}
	}
	line, _ := strconv.Atoi(m[1])
	problem := m[2]
	task, field := locate(&root, line)
	if u := yamlUnknown.FindStringSubmatch(problem); u != nil {
		problem = fmt.Sprintf("line %d: unknown field (the fields are listed in spec/workflow-file.md)", line)
		if field == "" {
			field = u[1]
		}
	} else if t := yamlType.FindStringSubmatch(problem); t != nil {
		want := goTypeWords[t[2]]
		if want == "" {
			want = t[2]
		}
		problem = fmt.Sprintf("line %d: %s is not %s", line, t[1], want)
	} else {
		problem = fmt.Sprintf("line %d: %s", line, problem)
	}
	if len(te.Errors) > 1 {
		problem += fmt.Sprintf(" (and %d more problems)", len(te.Errors)-1)
	}
	return &FileError{File: path, Task: task, Field: field, Problem: problem}
}

// locate finds the task and the field at line of a workflow document.
func locate(root *yaml.Node, line int) (task, field string) {
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return "", ""
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if k.Line == line {
			field = k.Value
		}
		if k.Value != "tasks" || v.Kind != yaml.SequenceNode {
			continue
		}
		for ti, t := range v.Content {
			end := int(^uint(0) >> 1)
			if ti+1 < len(v.Content) {
				end = v.Content[ti+1].Line
			}
			if line < t.Line || line >= end {
				continue
			}
			task = fmt.Sprintf("tasks[%d]", ti)
			if t.Kind != yaml.MappingNode {
				return task, ""
			}
			for j := 0; j+1 < len(t.Content); j += 2 {
				tk, tv := t.Content[j], t.Content[j+1]
				if tk.Value == "name" && tv.Kind == yaml.ScalarNode && engine.ValidName(tv.Value) {
					task = fmt.Sprintf("task %q", tv.Value)
				}
				if tk.Line == line || (tv.Line == line && tv.Kind != yaml.MappingNode) {
					field = tk.Value
				}
				if tk.Value == "undo" && tv.Kind == yaml.MappingNode {
					for u := 0; u+1 < len(tv.Content); u += 2 {
						if tv.Content[u].Line == line {
							field = "undo." + tv.Content[u].Value
						}
					}
				}
			}
			return task, field
		}
	}
	return "", field
}

// decodeJSON decodes a JSON workflow strictly, task by task so that an
// error names its task.
func decodeJSON(path string, data []byte) (fileWorkflow, error) {
	var f fileWorkflow
	var raw struct {
		ID           string            `json:"id"`
		FailFast     bool              `json:"fail_fast"`
		UndoOnCancel *bool             `json:"undo_on_cancel"`
		Tasks        []json.RawMessage `json:"tasks"`
	}
	if err := strictJSON(data, &raw); err != nil {
		return f, &FileError{File: path, Field: jsonField(err), Problem: "invalid JSON: " + jsonProblem(err)}
	}
	f = fileWorkflow{ID: raw.ID, FailFast: raw.FailFast, UndoOnCancel: raw.UndoOnCancel, Tasks: make([]fileTask, len(raw.Tasks))}
	for i, m := range raw.Tasks {
		if err := strictJSON(m, &f.Tasks[i]); err != nil {
			where := fmt.Sprintf("tasks[%d]", i)
			var named struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(m, &named) == nil && engine.ValidName(named.Name) {
				where = fmt.Sprintf("task %q", named.Name)
			}
			return f, &FileError{File: path, Task: where, Field: jsonField(err), Problem: "invalid JSON: " + jsonProblem(err)}
		}
	}
	return f, nil
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("the file is empty")
		}
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

var jsonUnknown = regexp.MustCompile(`^json: unknown field "(.*)"$`)

func jsonField(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return ute.Field
	}
	if m := jsonUnknown.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	return ""
}

func jsonProblem(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		want := goTypeWords[ute.Type.String()]
		if want == "" {
			want = ute.Type.String()
		}
		return fmt.Sprintf("a JSON %s is not %s", ute.Value, want)
	}
	if jsonUnknown.MatchString(err.Error()) {
		return "unknown field (the fields are listed in spec/workflow-file.md)"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// parseFile parses and validates data (the file at path) into a plan.
// MaxFileCommands is the most bytes of shell commands (undos included) one
// workflow file may hold once its YAML aliases are expanded.
const MaxFileCommands = 16 << 20

func parseFile(path string, data []byte, dir string, limits engine.Limits) (*loadedFile, error) {
	f, err := decodeFile(path, data)
	if err != nil {
		return nil, err
	}
	lf := &loadedFile{Path: path}
	fail := func(task, field, format string, args ...any) error {
		return &FileError{File: path, Task: task, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	p := engine.Plan{ID: f.ID, FailFast: f.FailFast, UndoOnCancel: true}
	if f.UndoOnCancel != nil {
		p.UndoOnCancel = *f.UndoOnCancel
	}
	if p.ID == "" {
		p.ID = client.NewID()
	} else if !engine.ValidID(p.ID) {
		return nil, fail("", "id", "workflow ID %q must match ^[A-Za-z0-9_.-]{1,128}$", p.ID)
	}
	if len(f.Tasks) == 0 {
		return nil, fail("", "tasks", "a workflow needs at least one task")
	}
	seenQueue := map[string]bool{}
	addQueue := func(q string) {
		if !seenQueue[q] {
			seenQueue[q] = true
			lf.Queues = append(lf.Queues, q)
		}
	}
	index := map[string]int{}
	total := 0 // bytes of every command, undos included
	for i, t := range f.Tasks {
		where := fmt.Sprintf("tasks[%d]", i)
		if t.Name == "" {
			return nil, fail(where, "name", "required")
		}
		if !engine.ValidName(t.Name) {
			return nil, fail(where, "name", "task name %q must match ^[A-Za-z0-9_.-]{1,64}$", t.Name)
		}
		where = fmt.Sprintf("task %q", t.Name)
		if _, dup := index[t.Name]; dup {
			return nil, fail(where, "name", "duplicate task name (also tasks[%d])", index[t.Name])
		}
		if strings.TrimSpace(t.Run) == "" {
			return nil, fail(where, "run", "required: the shell command to run")
		}
		spec := engine.TaskSpec{Name: t.Name, Queue: t.Queue, Always: t.Always}
		if spec.Queue == "" {
			spec.Queue = DefaultQueue
		}
		if !engine.ValidName(spec.Queue) {
			return nil, fail(where, "queue", "queue name %q must match ^[A-Za-z0-9_.-]{1,64}$", spec.Queue)
		}
		seenDep := map[string]bool{}
		for _, d := range t.After {
			switch _, ok := index[d]; {
			case d == t.Name:
				return nil, fail(where, "after", "a task cannot run after itself")
			case !ok:
				return nil, fail(where, "after", "%q is not a task listed before this one", d)
			case seenDep[d]:
				return nil, fail(where, "after", "%q is listed twice", d)
			}
			seenDep[d] = true
			spec.After = append(spec.After, d)
		}
		if t.Retries < 0 || t.Retries > limits.MaxAttempts-1 {
			return nil, fail(where, "retries", "%d is outside [0, %d]", t.Retries, limits.MaxAttempts-1)
		}
		spec.MaxAttempts = t.Retries + 1
		if spec.Backoff, err = parseDuration(t.Backoff, limits.MaxBackoff); err != nil {
			return nil, fail(where, "backoff", "%v", err)
		}
		if spec.Timeout, err = parseDuration(t.Timeout, 0); err != nil {
			return nil, fail(where, "timeout", "%v", err)
		}
		if spec.Payload, err = shellQueue(spec.Queue).EncodePayload(ShellPayload{Run: t.Run, Dir: dir}); err != nil {
			return nil, fail(where, "run", "%v", err)
		}
		if len(spec.Payload) > limits.MaxPayload {
			return nil, fail(where, "run", "the command is %d bytes, over the limit of %d", len(t.Run), limits.MaxPayload)
		}
		total += len(t.Run)
		addQueue(spec.Queue)
		if t.Undo != nil {
			if strings.TrimSpace(t.Undo.Run) == "" {
				return nil, fail(where, "undo.run", "required: the shell command to run")
			}
			u := &engine.UndoSpec{Queue: t.Undo.Queue}
			if u.Queue == "" {
				u.Queue = spec.Queue
			}
			if !engine.ValidName(u.Queue) {
				return nil, fail(where, "undo.queue", "queue name %q must match ^[A-Za-z0-9_.-]{1,64}$", u.Queue)
			}
			if u.Payload, err = shellQueue(u.Queue).EncodePayload(ShellPayload{Run: t.Undo.Run, Dir: dir}); err != nil {
				return nil, fail(where, "undo.run", "%v", err)
			}
			if len(u.Payload) > limits.MaxPayload {
				return nil, fail(where, "undo.run", "the command is %d bytes, over the limit of %d", len(t.Undo.Run), limits.MaxPayload)
			}
			total += len(t.Undo.Run)
			spec.Undo = u
			addQueue(u.Queue)
		}
		if total > MaxFileCommands {
			// YAML aliases can repeat one long command into every task: the
			// plan, not the file, is what is bounded.
			return nil, fail(where, "run", "the workflow's commands total more than %d bytes (the limit of a workflow file, YAML aliases expanded): put long commands in script files and run those", MaxFileCommands)
		}
		index[t.Name] = i
		p.Tasks = append(p.Tasks, spec)
	}
	// The engine's own check (limits on tasks and edges): map its error to
	// the file's terms.
	if err := engine.ValidatePlan(p, limits); err != nil {
		var ve *engine.ValidationError
		if errors.As(err, &ve) {
			task := ""
			if ve.Task != "" {
				task = fmt.Sprintf("task %q", ve.Task)
			}
			return nil, fail(task, ve.Field, "%s", ve.Problem)
		}
		return nil, &FileError{File: path, Problem: err.Error()}
	}
	lf.Plan = p
	return lf, nil
}

// parseDuration parses a Go duration ("1s", "250ms", "1m30s"); empty is 0.
// It must be whole milliseconds, not negative, and at most max when max > 0.
func parseDuration(s string, max time.Duration) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (examples: 500ms, 1s, 2m)", s)
	}
	switch {
	case d < 0:
		return 0, fmt.Errorf("%q is negative", s)
	case d%time.Millisecond != 0:
		return 0, fmt.Errorf("%q is not whole milliseconds", s)
	case max > 0 && d > max:
		return 0, fmt.Errorf("%q is over the limit of %v", s, max)
	}
	return d, nil
}
