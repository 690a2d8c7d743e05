// Package workflowfile reads weir's workflow files (spec/workflow-file.md):
// a workflow of shell tasks, or of tasks for Go handlers, written in YAML
// or JSON, parsed strictly and
// checked into an engine.Plan ready to submit. It also holds the workflow
// record (Record), the JSON shape in which the `weir` command and the REST
// API show a workflow.
//
// Parse and Load refuse what the spec does not allow, never ignore it: an
// unknown or repeated key, null, a value of the wrong type, a task after
// one listed later, a value past the store's limits. Every such error is an
// *Error, which names the file and, when the problem is in one task, the
// task and the field, by name and by its path in the document
// ("tasks[1].after").
//
// A task is a shell task (run: its payload is a shell.Payload on a
// shell.Queue queue, run by a worker that has shell.Register'ed it) or a
// task for a Go handler (payload: any JSON value, stored as the msgpack a
// Go producer would have stored, so that worker.Handle's typed handler
// decodes it; see payload.go). ParseJob reads the job document of the REST
// API's POST /v1/jobs the same way.
package workflowfile

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/shell"
)

// The workflow file, as spec/workflow-file.md documents it (decoded by
// decode.go). Durations are strings so that YAML and JSON read the
// same way.
type fileWorkflow struct {
	ID           string
	FailFast     bool
	UndoOnCancel *bool
	Tasks        []fileTask
	// StartAt is an RFC 3339 time, or "" (signal.go).
	StartAt string
	// Deadline is a duration after the submit (DeadlineIn) or an RFC 3339
	// time (Deadline), or "" (deadline.go).
	Deadline string
	// Webhook is the workflow's webhook, nil for none.
	Webhook *fileWebhook
	// WorkflowName and Labels are the workflow's name and labels (name:,
	// labels:), "" and nil for none.
	WorkflowName string
	Labels       map[string]string
	// group is the workflow's chain or batch, nil for none (group.go):
	// its tasks replace Tasks.
	group *fileGroup
	// GateDependents: a file of tasks to add (ParseAdded) gates the
	// finishing task's dependents on them.
	GateDependents bool
	// set lists the workflow-level fields the file gave, for ParseAdded,
	// which allows only tasks and gate_dependents.
	set []string
}

// fileWebhook is a workflow's webhook as written (spec/states.md,
// Webhooks): secret names a secret the delivering worker holds.
type fileWebhook struct {
	URL, Secret, Queue string
	Attempts           int
	Backoff            string
}

type fileTask struct {
	// path is the task's place in the document: "tasks[3]", or in a
	// group "chain.steps[1]", "batch.then" (group.go).
	path      string
	Name      string
	Run       string
	Queue     string
	After     []string
	Always    bool
	OnFailure bool
	// noAbsorb is set by a group on its catch and finally when it does
	// not allow failures (group.go); a file cannot give it.
	noAbsorb bool
	fileRetry
	Undo *fileUndo
	// Payload is the task's JSON payload for a Go handler (nil: none
	// given; the task is a shell task, with Run).
	Payload  *payloadValue
	Priority int
	// Key is the task's concurrency key ("": none).
	Key string
	// Signal makes it a signal task (signal.go): no run, no payload; its
	// timeout is the signal's.
	Signal bool
	// Delay is a duration, or "" (signal.go).
	Delay string
	// set lists the fields the file gave the task, in file order (for
	// the checks of combinations: combine.go).
	set []string
}

type fileUndo struct {
	Run     string
	Queue   string
	Payload *payloadValue
}

// DefaultQueue is the queue of a task that names none.
const DefaultQueue = "default"

// Error is a problem with a workflow file: it names the file and, when it
// is in one task, the task (by name, or by position when unnamed) and the
// field. Parse and Load return every problem with a file as an *Error;
// errors.As finds it.
type Error struct {
	// File is the name given to Parse, or the path given to Load.
	File string
	// Task is `task "x"`, or `tasks[3]` (a step or callback of a chain or
	// batch: `batch.steps[1]`, `chain.then`) for a task without a valid
	// name; empty when the problem is not in one task.
	Task string
	// Field is the field inside the task (or the workflow): "retries",
	// "undo.run"; empty when unknown.
	Field string
	// Problem says what is wrong, in the file's terms; with YAML it starts
	// with the line ("line 4: ...").
	Problem string
	// Path is the field's path in the document: "id", "tasks",
	// "tasks[1].after", "tasks[0].undo.colour"; empty when unknown.
	Path string
	// TaskName is the name of the task, when it has a valid one.
	TaskName string
}

// Error is "FILE: [TASK: ][field FIELD: ]PROBLEM", or, about a step or
// callback of a chain or batch, "FILE: PATH[ (task "x")]: PROBLEM"
// (batch.steps[1].run: the place, as spec/workflow-file.md says).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	if e.inGroup() {
		e.writeGroupPlace(&b)
		b.WriteString(e.Problem)
		return b.String()
	}
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

// File is a parsed and checked workflow file.
type File struct {
	// Name is the name given to Parse, or the path given to Load.
	Name string
	// Plan is the workflow to submit. Its ID is the file's, or a new one
	// (client.NewID) when the file has none; its options and tasks are
	// the file's, with the defaults of spec/workflow-file.md filled in.
	// It passes engine.ValidatePlan with the limits it was parsed with.
	Plan engine.Plan
	// WorkflowName and Labels are the file's name: and labels: ("" and nil
	// for none), to submit with the plan (engine.SubmitParams); they pass
	// engine.ValidateNameLabels.
	WorkflowName string
	Labels       map[string]string
	// Queues lists every queue the file names (tasks and undos), in
	// first-use order: the queues a worker must serve to run it.
	Queues []string
	// GoQueues lists the queues of the tasks and undos that have a
	// payload rather than a command, in first-use order: Go handlers
	// (worker.Handle) serve them, not shell workers.
	GoQueues []string
	// Shell lists, by their path in the document, the fields that a shell
	// worker would run as a command: every run and undo.run, and every
	// payload that is an object with a "run" key (the field of
	// shell.Payload), in file order. A server that refuses shell commands
	// refuses a file where it is not empty.
	Shell []string

	gate   bool // ParseAdded: gate_dependents
	haveID bool // the file gave an id (CheckSchedule)
}

// Format is the syntax of a workflow file.
type Format int

const (
	// FormatAuto reads JSON when the name ends in .json or the content
	// starts with '{', else YAML.
	FormatAuto Format = iota
	// FormatYAML reads YAML 1.2 (JSON is YAML too, but read as YAML its
	// errors give lines rather than JSON's terms).
	FormatYAML
	// FormatJSON reads one JSON object.
	FormatJSON
)

// Options are the settings of Parse. The zero value reads either syntax,
// runs commands in the worker's working directory and checks against
// weir.DefaultLimits.
type Options struct {
	// Format is the file's syntax; FormatAuto decides by name and content.
	Format Format
	// Dir is the directory the plan's commands run in, written into each
	// task's shell.Payload: an absolute path, or "" for the working
	// directory of the worker that runs them.
	Dir string
	// Limits are the store's limits the plan is checked against (tasks,
	// edges, payload size, retries, backoff); zero means
	// weir.DefaultLimits().
	Limits weir.Limits
}

// Load reads the workflow file at path and parses it as Parse does, with
// its commands to run in the file's directory (made absolute), the syntax
// decided by FormatAuto and limits as Options.Limits (zero:
// weir.DefaultLimits()). A file that cannot be read, or is larger than
// MaxFileSize (ReadFile), is an *Error too.
func Load(path string, limits weir.Limits) (*File, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, &Error{File: path, Problem: err.Error()}
	}
	return Parse(path, data, Options{Dir: dir, Limits: limits})
}

// MaxCommands is the most bytes of shell commands (undos included) one
// workflow file may hold once its YAML aliases are expanded, and, apart,
// the most bytes of payloads (as msgpack).
const MaxCommands = 16 << 20

// formatOf is the syntax of the file named name: JSON by the extension
// .json or content starting with '{', else YAML.
func formatOf(name string, data []byte) Format {
	if strings.EqualFold(filepath.Ext(name), ".json") || bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		return FormatJSON
	}
	return FormatYAML
}

// Parse strictly decodes data, a workflow file named name (errors start
// with it), and checks it into a plan of shell tasks. Every problem is
// returned as an *Error; a nil error means the plan passes
// engine.ValidatePlan with o's limits (the store may still refuse it, for
// example when a workflow of that ID exists with another plan).
func Parse(name string, data []byte, o Options) (*File, error) {
	return parse(name, data, o, false)
}

// parse is Parse; added reads a file of tasks to add to a running
// workflow (ParseAdded): only tasks and gate_dependents, dependencies on
// tasks the file does not list allowed (the store checks them), no plan
// check.
func parse(name string, data []byte, o Options, added bool) (*File, error) {
	path, dir, limits, format := name, o.Dir, o.Limits, o.Format
	if limits == (weir.Limits{}) {
		limits = weir.DefaultLimits()
	}
	if format == FormatAuto {
		format = formatOf(name, data)
	}
	f, err := decodeFile(path, data, format, limits)
	if err != nil {
		return nil, err
	}
	lf := &File{Name: path}
	// fail is an error about field of task i (-1: the workflow).
	fail := func(i int, name, field, format string, args ...any) error {
		tp := ""
		if i >= 0 {
			tp = f.Tasks[i].path
		}
		return taskError(path, tp, name, field, fmt.Sprintf(format, args...))
	}
	for _, k := range f.set {
		if added && k != "tasks" && k != "gate_dependents" {
			return nil, fail(-1, "", k, "a file of tasks to add has only tasks and gate_dependents")
		}
		if !added && k == "gate_dependents" {
			return nil, fail(-1, "", k, "only in a file of tasks to add (WEIR_ADD_TASKS)")
		}
	}
	lf.gate = f.GateDependents
	lf.haveID = slices.Contains(f.set, "id")
	p := engine.Plan{ID: f.ID, FailFast: f.FailFast, UndoOnCancel: true}
	if f.UndoOnCancel != nil {
		p.UndoOnCancel = *f.UndoOnCancel
	}
	if p.StartAt, err = parseStartAt(f.StartAt); err != nil {
		return nil, fail(-1, "", "start_at", "%v", err)
	}
	if p.Deadline, p.DeadlineIn, err = parseDeadline(f.Deadline); err != nil {
		return nil, fail(-1, "", "deadline", "%v", err)
	}
	if h := f.Webhook; h != nil {
		p.Webhook = &weir.Webhook{URL: h.URL, Secret: h.Secret, Queue: h.Queue, MaxAttempts: h.Attempts}
		if p.Webhook.Backoff, err = parseDuration(h.Backoff, limits.MaxBackoff); err != nil {
			return nil, fail(-1, "", "webhook.backoff", "%v", err)
		}
	}
	if err := engine.ValidateNameLabels(f.WorkflowName, f.Labels); err != nil {
		var ve *weir.ValidationError
		if errors.As(err, &ve) {
			return nil, fail(-1, "", ve.Field, "%s", ve.Problem)
		}
		return nil, fail(-1, "", "labels", "%v", err)
	}
	lf.WorkflowName, lf.Labels = f.WorkflowName, f.Labels
	if p.ID == "" {
		p.ID = client.NewID()
	} else if !engine.ValidID(p.ID) {
		return nil, fail(-1, "", "id", "workflow ID %q must "+engine.IDRule, p.ID)
	}
	if f.group != nil {
		if f.Tasks != nil { // tasks: [] too
			return nil, fail(-1, "", f.group.kind, "a workflow has tasks or a %s, not both", f.group.kind)
		}
		if f.Tasks, err = groupTasks(path, f.group); err != nil {
			return nil, err
		}
	}
	if len(f.Tasks) == 0 {
		return nil, fail(-1, "", "tasks", "a workflow needs at least one task (or a chain or batch)")
	}
	seenQueue := map[string]bool{}
	addQueue := func(q string) {
		if !seenQueue[q] {
			seenQueue[q] = true
			lf.Queues = append(lf.Queues, q)
		}
	}
	seenGo := map[string]bool{}
	addGoQueue := func(q string) {
		if !seenGo[q] {
			seenGo[q] = true
			lf.GoQueues = append(lf.GoQueues, q)
		}
	}
	index := map[string]int{}
	total := 0 // bytes of every command, undos included
	for i, t := range f.Tasks {
		if t.Name == "" {
			return nil, fail(i, "", "name", "required")
		}
		if !engine.ValidName(t.Name) {
			return nil, fail(i, "", "name", "task name %q must "+engine.NameRule, t.Name)
		}
		if _, dup := index[t.Name]; dup {
			return nil, fail(i, t.Name, "name", "duplicate task name (also tasks[%d])", index[t.Name])
		}
		spec := engine.TaskSpec{Name: t.Name, Queue: t.Queue, Always: t.Always || t.OnFailure, OnFailure: t.OnFailure, NoAbsorb: t.noAbsorb, Priority: t.Priority, Key: t.Key}
		switch {
		case t.Signal:
			if field, problem := signalConflict(t); field != "" {
				return nil, fail(i, t.Name, field, "%s", problem)
			}
		case t.Payload != nil && t.Run != "":
			return nil, fail(i, t.Name, "payload", "a task has run (a shell command) or payload (for a Go handler), not both")
		case t.Payload != nil && t.Queue == "":
			return nil, fail(i, t.Name, "queue", "required with payload: the queue whose Go handler runs the task")
		case t.Payload == nil && strings.TrimSpace(t.Run) == "":
			return nil, fail(i, t.Name, "run", "required: the shell command to run (or a payload, for a Go handler)")
		}
		if field, problem := combinationConflict(t); field != "" {
			return nil, fail(i, t.Name, field, "%s", problem)
		}
		if spec.Queue == "" {
			spec.Queue = DefaultQueue
		}
		if !engine.ValidName(spec.Queue) {
			return nil, fail(i, t.Name, "queue", "queue name %q must "+engine.NameRule, spec.Queue)
		}
		if t.Key != "" && !engine.ValidName(t.Key) {
			return nil, fail(i, t.Name, "key", "concurrency key %q must "+engine.NameRule, t.Key)
		}
		seenDep := map[string]bool{}
		for _, d := range t.After {
			switch _, ok := index[d]; {
			case d == t.Name:
				return nil, fail(i, t.Name, "after", "a task cannot run after itself")
			case !ok && !added:
				return nil, fail(i, t.Name, "after", "%q is not a task listed before this one", d)
			case seenDep[d]:
				return nil, fail(i, t.Name, "after", "%q is listed twice", d)
			}
			seenDep[d] = true
			spec.After = append(spec.After, d)
		}
		rp, rf, err := t.resolve(limits)
		if err != nil {
			return nil, fail(i, t.Name, rf, "%v", err)
		}
		spec.MaxAttempts, spec.MaxExpiries, spec.Backoff, spec.Timeout = rp.maxAttempts, rp.maxExpiries, rp.backoff, rp.timeout
		field := fmt.Sprintf("tasks[%d]", i)
		if spec.Delay, err = parseDuration(t.Delay, 0); err != nil {
			return nil, fail(i, t.Name, "delay", "%v", err)
		}
		if t.Signal {
			signalSpec(&spec)
		} else if t.Payload != nil {
			spec.Payload = t.Payload.msgpack
			if len(spec.Payload) > limits.MaxPayload {
				return nil, fail(i, t.Name, "payload", "the payload is %d bytes as msgpack, over the limit of %d", len(spec.Payload), limits.MaxPayload)
			}
			if t.Payload.hasRun {
				lf.Shell = append(lf.Shell, field+".payload")
			}
			addGoQueue(spec.Queue)
		} else {
			if err := shell.CheckCommand(t.Run); err != nil {
				return nil, fail(i, t.Name, "run", "%v", err)
			}
			if spec.Payload, err = shell.Queue(spec.Queue).EncodePayload(shell.Payload{Run: t.Run, Dir: dir}); err != nil {
				return nil, fail(i, t.Name, "run", "%v", err)
			}
			if len(spec.Payload) > limits.MaxPayload {
				return nil, fail(i, t.Name, "run", "the command is %d bytes, over the limit of %d", len(t.Run), limits.MaxPayload)
			}
			total += len(t.Run)
			lf.Shell = append(lf.Shell, field+".run")
		}
		addQueue(spec.Queue)
		if t.Undo != nil {
			switch {
			case t.Undo.Payload != nil && t.Undo.Run != "":
				return nil, fail(i, t.Name, "undo.payload", "an undo has run (a shell command) or payload (for a Go handler), not both")
			case t.Undo.Payload == nil && strings.TrimSpace(t.Undo.Run) == "":
				return nil, fail(i, t.Name, "undo.run", "required: the shell command to run (or a payload, for a Go handler)")
			}
			u := &engine.UndoSpec{Queue: t.Undo.Queue}
			if u.Queue == "" {
				u.Queue = spec.Queue
			}
			if !engine.ValidName(u.Queue) {
				return nil, fail(i, t.Name, "undo.queue", "queue name %q must "+engine.NameRule, u.Queue)
			}
			if t.Undo.Payload != nil {
				u.Payload = t.Undo.Payload.msgpack
				if len(u.Payload) > limits.MaxPayload {
					return nil, fail(i, t.Name, "undo.payload", "the payload is %d bytes as msgpack, over the limit of %d", len(u.Payload), limits.MaxPayload)
				}
				if t.Undo.Payload.hasRun {
					lf.Shell = append(lf.Shell, field+".undo.payload")
				}
				addGoQueue(u.Queue)
			} else {
				if err := shell.CheckCommand(t.Undo.Run); err != nil {
					return nil, fail(i, t.Name, "undo.run", "%v", err)
				}
				if u.Payload, err = shell.Queue(u.Queue).EncodePayload(shell.Payload{Run: t.Undo.Run, Dir: dir}); err != nil {
					return nil, fail(i, t.Name, "undo.run", "%v", err)
				}
				if len(u.Payload) > limits.MaxPayload {
					return nil, fail(i, t.Name, "undo.run", "the command is %d bytes, over the limit of %d", len(t.Undo.Run), limits.MaxPayload)
				}
				total += len(t.Undo.Run)
				lf.Shell = append(lf.Shell, field+".undo.run")
			}
			spec.Undo = u
			addQueue(u.Queue)
		}
		if total > MaxCommands {
			// YAML aliases can repeat one long command into every task: the
			// plan, not the file, is what is bounded.
			return nil, fail(i, t.Name, "run", "the workflow's commands total more than %d bytes (the limit of a workflow file, YAML aliases expanded): put long commands in script files and run those", MaxCommands)
		}
		index[t.Name] = i
		p.Tasks = append(p.Tasks, spec)
	}
	if added {
		lf.Plan = p
		return lf, nil
	}
	// The engine's own check (limits on tasks and edges): map its error to
	// the file's terms.
	if err := engine.ValidatePlan(p, limits); err != nil {
		var ve *weir.ValidationError
		if errors.As(err, &ve) {
			i, ok := index[ve.Task]
			if !ok {
				i = -1
			}
			return nil, fail(i, ve.Task, fileField(ve.Field), "%s", ve.Problem)
		}
		return nil, &Error{File: path, Problem: err.Error()}
	}
	lf.Plan = p
	return lf, nil
}

// DurationPattern is the syntax of a duration in a workflow file (backoff,
// timeout): Go's time.ParseDuration without a sign, without the µ units and
// with digits on both sides of a decimal point. spec/openapi.yaml has the
// same pattern (a test of package rest checks).
const DurationPattern = `^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$`

var durationRE = regexp.MustCompile(DurationPattern)

// parseDuration parses a duration ("1s", "250ms", "1m30s"); empty is 0. It
// must be whole milliseconds, and at most max when max > 0.
func parseDuration(s string, max time.Duration) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("%q is negative", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil || !durationRE.MatchString(s) {
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
