package redisstore

import (
	"encoding/json"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// reader walks a script's flat reply (lua/include/reply.lua). Every reply
// is a flat array of strings; what Lua can leave to Go (a job's queue,
// priority and retry policy from its spec, the parts of a snapshot a state
// implies) is decoded here, so the server does less. Some values are
// packed: several fields that none can contain packSep joined into one
// value (a Claimed's, lease.lua's put_claimed; a Settled's, reply.lua's
// put_settled), which the server turns
// into a reply element once instead of once per field; unpack makes the
// next value the packed one, whose fields str then reads, while elem
// reads the values after it, until endPack.
type reader struct {
	v   []string
	i   int
	err error
	// lazy lists the Claimed whose dependency outcomes the reply left out
	lazy []lazyDeps
	// pk is what is left of the packed value being read (inPack), pkEnd
	// set once its last field is read
	pk            string
	inPack, pkEnd bool
}

// packSep separates the fields of a packed value (spec/scripts.md,
// Replies): no field that is packed (IDs, names, specs, tokens, decimal
// numbers, states, flags, traceparents, ready-at times) can contain it.
const packSep = '\n'

// lazyDeps names a Claimed (its index in the reply's list) whose
// dependencies, the task indices dp ("1,5,7"), are read after the call.
type lazyDeps struct {
	at int
	dp string
}

// peek returns the next value without reading it ("" at the end).
func (r *reader) peek() string {
	if r.err != nil || r.i >= len(r.v) {
		return ""
	}
	return r.v[r.i]
}

func newReader(v []string) *reader { return &reader{v: v} }

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{weir.ErrProtocol}, args...)...)
	}
}

// str reads the next field of the packed value being read, else the next
// value.
func (r *reader) str() string {
	if r.inPack {
		return r.field()
	}
	return r.elem()
}

// elem reads the next value of the reply, after the packed value being
// read when there is one.
func (r *reader) elem() string {
	if r.err != nil {
		return ""
	}
	if r.i >= len(r.v) {
		r.fail("reply too short (%d values)", len(r.v))
		return ""
	}
	r.i++
	return r.v[r.i-1]
}

// unpack reads the next value as a packed one: str reads its fields
// until endPack.
func (r *reader) unpack() {
	r.pk = r.elem()
	r.inPack, r.pkEnd = true, false
}

// field reads the next field of the packed value (a substring of it: no
// allocation).
func (r *reader) field() string {
	if r.err != nil {
		return ""
	}
	if r.pkEnd {
		r.fail("packed value too short")
		return ""
	}
	i := strings.IndexByte(r.pk, packSep)
	if i < 0 {
		s := r.pk
		r.pk, r.pkEnd = "", true
		return s
	}
	s := r.pk[:i]
	r.pk = r.pk[i+1:]
	return s
}

// more reports whether the packed value being read has fields left.
func (r *reader) more() bool { return r.inPack && !r.pkEnd && r.err == nil }

// endPack ends the packed value being read, which must have been read
// whole.
func (r *reader) endPack() {
	if r.more() {
		r.fail("packed value with %q left", r.pk)
	}
	r.pk, r.inPack, r.pkEnd = "", false, false
}

// has reports whether the flags field fl has flag f.
func has(fl string, f byte) bool { return strings.IndexByte(fl, f) >= 0 }

func (r *reader) int() int64 {
	s := r.str()
	if s == "" || r.err != nil {
		return 0
	}
	n, err := parseInt(s)
	if err != nil {
		r.fail("%q is not an integer", s)
	}
	return n
}

// parseInt is strconv.ParseInt(s, 10, 64), without its generality where
// a reply's integers need none: an optional "-" and up to 18 digits (no
// overflow) are read here, anything else by strconv. A claim reads a
// dozen integers per job.
func parseInt(s string) (int64, error) {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return strconv.ParseInt(s, 10, 64)
	}
	var n int64
	for i := 0; i < len(d); i++ {
		c := d[i] - '0'
		if c > 9 {
			return strconv.ParseInt(s, 10, 64)
		}
		n = n*10 + int64(c)
	}
	if len(d) < len(s) {
		n = -n
	}
	return n, nil
}

func (r *reader) count() int {
	n := r.int()
	// (the items of a list in a packed value are fields of it)
	if n < 0 || n > int64(len(r.v)+len(r.pk)) {
		r.fail("bad count %d", n)
		return 0
	}
	return int(n)
}

func (r *reader) flag() bool      { return r.str() == "1" }
func (r *reader) time() time.Time { return toTime(r.int()) }

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

// applySpec fills a job's identity and static attributes from its ID and
// its spec: "queue|priority|maxAttempts|backoffMs|timeoutMs[|maxExpiries]
// [|K<key>][|u<digest>|U<digest>]" for a plain job, the task spec "name|queue|priority|maxAttempts|
// backoffMs|timeoutMs|flags[:key]|undoQueue" for a task or undo job (an undo
// runs on undoQueue, without the task's concurrency key; flags carry "S"
// for a signal task and, last, "X<n>" for max expiries n). Max expiries
// absent from either is engine.DefaultMaxExpiries.
func applySpec(j *weir.Job, id, spec string) error {
	j.ID = id
	var fields [specFields]string
	f, over := splitSpec(spec, &fields)
	wf, rest, isTask := strings.Cut(id, "/")
	var q string
	xs := ""
	if isTask {
		if over || len(f) != 8 {
			return fmt.Errorf("%w: job %q has the task spec %q", weir.ErrProtocol, id, spec)
		}
		task, _, undo := strings.Cut(rest, "/")
		j.Workflow, j.Task, j.Undo = wf, task, undo
		flags, key, _ := strings.Cut(f[6], ":")
		if !undo {
			j.Key = key
		}
		if _, after, ok := strings.Cut(flags, "X"); ok {
			xs = after
		}
		q, f = f[1], f[2:6]
		if undo {
			q = spec[strings.LastIndexByte(spec, '|')+1:]
		}
	} else {
		if over {
			return fmt.Errorf("%w: job %q has the spec %q", weir.ErrProtocol, id, spec)
		}
		if n := len(f); n > 5 && f[n-1] != "" && (f[n-1][0] == 'u' || f[n-1][0] == 'U') {
			f = f[:n-1] // a unique job's key
		}
		if n := len(f); n > 5 && strings.HasPrefix(f[n-1], "K") {
			j.Key, f = f[n-1][1:], f[:n-1] // its concurrency key
		}
		if len(f) != 5 && len(f) != 6 {
			return fmt.Errorf("%w: job %q has the spec %q", weir.ErrProtocol, id, spec)
		}
		if len(f) == 6 {
			xs = f[5]
		}
		q, f = f[0], f[1:5]
	}
	j.MaxExpiries = weir.DefaultMaxExpiries
	if xs != "" {
		x, err := strconv.Atoi(xs)
		if err != nil || x < 0 {
			return fmt.Errorf("%w: job %q has the spec %q", weir.ErrProtocol, id, spec)
		}
		j.MaxExpiries = x
	}
	var n [4]int64
	for i, s := range f {
		v, err := parseInt(s)
		if err != nil {
			return fmt.Errorf("%w: job %q has the spec %q", weir.ErrProtocol, id, spec)
		}
		n[i] = v
	}
	j.Queue = q
	j.Priority, j.MaxAttempts = int(n[0]), int(n[1])
	j.Backoff, j.Timeout = time.Duration(n[2])*time.Millisecond, time.Duration(n[3])*time.Millisecond
	return nil
}

// specFields is the most "|"-separated fields a spec has: a task spec's
// 8, a plain job's 5 with its max expiries, concurrency key and unique key.
const specFields = 8

// splitSpec splits spec at every "|" into the array fields (no allocation:
// a claim decodes one spec per job), returning the fields, or over true
// when spec has more than specFields (the fields are then the first
// specFields).
func splitSpec(spec string, fields *[specFields]string) (f []string, over bool) {
	n := 0
	for {
		if n == len(fields) {
			return fields[:], true
		}
		i := strings.IndexByte(spec, '|')
		if i < 0 {
			fields[n] = spec
			return fields[:n+1], false
		}
		fields[n], spec = spec[:i], spec[i+1:]
		n++
	}
}

// job reads a job snapshot (reply.lua put_snapshot): id spec created
// hasPayload payload state attempt runAt token deadline cancelRequested
// hasResult result error ended expires expiries progress w ah (attempts).
func (r *reader) job() weir.Job {
	var j weir.Job
	id, spec := r.str(), r.str()
	if r.err == nil {
		if err := applySpec(&j, id, spec); err != nil {
			r.err = err
		}
	}
	j.CreatedAt = r.time()
	j.Payload = r.bytes()
	j.State = weir.State(r.str())
	j.Attempt = int(r.int())
	j.RunAt = r.time()
	token := r.str()
	deadline := r.time()
	j.CancelRequested = r.flag()
	j.Result = r.bytes()
	j.Error = r.str()
	j.EndedAt = r.time()
	j.ExpiresAt = r.time()
	j.Expiries = int(r.int())
	j.Progress = parseProgress(r.str())
	w, ah := r.str(), r.str()
	if j.State == weir.Running {
		j.Lease = &weir.Lease{Token: token, Deadline: deadline}
	}
	if r.err == nil {
		if err := attempts(&j, w, ah); err != nil {
			r.err = err
		}
	}
	return j
}

// claimed reads a claim's count and its Claimed (lease.lua put_claimed):
// per job one packed value, id spec created attempt token deadline
// expiries flags deps, where deps is "0", "L<dp>" (a wide join's, read
// after the call) or a count and per dependency its spec, state and
// flags, and the packed value ends with its optional fields
// (claimedTail); then the values never packed, each only when a flag says
// it is there: the payload (p), the error (e), per dependency its result
// (r) and error (e), the checkpoint (c). The job is running; the rest of
// its snapshot is zero.
func (r *reader) claimed() []engine.Claimed {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]engine.Claimed, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		var c engine.Claimed
		r.unpack()
		id, spec := r.str(), r.str()
		if r.err == nil {
			if err := applySpec(&c.Job, id, spec); err != nil {
				r.err = err
			}
		}
		c.Job.CreatedAt = r.time()
		c.Job.State = weir.Running
		c.Job.Attempt = int(r.int())
		c.Lease.Token = r.str()
		c.Lease.Deadline = r.time()
		c.Job.Expiries = int(r.int())
		fl := r.str()
		if has(fl, 'p') {
			c.Job.Payload = []byte(r.elem())
		}
		if has(fl, 'e') {
			c.Job.Error = r.elem()
		}
		deps := r.str()
		if dp, ok := strings.CutPrefix(deps, "L"); ok {
			// a wide join: its dependencies' outcomes are read after the
			// call (Store.readDeps)
			r.lazy = append(r.lazy, lazyDeps{at: len(out), dp: dp})
		} else if deps != "0" && r.err == nil {
			// (each dependency is three fields: at least two bytes of
			// the packed value)
			nd, err := strconv.Atoi(deps)
			if err != nil || nd < 0 || nd > len(r.pk)/2+1 {
				r.fail("bad dependency count %q", deps)
				nd = 0
			}
			if nd > 0 {
				c.Deps = make([]weir.DepOutcome, nd)
			}
			for k := range c.Deps {
				name, _, _ := strings.Cut(r.str(), "|")
				d := weir.DepOutcome{Task: name, State: weir.State(r.str())}
				dfl := r.str()
				if has(dfl, 'r') {
					d.Result = []byte(r.elem())
				}
				if has(dfl, 'e') {
					d.Error = r.elem()
				}
				c.Deps[k] = d
			}
		}
		r.claimedTail(&c)
		r.endPack()
		if has(fl, 'c') {
			c.Checkpoint = []byte(r.elem())
		}
		out = append(out, c)
		// the job's lease is the Claimed's own (out never grows past n, so
		// the element stays where it is)
		last := &out[len(out)-1]
		last.Job.Lease = &last.Lease
	}
	return out
}

// settled reads a Settled (reply.lua put_settled): one packed value, id
// code state runAt wfState wfEnded nPushed (id queue)*.
func (r *reader) settled() engine.Settled {
	r.unpack()
	s := engine.Settled{JobID: r.str()}
	code := r.str()
	s.State = weir.State(r.str())
	s.RunAt = r.time()
	s.WorkflowState = weir.WorkflowState(r.str())
	s.WorkflowEnded = r.flag()
	s.Pushed = r.pushed()
	r.endPack()
	if code != "" {
		s.Err = codeError(code, fmt.Sprintf("job %q is not leased with that token", s.JobID))
	}
	return s
}

// codeError returns the sentinel of a result code, wrapped with msg.
func codeError(code, msg string) error {
	e := weir.ErrorForCode(code)
	if e == nil {
		return fmt.Errorf("%w: unknown result code %q: %s", weir.ErrProtocol, code, msg)
	}
	return fmt.Errorf("%w: %s", e, msg)
}

// workflowFromHash builds a snapshot from a workflow hash's fields (a
// field/value list ending with "S" and the task-state string).
func workflowFromHash(flat []string) (weir.Workflow, error) {
	if len(flat)%2 != 0 {
		return weir.Workflow{}, fmt.Errorf("%w: odd hash reply", weir.ErrProtocol)
	}
	m := make(map[string]string, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		m[flat[i]] = flat[i+1]
	}
	atoi := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	w := weir.Workflow{
		ID: m["id"], Name: m[nameField], Labels: decodeLabels(m[labelsField]), State: weir.WorkflowState(m["st"]), Reason: weir.Reason(m["rs"]),
		FailFast: m["ff"] == "1", UndoOnCancel: m["uoc"] == "1", CancelRequested: m["cr"] == "1",
		CancelUndo: m["cu"] == "1", PlanHash: m["h"], CreatedAt: toTime(atoi(m["c"])),
		EndedAt: toTime(atoi(m["en"])), ExpiresAt: toTime(atoi(m["x"])),
		Deadline: toTime(atoi(m["wdl"])), DeadlineHit: m["wdh"] == "1", Run: 1,
	}
	if r := m["run"]; r != "" {
		w.Run = int(atoi(r))
	}
	if b := m["hk.b"]; b != "" {
		var hp engine.WebhookPayload
		if err := json.Unmarshal([]byte(b), &hp); err != nil {
			return weir.Workflow{}, fmt.Errorf("%w: webhook field: %v", weir.ErrProtocol, err)
		}
		q, _, _ := strings.Cut(m["hk"], "|")
		w.Webhook = &weir.WebhookStatus{URL: hp.URL, Secret: hp.Secret, Queue: q, Job: weir.WebhookRunJobID(w.ID, w.Run)}
	}
	n := int(atoi(m["n"]))
	states := m["S"]
	if n <= 0 || w.ID == "" || len(states) != n {
		return weir.Workflow{}, fmt.Errorf("%w: workflow record without tasks", weir.ErrProtocol)
	}
	specs := make([][]string, n)
	for i := range specs {
		f := strings.Split(m["t"+strconv.Itoa(i+1)], "|")
		if len(f) != 8 {
			return weir.Workflow{}, fmt.Errorf("%w: bad task spec %d", weir.ErrProtocol, i+1)
		}
		specs[i] = f
	}
	w.Tasks = make([]weir.Task, n)
	for i, f := range specs {
		p := "t" + strconv.Itoa(i+1) + "."
		f[6], _, _ = strings.Cut(f[6], ":") // the flags, without a concurrency key
		t := weir.Task{
			Name: f[0], Queue: f[1], Always: strings.Contains(f[6], "A"), OnFailure: strings.Contains(f[6], "F"), Signal: strings.Contains(f[6], "S"),
			State: taskState(states[i]), Attempt: int(atoi(m[p+"a"])), Error: m[p+"e"],
			Progress: parseProgress(m[p+"pg"]), AddedBy: m[p+"ab"],
		}
		switch states[i] {
		case 'W':
			t.Error = weir.ReasonTextWorkflowCancelled
		case 'D':
			t.Error = weir.ReasonTextDeadline
		}
		if r, ok := m[p+"r"]; ok {
			t.Result = []byte(r)
		}
		if dp := m[p+"dp"]; dp != "" {
			for _, d := range strings.Split(dp, ",") {
				k := int(atoi(d))
				if k < 1 || k > n {
					return weir.Workflow{}, fmt.Errorf("%w: bad dependency index", weir.ErrProtocol)
				}
				t.After = append(t.After, specs[k-1][0])
			}
		} else if strings.Contains(f[6], "E") {
			t.After = []string{}
		}
		if strings.Contains(f[6], "U") {
			t.Undo = &weir.UndoStatus{Queue: f[7]}
			u := "u" + strconv.Itoa(i+1) + "."
			if s, ok := m[u+"s"]; ok {
				t.Undo.State = weir.State(s)
				t.Undo.Attempt = int(atoi(m[u+"a"]))
				t.Undo.Error = m[u+"e"]
			}
		}
		w.Tasks[i] = t
	}
	return w, nil
}

// maxExpiries resolves a MaxExpiries as the model does: 0 is
// engine.DefaultMaxExpiries, engine.NoExpiries (or any negative) none.
func maxExpiries(n int) int {
	switch {
	case n == 0:
		return weir.DefaultMaxExpiries
	case n < 0:
		return 0
	}
	return n
}

// expiriesField is the end of a plain job's spec that gives its max
// expiries: "" for the default, else "|<n>" (resolved).
func expiriesField(n int) string {
	if x := maxExpiries(n); x != weir.DefaultMaxExpiries {
		return "|" + strconv.Itoa(x)
	}
	return ""
}

// jobSpec is a plain job's spec field: "queue|priority|maxAttempts|
// backoffMs|timeoutMs", defaults applied; expiriesField appends its max
// expiries when not the default.
func jobSpec(queue string, priority, attempts int, backoff, timeout time.Duration) string {
	return queue + "|" + strconv.Itoa(priority) + "|" + strconv.Itoa(attempts) + "|" +
		strconv.FormatInt(backoff.Milliseconds(), 10) + "|" + strconv.FormatInt(timeout.Milliseconds(), 10)
}

// planArgs encodes a validated plan for submit.lua: the workflow-hash
// fields (the workflow's, then per task its spec t<i>, its dependencies
// t<i>.dp, dependents t<i>.dn (dependentsField) and open count t<i>.o), the payload-hash
// fields, the name-index fields and the roots: when every root is pushed
// ready, unkeyed and of priority 0, their count, per root its ready-at
// field t<i>.rd (F_READY, i 1-based), job ID and queue, and the task-state string with them queued;
// else 0 and the root indices with their marks.
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
	alw := make([]byte, n)
	und := make([]byte, n)
	for i, t := range p.Tasks {
		names[i] = t.Name
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
	fields = make([]any, 0, 22+8*n)
	fields = append(fields, "id", p.ID, "st", string(weir.WorkflowRunning), "n", strconv.Itoa(n),
		"rem", strconv.Itoa(n), "h", hash, "ff", flag(p.FailFast), "uoc", flag(p.UndoOnCancel),
		"alw", string(alw), "und", string(und), "names", strings.Join(names, "\n"))
	var marks []string
	plain := true             // every root pushed ready, unkeyed, of priority 0
	rs := make([]string, 3*n) // the roots' indices, marks and ready-at fields
	rootIs, rootMarks, rootRd := rs[:0:n], rs[n:n:2*n], rs[2*n:2*n:3*n]
	index = make([]any, 0, 2*n+2)
	indices := func(list []int) string {
		var sb strings.Builder
		for k, d := range list {
			if k > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(d + 1))
		}
		return sb.String()
	}
	for i, t := range p.Tasks {
		is := strconv.Itoa(i + 1)
		absorb := len(dependents[i]) > 0
		for _, d := range dependents[i] {
			if !engine.Absorbs(p.Tasks[d]) {
				absorb = false
			}
		}
		fields = append(fields, "t"+is, taskSpec(t, absorb))
		if len(t.After) > 0 {
			deps := make([]int, len(t.After))
			for k, a := range t.After {
				deps[k] = pos[a]
			}
			fields = append(fields, "t"+is+".dp", indices(deps), "t"+is+".o", strconv.Itoa(len(deps)))
		}
		if len(dependents[i]) > 0 {
			fields = append(fields, "t"+is+".dn", dependentsField(p.Tasks, dependents[i]))
		}
		index = append(index, t.Name, is)
		mark := signalMark(t)
		if len(t.After) == 0 {
			mark += rootDelayMark(p, t)
			rootIs, rootMarks, rootRd = append(rootIs, is), append(rootMarks, mark), append(rootRd, "t"+is+".rd")
			if mark != "" || t.Key != "" || t.Priority != 0 {
				plain = false
			}
		} else if t.Delay > 0 {
			mark += "d" + strconv.FormatInt(t.Delay.Milliseconds(), 10)
		}
		if mark != "" {
			marks = append(marks, is+mark)
		}
		if t.Payload != nil {
			payloads = append(payloads, is, t.Payload)
		}
		if t.Undo != nil && t.Undo.Payload != nil {
			payloads = append(payloads, "u"+is, t.Undo.Payload)
		}
	}
	// the push marks of a re-run (rerun_workflow.lua): how each task with
	// one is pushed once its dependencies ended, "<index><mark>"
	fields = append(fields, "rk", strings.Join(marks, ","))
	if p.Webhook != nil {
		// the delivery job's spec, fingerprint and payload (webhook.lua)
		j := engine.WebhookJob(p)
		fields = append(fields, "hk", jobSpec(j.Queue, j.Priority, j.MaxAttempts, j.Backoff, j.Timeout),
			"hk.f", engine.JobHash(j), "hk.b", string(j.Payload))
	}
	if n >= hashTableTasks {
		fields = append(fields, ":ht", hashTableMarker)
		index = append(index, ":ht", hashTableMarker)
	}
	if !plain {
		roots = make([]any, 1, 1+len(rootIs))
		roots[0] = 0
		for k, is := range rootIs {
			roots = append(roots, is+rootMarks[k])
		}
		return fields, payloads, index, roots
	}
	// plain roots: their ready-at fields, job IDs and queues, then the
	// state string with them queued (lua/scripts/submit.lua)
	roots = make([]any, 0, 2+3*len(rootIs))
	roots = append(roots, len(rootIs))
	state := []byte(strings.Repeat("w", n))
	k := 0
	for i, t := range p.Tasks {
		if len(t.After) == 0 {
			state[i] = 'q'
			roots = append(roots, rootRd[k], p.ID+"/"+t.Name, t.Queue)
			k++
		}
	}
	return fields, payloads, index, append(roots, string(state))
}

// taskSpec is task t's spec field t<i> (spec/keys.md); absorb: a failure
// of it is absorbed (it has dependents, all Always).
func taskSpec(t engine.TaskSpec, absorb bool) string {
	flags := ""
	if t.Always {
		flags += "A"
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
	if t.Signal {
		flags += "S"
	}
	if t.OnFailure {
		flags += "F"
	}
	if t.NoAbsorb {
		flags += "N"
	}
	// last: the spec's readers take the digits after it
	if x := maxExpiries(t.MaxExpiries); x != weir.DefaultMaxExpiries {
		flags += "X" + strconv.Itoa(x)
	}
	if t.Key != "" {
		flags += ":" + t.Key
	}
	attempts := max(t.MaxAttempts, 1)
	backoff := t.Backoff
	if backoff <= 0 {
		backoff = weir.DefaultBackoff
	}
	// jobSpec's fields, in one concatenation
	return t.Name + "|" + t.Queue + "|" + strconv.Itoa(t.Priority) + "|" + strconv.Itoa(attempts) + "|" +
		strconv.FormatInt(backoff.Milliseconds(), 10) + "|" + strconv.FormatInt(t.Timeout.Milliseconds(), 10) +
		"|" + flags + "|" + uq
}

// A workflow of hashTableTasks tasks or more gets the field ":ht" in its
// hash and in its name index, whose value is longer than Redis's default
// hash-max-listpack-value (64): that keeps both hash tables, whose field
// look-ups cost the same whatever the workflow's size, instead of
// listpacks, which Redis searches from the start for every field (a
// 100-task workflow's index scanned ~50 entries per look-up).
const hashTableTasks = 8

var hashTableMarker = strings.Repeat("-", 65)

// dependentsField is a task's t<i>.dn: per dependent (ascending)
// "<index> <name> <queue> <priority>[signalMark][d<delay ms>][:<key>]"
// (key: its concurrency key), joined by ";", so that a promotion
// reads nothing but the open count.
func dependentsField(tasks []engine.TaskSpec, dependents []int) string {
	var sb strings.Builder
	for k, d := range dependents {
		if k > 0 {
			sb.WriteByte(';')
		}
		t := tasks[d]
		sb.WriteString(strconv.Itoa(d + 1))
		sb.WriteByte(' ')
		sb.WriteString(t.Name)
		sb.WriteByte(' ')
		sb.WriteString(t.Queue)
		sb.WriteByte(' ')
		if t.OnFailure {
			sb.WriteByte('f') // first: cascade.lua reads one byte
		}
		sb.WriteString(strconv.Itoa(t.Priority))
		sb.WriteString(signalMark(t))
		if t.Delay > 0 {
			sb.WriteString("d" + strconv.FormatInt(t.Delay.Milliseconds(), 10))
		}
		if t.Key != "" {
			sb.WriteByte(':')
			sb.WriteString(t.Key)
		}
	}
	return sb.String()
}

// rootDelayMark is what a root index ends with when the push that finds it
// delays it (include/promote.lua): "a<StartAt ms>" for a plan that has
// one, "d<Delay ms>" for a task that has one; "" for neither.
func rootDelayMark(p engine.Plan, t engine.TaskSpec) string {
	m := ""
	if !p.StartAt.IsZero() {
		m = "a" + strconv.FormatInt(p.StartAt.UnixMilli(), 10)
	}
	if t.Delay > 0 {
		m += "d" + strconv.FormatInt(t.Delay.Milliseconds(), 10)
	}
	return m
}

// signalMark is what a signal task's root index and dependents entry end
// with, so that the push that finds it opens it instead
// (include/promote.lua): "s<timeout ms>"; "" for any other task.
func signalMark(t engine.TaskSpec) string {
	if !t.Signal {
		return ""
	}
	return "s" + strconv.FormatInt(t.SignalTimeout.Milliseconds(), 10)
}

// taskState decodes one byte of a workflow's task-state string.
func taskState(c byte) weir.State {
	switch c {
	case 'w':
		return weir.Waiting
	case 'q':
		return weir.Queued
	case 'o':
		return weir.Open
	case 'r':
		return weir.Running
	case 'c':
		return weir.Completed
	case 'f':
		return weir.Failed
	case 'x', 'W', 'D':
		return weir.Cancelled
	}
	return weir.State("?" + string(c))
}
