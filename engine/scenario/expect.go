package scenario

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// opExpect is an "expect" line: a check of the state, not a transition.
// It reads through the target (GetWorkflow, GetJob, QueueContents), which
// changes nothing but, like every call, brings the target's clock to the
// step's time.
type opExpect struct {
	noMore
	what   string // workflow, task, tasks, job, queue
	id     string // workflow, job or queue
	task   string // for task
	state  string // expected state, or "error"
	code   string // expected error code when state is "error"
	checks []word // key=value checks, values normalised by kind
	kinds  map[string]kind
}

func (*opExpect) needsReply() bool { return false }

var (
	workflowFields = map[string]kind{
		"reason": kStr, "fail_fast": kBool, "undo_on_cancel": kBool, "cancel_requested": kBool,
		"cancel_undo": kBool, "created": kTime, "ended": kTime, "expires": kTime, "plan_hash": kToken,
		"deadline": kTime, "deadline_hit": kBool, "webhook": kStr, "webhook_queue": kStr,
		"webhook_job": kStr, "run": kInt,
	}
	taskFields = map[string]kind{
		"queue": kStr, "attempt": kInt, "result": kStr, "error": kStr, "always": kBool, "on_failure": kBool, "after": kList,
		"undo": kStr, "undo_queue": kStr, "undo_attempt": kInt, "undo_error": kStr,
		"progress": kStr, "progress_msg": kStr, "progress_at": kTime, "added_by": kStr,
	}
	jobFields = map[string]kind{
		"queue": kStr, "workflow": kStr, "task": kStr, "undo": kBool, "payload": kStr,
		"priority": kInt, "max_attempts": kInt, "attempt": kInt, "backoff": kDur, "timeout": kDur,
		"max_expiries": kInt, "expiries": kInt, "key": kStr,
		"run_at": kTime, "deadline": kTime, "created": kTime, "ended": kTime, "expires": kTime,
		"token": kToken, "cancel_requested": kBool, "result": kStr, "error": kStr,
		"progress": kStr, "progress_msg": kStr, "progress_at": kTime,
	}
	queueFields = map[string]kind{"ready": kList, "delayed": kList, "running": kList}
)

const expectUsage = "expect workflow <id> <state> ... | expect task <workflow> <task> <state> ... | " +
	"expect tasks <workflow> <task>=<state> ... | expect job <id> <state> ... | expect queue <name> [ready=] [delayed=] [running=]"

func parseExpect(args []word, now int64) (operation, error) {
	if len(args) < 2 || args[0].key != "" || args[1].key != "" || args[1].isVar {
		return nil, fmt.Errorf("usage: %s", expectUsage)
	}
	op := &opExpect{what: args[0].val, id: args[1].val}
	rest := args[2:]
	switch op.what {
	case "workflow":
		op.kinds = workflowFields
	case "job":
		op.kinds = jobFields
	case "task":
		if len(rest) == 0 || rest[0].key != "" || rest[0].isVar {
			return nil, fmt.Errorf("usage: expect task <workflow> <task> <state> [key=value ...]")
		}
		op.task, rest = rest[0].val, rest[1:]
		op.kinds = taskFields
	case "tasks":
		if len(rest) == 0 {
			return nil, fmt.Errorf("usage: expect tasks <workflow> <task>=<state> ... (every task, in plan order)")
		}
		for _, w := range rest {
			if w.key == "" || w.isVar || !validTaskState(w.val) {
				return nil, fmt.Errorf("expect tasks: %s is not <task>=<state>", w.text)
			}
		}
		op.checks = rest
		return op, nil
	case "queue":
		o, err := parseOpts(rest, queueFields)
		if err != nil {
			return nil, err
		}
		for k := range queueFields {
			w := o[k]
			if !o.has(k) || w.val == "" {
				w = word{key: k, val: "-"}
			}
			op.checks = append(op.checks, w)
		}
		sortWords(op.checks, []string{"ready", "delayed", "running"})
		return op, nil
	default:
		return nil, fmt.Errorf("usage: %s", expectUsage)
	}
	if len(rest) == 0 || rest[0].key != "" || rest[0].isVar {
		return nil, fmt.Errorf("expect %s: give the expected state (or 'error CODE') after the ID", op.what)
	}
	op.state, rest = rest[0].val, rest[1:]
	if op.state == "error" {
		if len(rest) != 1 || rest[0].key != "" || !knownCode(rest[0].val) {
			return nil, fmt.Errorf("an expected error is 'error CODE' with one of %s", codes())
		}
		op.code = rest[0].val
		return op, nil
	}
	if op.what == "workflow" && !validWorkflowState(op.state) || op.what != "workflow" && !validTaskState(op.state) {
		return nil, fmt.Errorf("expect %s: %q is not a state", op.what, op.state)
	}
	o, err := parseOpts(rest, op.kinds)
	if err != nil {
		return nil, err
	}
	for _, w := range rest { // keep the file's order
		k := w.key
		if k == "" {
			k = w.val // a bare flag
		}
		n := o[k]
		if !n.isVar {
			n.val = normalise(op.kinds[k], n.val, now)
		}
		op.checks = append(op.checks, n)
	}
	return op, nil
}

func sortWords(ws []word, order []string) {
	out := make([]word, 0, len(ws))
	for _, k := range order {
		for _, w := range ws {
			if w.key == k {
				out = append(out, w)
			}
		}
	}
	copy(ws, out)
}

func validTaskState(s string) bool {
	switch weir.State(s) {
	case weir.Waiting, weir.Pending, weir.Queued, weir.Open, weir.Running, weir.Completed, weir.Failed, weir.Cancelled:
		return true
	}
	return false
}

func validWorkflowState(s string) bool {
	switch weir.WorkflowState(s) {
	case weir.WorkflowRunning, weir.WorkflowCompleted, weir.WorkflowFailed, weir.WorkflowCancelled,
		weir.WorkflowCompensating, weir.WorkflowCompensated, weir.WorkflowCompensationFailed:
		return true
	}
	return false
}

// normalise writes an expected value the way actual values are rendered.
func normalise(k kind, v string, now int64) string {
	switch k {
	case kBool:
		b, _ := strconv.ParseBool(v)
		return strconv.FormatBool(b)
	case kInt:
		n, _ := strconv.Atoi(v)
		return strconv.Itoa(n)
	case kDur:
		d, _ := parseDur(v)
		return d.String()
	case kTime:
		if v == "-" {
			return v
		}
		return strconv.FormatInt(timeValue(v, now), 10)
	}
	return v
}

func dur(d time.Duration) string { return d.String() }

func (op *opExpect) exec(r *runner, st *Step) error {
	var got map[string]string // every checkable field of the actual state
	var state string
	var err error
	switch op.what {
	case "workflow":
		var w weir.Workflow
		if w, err = r.store(st).GetWorkflow(r.ctx, op.id); err == nil {
			state, got = string(w.State), workflowMap(w)
		}
	case "task", "tasks":
		var w weir.Workflow
		if w, err = r.store(st).GetWorkflow(r.ctx, op.id); err == nil {
			if op.what == "tasks" {
				return op.checkTasks(r, st, w)
			}
			err = fmt.Errorf("task %q is not in workflow %q", op.task, op.id)
			for _, t := range w.Tasks {
				if t.Name == op.task {
					state, got, err = string(t.State), taskMap(t), nil
				}
			}
		}
	case "job":
		var j weir.Job
		if j, err = r.store(st).GetJob(r.ctx, op.id); err == nil {
			state, got = string(j.State), jobMap(j)
		}
	case "queue":
		var c engine.QueueContents
		qi, ok := r.store(st).(QueueInspector)
		if ok {
			c, err = qi.QueueContents(r.ctx, op.id)
		}
		if !ok || errors.Is(err, errors.ErrUnsupported) {
			r.skip(st)
			return nil
		}
		if err == nil {
			got = map[string]string{"ready": list(c.Ready), "delayed": list(c.Delayed), "running": list(c.Running)}
		}
	}
	want := op.wantLine()
	if err != nil {
		code := ErrorCode(err)
		if op.state == "error" && code == op.code {
			return nil
		}
		return r.mismatch(st, "", []string{want}, []string{errLine(err).String()})
	}
	if op.state == "error" {
		return r.mismatch(st, "", []string{want}, []string{state})
	}
	// The line as the target would have it: the state, then the checked
	// keys with their actual values.
	var gl line
	if op.what != "queue" {
		gl = append(gl, field{"", state})
	}
	b := map[string]string{}
	ok := state == op.state
	for _, w := range op.checks {
		v := got[w.key]
		gl = append(gl, field{w.key, v})
		if !r.matchValue(w, v, b) {
			ok = false
		}
	}
	if !ok {
		return r.mismatch(st, "", []string{want}, []string{gl.String()})
	}
	for k, v := range b {
		r.vars[k] = v
	}
	return nil
}

func (op *opExpect) wantLine() string {
	var parts []string
	if op.what != "queue" {
		parts = append(parts, op.state)
	}
	if op.state == "error" {
		parts = append(parts, op.code)
	}
	if len(op.checks) > 0 {
		parts = append(parts, wordsString(op.checks))
	}
	return strings.Join(parts, " ")
}

// checkTasks compares every task's state, in plan order.
func (op *opExpect) checkTasks(r *runner, st *Step, w weir.Workflow) error {
	var gl line
	for _, t := range w.Tasks {
		gl = append(gl, field{t.Name, string(t.State)})
	}
	ok := len(gl) == len(op.checks)
	for i := 0; ok && i < len(gl); i++ {
		ok = gl[i].key == op.checks[i].key && gl[i].val == op.checks[i].val
	}
	if !ok {
		return r.mismatch(st, "", []string{wordsString(op.checks)}, []string{gl.String()})
	}
	return nil
}

func workflowMap(w weir.Workflow) map[string]string {
	reason := string(w.Reason)
	if reason == "" {
		reason = "-"
	}
	m := map[string]string{
		"reason": reason, "fail_fast": strconv.FormatBool(w.FailFast),
		"undo_on_cancel": strconv.FormatBool(w.UndoOnCancel), "cancel_requested": strconv.FormatBool(w.CancelRequested),
		"cancel_undo": strconv.FormatBool(w.CancelUndo), "created": ms(w.CreatedAt), "ended": ms(w.EndedAt),
		"expires": ms(w.ExpiresAt), "plan_hash": w.PlanHash,
		"deadline": ms(w.Deadline), "deadline_hit": strconv.FormatBool(w.DeadlineHit),
		"webhook": "-", "webhook_queue": "-", "webhook_job": "-", "run": strconv.Itoa(w.Run),
	}
	if h := w.Webhook; h != nil {
		m["webhook"], m["webhook_queue"], m["webhook_job"] = h.URL, h.Queue, h.Job
	}
	return m
}

func taskMap(t weir.Task) map[string]string {
	m := map[string]string{
		"queue": t.Queue, "attempt": strconv.Itoa(t.Attempt), "result": string(t.Result), "error": t.Error,
		"always": strconv.FormatBool(t.Always), "on_failure": strconv.FormatBool(t.OnFailure), "after": list(t.After),
		"undo": "-", "undo_queue": "-", "undo_attempt": "0", "undo_error": "", "added_by": t.AddedBy,
	}
	if t.AddedBy == "" {
		m["added_by"] = "-"
	}
	if t.Undo != nil {
		m["undo_queue"] = t.Undo.Queue
		if t.Undo.State != "" {
			m["undo"] = string(t.Undo.State)
		}
		m["undo_attempt"] = strconv.Itoa(t.Undo.Attempt)
		m["undo_error"] = t.Undo.Error
	}
	addProgress(m, t.Progress)
	return m
}

func jobMap(j weir.Job) map[string]string {
	m := map[string]string{
		"queue": j.Queue, "workflow": j.Workflow, "task": j.Task, "undo": strconv.FormatBool(j.Undo),
		"payload": string(j.Payload), "priority": strconv.Itoa(j.Priority),
		"max_attempts": strconv.Itoa(j.MaxAttempts), "attempt": strconv.Itoa(j.Attempt),
		"max_expiries": strconv.Itoa(j.MaxExpiries), "expiries": strconv.Itoa(j.Expiries), "key": j.Key,
		"backoff": dur(j.Backoff), "timeout": dur(j.Timeout), "run_at": ms(j.RunAt),
		"deadline": "-", "token": "", "created": ms(j.CreatedAt), "ended": ms(j.EndedAt),
		"expires": ms(j.ExpiresAt), "cancel_requested": strconv.FormatBool(j.CancelRequested),
		"result": string(j.Result), "error": j.Error,
	}
	if j.Lease != nil {
		m["deadline"], m["token"] = ms(j.Lease.Deadline), j.Lease.Token
	}
	addProgress(m, j.Progress)
	return m
}
