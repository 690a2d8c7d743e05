// Package shell runs workflow tasks that are shell commands: the task
// runner behind weir's workflow files (spec/workflow-file.md) and the
// `weir` command.
//
// A shell task's payload is a Payload, the command and the directory it
// runs in, on a queue typed by Queue. Register adds a handler for such
// queues to a worker.Worker: each attempt runs the command with `sh -c` in
// a process group of its own, with the task's identity and its
// dependencies' results in WEIR_* environment variables and files
// (spec/workflow-file.md, "How a command runs"). Its standard output is
// the task's result; a non-zero exit fails the attempt with the end of its
// standard error as the reason. The files WEIR_PROGRESS and WEIR_CHECKPOINT
// name carry its progress and its checkpoint (progress.go). When the attempt's context is done (a
// timeout, a cancel, the worker stopping) the whole process group is
// killed. On Unix the group also dies with the worker's process, however
// that ends (kill -9 included): a watchdog in the group kills it, and on
// Linux the kernel kills sh at once too (proc_unix.go).
package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/hooks"
	"github.com/weirflow/weir/worker"
)

// Payload is a shell task's payload (and its undo's), stored as msgpack
// like every weir payload: the command and the directory it runs in (for a
// workflow file, the file's directory, absolute; empty: the worker's
// working directory).
type Payload struct {
	Run string `json:"run"`
	Dir string `json:"dir"`
}

// Queue is the typed queue of shell tasks named name: its payload is a
// Payload and its result the command's standard output, a string.
func Queue(name string) client.Queue[Payload, string] {
	return client.NewQueue[Payload, string](name)
}

// stderrTail is how much of the end of standard error becomes the failure
// reason.
const stderrTail = 2 << 10

// waitDelay bounds how long a command's pipes may stay open after it exits
// (held by a background process it started) or after it is killed.
const waitDelay = 2 * time.Second

// input is the JSON file WEIR_INPUT names.
type input struct {
	Workflow string    `json:"workflow"`
	Task     string    `json:"task"`
	Attempt  int       `json:"attempt"`
	Undo     bool      `json:"undo"`
	Deps     depInputs `json:"deps"`
}

type depInput struct {
	name   string
	State  weir.State `json:"state"`
	Result any        `json:"result"`
	Error  *string    `json:"error"`
}

// depInputs is the deps object of WEIR_INPUT: one member per dependency,
// keyed by name, in the task's After order (its own dependencies, then
// those a gating task added: spec/workflow-file.md), which encoding/json
// would lose by sorting a map's keys.
type depInputs []depInput

func (d depInputs) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, e := range d {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(e.name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// Register adds the shell task handler for each of queues to w. maxResult
// bounds a command's standard output in bytes: the store's
// weir.Limits.MaxResult (an attempt whose output, msgpack-encoded, is
// over it fails). Call it before w.Run, like worker.Handle.
func Register(w *worker.Worker, queues []string, maxResult int, opts ...Option) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	for _, q := range queues {
		worker.Handle(w, Queue(q), func(ctx context.Context, j *worker.Job[Payload]) (string, error) {
			return run(ctx, j, maxResult, o)
		})
	}
}

// Option is an option of Register.
type Option func(*options)

type options struct {
	parseAdded AddedParser
}

// AddedParser reads the file of tasks a shell task adds to its workflow
// (WEIR_ADD_TASKS): data is its content, dir the directory the task's
// command ran in. It returns the tasks and whether the task's dependents
// are gated on them. workflowfile.ParseAdded, wrapped, is the one of
// weir's workflow files.
type AddedParser func(data []byte, dir string) (tasks []engine.TaskSpec, gate bool, err error)

// AddTasksWith lets shell tasks add tasks to their workflow at run time
// (spec/workflow-file.md, "Adding tasks at run time"): each task's command
// gets WEIR_ADD_TASKS, the path of a file it may write; after an exit of 0,
// a file there is read with parse and its tasks are added with the task's
// finish. Without this option WEIR_ADD_TASKS is not set.
func AddTasksWith(parse AddedParser) Option {
	return func(o *options) { o.parseAdded = parse }
}

// run runs one attempt of a shell task.
func run(ctx context.Context, j *worker.Job[Payload], maxResult int, o options) (string, error) {
	in := input{Workflow: j.Workflow, Task: j.Task, Attempt: j.Attempt, Undo: j.Undo, Deps: depInputs{}}
	for _, d := range j.Deps {
		di := depInput{name: d.Task, State: d.State, Result: DecodeResult(d.Result)}
		if d.Error != "" {
			e := d.Error
			di.Error = &e
		}
		in.Deps = append(in.Deps, di)
	}
	if err := CheckCommand(j.Payload.Run); err != nil {
		// no attempt could start it: say why once, instead of failing
		// every attempt with exec's error
		return "", worker.NonRetryable(err)
	}
	tmp, err := os.MkdirTemp("", "weir-task-*")
	if err != nil {
		return "", fmt.Errorf("input file: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	inputPath := filepath.Join(tmp, "input.json")
	depsDir := filepath.Join(tmp, "deps")
	if err := writeInput(inputPath, depsDir, in); err != nil {
		return "", fmt.Errorf("input file: %w", err)
	}

	rep, err := newReporter(j, tmp)
	if err != nil {
		return "", fmt.Errorf("checkpoint file: %w", err)
	}
	undo := "0"
	if j.Undo {
		undo = "1"
	}
	cmd := shellCommand(j.Payload.Run)
	cmd.Dir = j.Payload.Dir
	cmd.Env = append(os.Environ(),
		"WEIR_WORKFLOW_ID="+j.Workflow,
		"WEIR_TASK="+j.Task,
		"WEIR_ATTEMPT="+strconv.Itoa(j.Attempt),
		"WEIR_UNDO="+undo,
		"WEIR_INPUT="+inputPath,
		"WEIR_DEPS_DIR="+depsDir,
	)
	cmd.Env = append(cmd.Env, rep.env()...)
	cmd.Env = traceEnv(ctx, cmd.Env, j.TraceParent)
	if len(j.Deps) > 0 {
		cmd.Env = append(cmd.Env, groupEnv(j.Group())...)
	}
	addPath := ""
	if o.parseAdded != nil && j.Workflow != "" && !j.Undo {
		addPath = filepath.Join(tmp, "add-tasks")
		cmd.Env = append(cmd.Env, "WEIR_ADD_TASKS="+addPath)
	}
	// The msgpack header of a string takes up to 5 bytes of the result.
	stdout := &capBuffer{max: maxResult - 5}
	stderr := &tailBuffer{max: stderrTail}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	p, err := startProc(cmd)
	if err != nil {
		return "", worker.NonRetryable(fmt.Errorf("start sh: %w", err))
	}
	rep.start(ctx)
	select {
	case err = <-p.done:
		p.release()
		rep.finish(ctx)
	case <-ctx.Done():
		p.kill()
		_ = <-p.done // killed: its exit status says only that
		p.release()
		rep.finish(ctx)
		return "", fmt.Errorf("killed: %w", ctx.Err())
	}
	if err != nil {
		reason := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		status := err.Error()
		if errors.As(err, &ee) {
			status = ee.ProcessState.String() // "exit status 3", "signal: killed"
		}
		if reason == "" {
			return "", errors.New(status)
		}
		return "", fmt.Errorf("%s: %s", status, reason)
	}
	if stdout.over {
		return "", fmt.Errorf("standard output is over the result limit of %d bytes", maxResult)
	}
	if addPath != "" {
		if err := addTasks(j, addPath, o.parseAdded); err != nil {
			return "", worker.NonRetryable(err)
		}
	}
	return stdout.String(), nil
}

// groupEnv is what a task with dependencies (a chain's or batch's
// callback: of the group's steps) learns of them: WEIR_GROUP_TOTAL,
// _COMPLETED, _FAILED, _CANCELLED, and WEIR_GROUP_FIRST_FAILURE and
// _FIRST_ERROR, the first step that did not complete and its error ("" when
// all completed).
func groupEnv(g weir.GroupSummary) []string {
	first, firstErr := "", ""
	if g.FirstFailure != nil {
		first, firstErr = g.FirstFailure.Task, g.FirstFailure.Error
	}
	return []string{
		"WEIR_GROUP_TOTAL=" + strconv.Itoa(g.Total),
		"WEIR_GROUP_COMPLETED=" + strconv.Itoa(g.Completed),
		"WEIR_GROUP_FAILED=" + strconv.Itoa(g.Failed),
		"WEIR_GROUP_CANCELLED=" + strconv.Itoa(g.Cancelled),
		"WEIR_GROUP_FIRST_FAILURE=" + first,
		"WEIR_GROUP_FIRST_ERROR=" + firstErr,
	}
}

// addTasks adds the tasks of the file at path, when the command wrote one.
func addTasks(j *worker.Job[Payload], path string, parse AddedParser) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(strings.TrimSpace(string(data))) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("WEIR_ADD_TASKS: %w", err)
	}
	tasks, gate, err := parse(data, j.Payload.Dir)
	if err != nil {
		return fmt.Errorf("WEIR_ADD_TASKS: %w", err)
	}
	return hooks.AddTaskSpecs(&j.JobInfo, tasks, gate)
}

// writeInput writes the WEIR_INPUT file and, in depsDir, one file per
// dependency that has a string result, holding it as is.
func writeInput(inputPath, depsDir string, in input) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if err := os.WriteFile(inputPath, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Mkdir(depsDir, 0o700); err != nil {
		return err
	}
	for _, d := range in.Deps {
		if s, ok := d.Result.(string); ok {
			if err := os.WriteFile(filepath.Join(depsDir, d.name), []byte(s), 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// DecodeResult decodes a stored result or payload (msgpack, as package
// client encodes it) into a value encoding/json takes: nil for none, a
// string for a shell task's result, maps with string keys for msgpack
// maps. Bytes that do not decode give a string saying so, not an error:
// the value is for showing.
func DecodeResult(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	v, err := client.Decode[any](b)
	if err != nil {
		return fmt.Sprintf("<undecodable result: %v>", err)
	}
	return jsonable(v)
}

// jsonable turns msgpack's map[any]any (and nested ones) into values that
// encoding/json takes.
func jsonable(v any) any {
	switch v := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case map[string]any:
		for k, e := range v {
			v[k] = jsonable(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = jsonable(e)
		}
		return v
	case []byte:
		return string(v)
	}
	return v
}

// capBuffer keeps up to max bytes and records whether more came.
type capBuffer struct {
	b    []byte
	max  int
	over bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	room := c.max - len(c.b)
	if len(p) > room {
		c.over = true
		c.b = append(c.b, p[:max(room, 0)]...)
		return len(p), nil
	}
	c.b = append(c.b, p...)
	return len(p), nil
}

func (c *capBuffer) String() string { return string(c.b) }

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	b   []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
