package lua

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// reader walks a script's flat reply: the []any of run, or the []string
// of runFlat.
type reader struct {
	v   []any
	s   []string
	n   int // len(v) or len(s)
	i   int
	err error
}

func newReader(v any) *reader {
	r := &reader{}
	switch a := v.(type) {
	case []any:
		r.v, r.n = a, len(a)
	case []string:
		r.s, r.n = a, len(a)
	default:
		r.err = fmt.Errorf("%w: reply is %T, not an array", engine.ErrProtocol, v)
	}
	return r
}

func (r *reader) str() string {
	if r.err != nil {
		return ""
	}
	if r.i >= r.n {
		r.err = fmt.Errorf("%w: reply too short (%d values)", engine.ErrProtocol, r.n)
		return ""
	}
	if r.s != nil {
		r.i++
		return r.s[r.i-1]
	}
	x := r.v[r.i]
	r.i++
	switch t := x.(type) {
	case string:
		return t
	case int64:
		return strconv.FormatInt(t, 10)
	case nil:
		return ""
	default:
		r.err = fmt.Errorf("%w: reply value %d is %T", engine.ErrProtocol, r.i-1, x)
		return ""
	}
}

func (r *reader) int() int64 {
	s := r.str()
	if s == "" || r.err != nil {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.err = fmt.Errorf("%w: %q is not an integer", engine.ErrProtocol, s)
	}
	return n
}

func (r *reader) count() int {
	n := r.int()
	if n < 0 || n > int64(r.n) {
		if r.err == nil {
			r.err = fmt.Errorf("%w: bad count %d", engine.ErrProtocol, n)
		}
		return 0
	}
	return int(n)
}

func (r *reader) flag() bool        { return r.str() == "1" }
func (r *reader) time() time.Time   { return toTime(r.int()) }
func (r *reader) ms() time.Duration { return time.Duration(r.int()) * time.Millisecond }

// bytes reads a presence flag and a value: nil when absent.
func (r *reader) bytes() []byte {
	has := r.flag()
	s := r.str()
	if !has {
		return nil
	}
	return []byte(s)
}

func (r *reader) strings() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *reader) pushed() []engine.Pushed {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]engine.Pushed, n)
	for i := range out {
		out[i] = engine.Pushed{JobID: r.str(), Queue: r.str()}
	}
	return out
}

// toTime is the model's: zero for 0, else UTC milliseconds.
func toTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// job reads a job snapshot (reply.lua put_snapshot).
func (r *reader) job() engine.Job {
	var j engine.Job
	j.ID = r.str()
	j.Queue = r.str()
	j.Workflow = r.str()
	j.Task = r.str()
	j.Undo = r.flag()
	j.Payload = r.bytes()
	j.Priority = int(r.int())
	j.MaxAttempts = int(r.int())
	j.Backoff = r.ms()
	j.Timeout = r.ms()
	j.State = engine.State(r.str())
	j.Attempt = int(r.int())
	j.RunAt = r.time()
	token := r.str()
	deadline := r.time()
	j.CancelRequested = r.flag()
	j.Result = r.bytes()
	j.Error = r.str()
	j.CreatedAt = r.time()
	j.EndedAt = r.time()
	j.ExpiresAt = r.time()
	if j.State == engine.Running {
		j.Lease = &engine.Lease{Token: token, Deadline: deadline}
	}
	return j
}

func (r *reader) claimed() []engine.Claimed {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]engine.Claimed, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		c := engine.Claimed{Job: r.job()}
		if c.Job.Lease != nil {
			c.Lease = *c.Job.Lease
		}
		if nd := r.count(); nd > 0 {
			c.Deps = make([]engine.DepOutcome, nd)
			for k := range c.Deps {
				c.Deps[k] = engine.DepOutcome{Task: r.str(), State: engine.State(r.str()), Result: r.bytes(), Error: r.str()}
			}
		}
		out = append(out, c)
	}
	return out
}

func (r *reader) settled() engine.Settled {
	s := engine.Settled{JobID: r.str()}
	code := r.str()
	s.State = engine.State(r.str())
	s.RunAt = r.time()
	s.WorkflowState = engine.WorkflowState(r.str())
	s.WorkflowEnded = r.flag()
	s.Pushed = r.pushed()
	if code != "" {
		s.Err = codeError(code, fmt.Sprintf("job %q is not leased with that token", s.JobID))
	}
	return s
}

// codeError returns the sentinel of a result code, wrapped with msg.
func codeError(code, msg string) error {
	e := engine.ErrorForCode(code)
	if e == nil {
		return fmt.Errorf("%w: unknown result code %q: %s", engine.ErrProtocol, code, msg)
	}
	return fmt.Errorf("%w: %s", e, msg)
}

// workflowFromHash builds a snapshot from a workflow hash's fields.
func workflowFromHash(flat []any) (engine.Workflow, error) {
	if len(flat)%2 != 0 {
		return engine.Workflow{}, fmt.Errorf("%w: odd hash reply", engine.ErrProtocol)
	}
	m := make(map[string]string, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		k, _ := flat[i].(string)
		v, _ := flat[i+1].(string)
		m[k] = v
	}
	atoi := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	w := engine.Workflow{
		ID: m["id"], State: engine.WorkflowState(m["st"]), Reason: engine.Reason(m["rs"]),
		FailFast: m["ff"] == "1", UndoOnCancel: m["uoc"] == "1", CancelRequested: m["cr"] == "1",
		CancelUndo: m["cu"] == "1", PlanHash: m["h"], CreatedAt: toTime(atoi(m["c"])),
		EndedAt: toTime(atoi(m["en"])), ExpiresAt: toTime(atoi(m["x"])),
	}
	n := int(atoi(m["n"]))
	states := m["S"]
	if n <= 0 || w.ID == "" || len(states) != n {
		return engine.Workflow{}, fmt.Errorf("%w: workflow record without tasks", engine.ErrProtocol)
	}
	specs := make([][]string, n)
	for i := range specs {
		f := strings.Split(m["t"+strconv.Itoa(i+1)], "|")
		if len(f) != 10 {
			return engine.Workflow{}, fmt.Errorf("%w: bad task spec %d", engine.ErrProtocol, i+1)
		}
		specs[i] = f
	}
	w.Tasks = make([]engine.Task, n)
	for i, f := range specs {
		p := "t" + strconv.Itoa(i+1) + "."
		t := engine.Task{
			Name: f[0], Queue: f[1], Always: strings.Contains(f[6], "A"),
			State: taskState(states[i]), Attempt: int(atoi(m[p+"a"])), Error: m[p+"e"],
		}
		if states[i] == 'W' {
			t.Error = engine.ReasonTextWorkflowCancelled
		}
		if r, ok := m[p+"r"]; ok {
			t.Result = []byte(r)
		}
		if f[8] != "" {
			for _, d := range strings.Split(f[8], ",") {
				k := int(atoi(d))
				if k < 1 || k > n {
					return engine.Workflow{}, fmt.Errorf("%w: bad dependency index", engine.ErrProtocol)
				}
				t.After = append(t.After, specs[k-1][0])
			}
		} else if strings.Contains(f[6], "E") {
			t.After = []string{}
		}
		if strings.Contains(f[6], "U") {
			t.Undo = &engine.UndoStatus{Queue: f[7]}
			u := "u" + strconv.Itoa(i+1) + "."
			if s, ok := m[u+"s"]; ok {
				t.Undo.State = engine.State(s)
				t.Undo.Attempt = int(atoi(m[u+"a"]))
				t.Undo.Error = m[u+"e"]
			}
		}
		w.Tasks[i] = t
	}
	return w, nil
}

// planArgs encodes a validated plan for submit.lua: the workflow-hash
// fields, the payload-hash fields, the name-index fields and the root
// indices (1-based).
func planArgs(p engine.Plan, hash string) (fields, payloads, index, roots []any) {
	n := len(p.Tasks)
	pos := make(map[string]int, n)
	dependents := make([][]int, n)
	for i, t := range p.Tasks {
		pos[t.Name] = i
		for _, a := range t.After {
			d := pos[a]
			dependents[d] = append(dependents[d], i)
		}
	}
	names := make([]string, n)
	for i, t := range p.Tasks {
		names[i] = t.Name
	}
	alw := make([]byte, n)
	und := make([]byte, n)
	fields = make([]any, 0, 18+8*n)
	for i, t := range p.Tasks {
		alw[i], und[i] = '0', '0'
		if t.Always {
			alw[i] = '1'
		}
		if t.Undo != nil {
			und[i] = '1'
		}
	}
	flag := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	fields = append(fields, "id", p.ID, "st", string(engine.WorkflowRunning), "n", strconv.Itoa(n),
		"rem", strconv.Itoa(n), "h", hash, "ff", flag(p.FailFast), "uoc", flag(p.UndoOnCancel),
		"alw", string(alw), "und", string(und), "names", strings.Join(names, "\n"))
	var sb strings.Builder
	for i, t := range p.Tasks {
		is := strconv.Itoa(i + 1)
		sb.Reset()
		flags := ""
		if t.Always {
			flags += "A"
		}
		absorb := len(dependents[i]) > 0
		for _, d := range dependents[i] {
			if !p.Tasks[d].Always {
				absorb = false
			}
		}
		if absorb {
			flags += "B"
		}
		uq := ""
		if t.Undo != nil {
			flags += "U"
			uq = t.Undo.Queue
		}
		if t.After != nil && len(t.After) == 0 {
			flags += "E"
		}
		attempts := t.MaxAttempts
		if attempts <= 0 {
			attempts = 1
		}
		backoff := t.Backoff
		if backoff <= 0 {
			backoff = engine.DefaultBackoff
		}
		fmt.Fprintf(&sb, "%s|%s|%d|%d|%d|%d|%s|%s|", t.Name, t.Queue, t.Priority, attempts,
			backoff.Milliseconds(), t.Timeout.Milliseconds(), flags, uq)
		for k, a := range t.After {
			if k > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(pos[a] + 1))
		}
		sb.WriteByte('|')
		for k, d := range dependents[i] {
			if k > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(d + 1))
		}
		fields = append(fields, "t"+is, sb.String())
		index = append(index, t.Name, is)
		if len(t.After) == 0 {
			roots = append(roots, is)
		}
		if t.Payload != nil {
			payloads = append(payloads, is, t.Payload)
		}
		if t.Undo != nil && t.Undo.Payload != nil {
			payloads = append(payloads, "u"+is, t.Undo.Payload)
		}
	}
	return fields, payloads, index, roots
}

// taskState decodes one byte of a workflow's task-state string.
func taskState(c byte) engine.State {
	switch c {
	case 'w':
		return engine.Waiting
	case 'q':
		return engine.Queued
	case 'r':
		return engine.Running
	case 'c':
		return engine.Completed
	case 'f':
		return engine.Failed
	case 'x', 'W':
		return engine.Cancelled
	}
	return engine.State("?" + string(c))
}
