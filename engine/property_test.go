package engine

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Property tests: random DAGs driven by random operations in
// random orders. Everything is checked from the outside, through the replies
// of the transitions and snapshots (GetWorkflow, GetJob, QueueContents,
// Queues) taken after every step, against invariants and, at the end, against
// an oracle of spec/states.md's Absorption, Workflow end decision and
// Compensation that recomputes each workflow's end state from its final
// task states. Run more cases with -rapid.checks=N.

var ptQueueNames = []string{"a", "b", "c"}

const (
	ptEpoch    int64 = 1_700_000_000_000 // unix ms of the first step
	ptMaxSteps int   = 60                // random steps before the drain
	ptMaxPlain int   = 3                 // plain jobs per case
)

// ptInfo is a plan with its DAG computed here, independently of the model.
type ptInfo struct {
	plan       Plan
	deps       [][]int
	dependents [][]int
	desc       [][]bool // desc[x][y]: y depends on x, directly or not
	absorbable []bool
}

func ptNewInfo(p Plan) *ptInfo {
	n := len(p.Tasks)
	in := &ptInfo{plan: p, deps: make([][]int, n), dependents: make([][]int, n), desc: make([][]bool, n), absorbable: make([]bool, n)}
	index := map[string]int{}
	for i, t := range p.Tasks {
		for _, a := range t.After {
			d := index[a]
			in.deps[i] = append(in.deps[i], d)
			in.dependents[d] = append(in.dependents[d], i)
		}
		index[t.Name] = i
	}
	for x := n - 1; x >= 0; x-- {
		in.desc[x] = make([]bool, n)
		for _, d := range in.dependents[x] {
			in.desc[x][d] = true
			for y, ok := range in.desc[d] {
				if ok {
					in.desc[x][y] = true
				}
			}
		}
		in.absorbable[x] = len(in.dependents[x]) > 0
		for _, d := range in.dependents[x] {
			if !p.Tasks[d].Always || p.Tasks[d].NoAbsorb {
				in.absorbable[x] = false
			}
		}
	}
	return in
}

func ptGenPlan(t *rapid.T, id string) Plan {
	p := Plan{
		ID:           id,
		FailFast:     rapid.Bool().Draw(t, id+".failFast"),
		UndoOnCancel: rapid.Bool().Draw(t, id+".undoOnCancel"),
	}
	n := rapid.IntRange(1, 30).Draw(t, id+".tasks")
	for i := range n {
		ts := TaskSpec{
			Name:    fmt.Sprintf("t%d", i),
			Queue:   rapid.SampledFrom(ptQueueNames).Draw(t, "queue"),
			Payload: []byte{byte(i)},
		}
		if i > 0 {
			k := rapid.IntRange(0, min(i, 3)).Draw(t, "deps")
			for _, d := range rapid.SliceOfNDistinct(rapid.IntRange(0, i-1), k, k, rapid.ID[int]).Draw(t, "after") {
				ts.After = append(ts.After, fmt.Sprintf("t%d", d))
			}
		}
		ts.Always = rapid.IntRange(0, 3).Draw(t, "always") == 0
		ts.NoAbsorb = ts.Always && rapid.IntRange(0, 2).Draw(t, "noAbsorb") == 0
		if rapid.Bool().Draw(t, "undo") {
			ts.Undo = &UndoSpec{Queue: rapid.SampledFrom(ptQueueNames).Draw(t, "undoQueue"), Payload: []byte("u")}
		}
		ts.MaxAttempts = rapid.IntRange(1, 3).Draw(t, "maxAttempts")
		ts.MaxExpiries = rapid.SampledFrom([]int{0, 0, weir.NoExpiries, 2}).Draw(t, "maxExpiries")
		ts.Priority = rapid.IntRange(-1, 1).Draw(t, "priority")
		ts.Backoff = time.Duration(rapid.SampledFrom([]int{0, 10, 500, 2000}).Draw(t, "backoffMs")) * time.Millisecond
		p.Tasks = append(p.Tasks, ts)
	}
	return p
}

func ptPlanString(p Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s failFast=%v undoOnCancel=%v:", p.ID, p.FailFast, p.UndoOnCancel)
	for _, t := range p.Tasks {
		fmt.Fprintf(&b, " %s[%s", t.Name, t.Queue)
		if len(t.After) > 0 {
			fmt.Fprintf(&b, " after=%s", strings.Join(t.After, ","))
		}
		if t.Always {
			b.WriteString(" always")
		}
		if t.NoAbsorb {
			b.WriteString(" no_absorb")
		}
		if t.Undo != nil {
			fmt.Fprintf(&b, " undo=%s", t.Undo.Queue)
		}
		fmt.Fprintf(&b, " max=%d]", t.MaxAttempts)
	}
	return b.String()
}

// ptStats counts what the generated cases covered (logged with -v), so a
// generator that stops reaching a rule shows.
type ptStats struct {
	cases, steps, claims, undoClaims, settles, repeats int
	failFast, cancelPendingUndo                        int
	ends                                               map[string]int
}

var ptCoverage = ptStats{ends: map[string]int{}}

// ptSnap is everything observable about the model at one time.
type ptSnap struct {
	wfs    map[string]weir.Workflow
	jobs   map[string]weir.Job
	queues map[string]QueueContents
	infos  []weir.QueueInfo
}

type ptLease struct{ id, token string }

type ptFinish struct {
	o Outcome
	s Settled
}

type ptWorld struct {
	t         *rapid.T
	m         *Model
	now       int64
	infos     []*ptInfo
	byID      map[string]*ptInfo
	submitted map[string]bool
	plain     map[string]JobSpec
	plainIDs  []string
	paused    map[string]bool
	held      []ptLease           // leases handed out and not finished by us
	last      map[string]ptFinish // latest successful finish per job
	past      []ptFinish          // every successful finish
	snap      ptSnap              // after the last step
	step      int

	claimed            map[string]bool // jobs claimed at least once
	firstPush          map[string]int  // pushes of a job seen before its first claim
	endReports         map[string]int  // Settled.WorkflowEnded per workflow
	failedBeforeCancel map[string]bool // an unabsorbed failure seen before any cancel
	failFastSet        map[string]map[string]bool

	// per step
	stepClaims  []string
	stepPushed  []string // first pushes of this step
	stepAll     []string // every push this step reported
	pushesAll   bool     // this step reports every push it makes
	stepReports map[string]int
	reportsAll  bool // every settle of this step was reported
}

func (w *ptWorld) time() time.Time { return time.UnixMilli(w.now) }

func (w *ptWorld) fatalf(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("step %d: "+format, append([]any{w.step}, args...)...)
}

// ptSplit returns the workflow, the task and whether id is an undo job, for
// a workflow job ID; ok is false for a plain job.
func ptSplit(id string) (wf, task string, undo, ok bool) {
	parts := strings.Split(id, "/")
	switch len(parts) {
	case 2:
		return parts[0], parts[1], false, true
	case 3:
		return parts[0], parts[1], true, true
	}
	return "", "", false, false
}

func (w *ptWorld) taskIndex(in *ptInfo, name string) int {
	for i, t := range in.plan.Tasks {
		if t.Name == name {
			return i
		}
	}
	w.fatalf("no task %q in %s", name, in.plan.ID)
	return -1
}

// spec returns the queue, max attempts and backoff a job should have.
func (w *ptWorld) spec(id string) (queue string, maxAttempts int, backoff time.Duration) {
	wf, task, undo, ok := ptSplit(id)
	if !ok {
		s := w.plain[id]
		queue, maxAttempts, backoff = s.Queue, s.MaxAttempts, s.Backoff
	} else {
		in := w.byID[wf]
		ts := in.plan.Tasks[w.taskIndex(in, task)]
		queue, maxAttempts, backoff = ts.Queue, ts.MaxAttempts, ts.Backoff
		if undo {
			queue = ts.Undo.Queue
		}
	}
	if maxAttempts == 0 {
		maxAttempts = 1
	}
	if backoff == 0 {
		backoff = time.Second
	}
	return queue, maxAttempts, backoff
}

func (w *ptWorld) jobIDs() []string {
	var ids []string
	for _, in := range w.infos {
		if !w.submitted[in.plan.ID] {
			continue
		}
		for _, t := range in.plan.Tasks {
			ids = append(ids, weir.TaskJobID(in.plan.ID, t.Name))
			if t.Undo != nil {
				ids = append(ids, weir.UndoJobID(in.plan.ID, t.Name))
			}
		}
	}
	return append(ids, w.plainIDs...)
}

func (w *ptWorld) snapshot() ptSnap {
	now := w.time()
	s := ptSnap{wfs: map[string]weir.Workflow{}, jobs: map[string]weir.Job{}, queues: map[string]QueueContents{}}
	for _, in := range w.infos {
		if !w.submitted[in.plan.ID] {
			continue
		}
		wf, err := w.m.GetWorkflow(now, in.plan.ID)
		if err != nil {
			w.fatalf("GetWorkflow(%s): %v", in.plan.ID, err)
		}
		s.wfs[in.plan.ID] = wf
	}
	for _, id := range w.jobIDs() {
		j, err := w.m.GetJob(now, id)
		if errors.Is(err, weir.ErrNotFound) {
			continue
		}
		if err != nil {
			w.fatalf("GetJob(%s): %v", id, err)
		}
		s.jobs[id] = j
	}
	for _, q := range ptQueueNames {
		s.queues[q] = w.m.QueueContents(now, q)
	}
	s.infos = w.m.Queues(now)
	return s
}

// begin starts a step: what the step observes is collected until commit.
func (w *ptWorld) begin(format string, args ...any) ptSnap {
	w.step++
	w.t.Logf("step %d @%d: "+format, append([]any{w.step, w.now - ptEpoch}, args...)...)
	w.stepClaims, w.stepPushed, w.stepAll = nil, nil, nil
	w.pushesAll = true
	w.stepReports = map[string]int{}
	w.reportsAll = false
	return w.snap
}

// commit takes the snapshot after a step and checks every invariant.
func (w *ptWorld) commit() ptSnap {
	cur := w.snapshot()
	w.check(w.snap, cur)
	for _, id := range w.stepClaims {
		w.claimed[id] = true
	}
	w.snap = cur
	return cur
}

func (w *ptWorld) unchanged(pre, cur ptSnap, what string) {
	w.t.Helper()
	if !reflect.DeepEqual(pre, cur) {
		w.fatalf("%s changed the state", what)
	}
}

// observePushes records Pushed entries. A job is pushed for its first run
// at most once (each dependency edge promotes at most once); retries and
// releases come after a claim and are not counted.
func (w *ptWorld) observePushes(list []Pushed) {
	for _, p := range list {
		w.stepAll = append(w.stepAll, p.JobID)
		if q, _, _ := w.spec(p.JobID); q != p.Queue {
			w.fatalf("pushed %s into queue %s, its queue is %s", p.JobID, p.Queue, q)
		}
		if w.claimed[p.JobID] || slices.Contains(w.stepClaims, p.JobID) {
			continue
		}
		w.firstPush[p.JobID]++
		if w.firstPush[p.JobID] > 1 {
			w.fatalf("job %s pushed %d times before its first claim", p.JobID, w.firstPush[p.JobID])
		}
		w.stepPushed = append(w.stepPushed, p.JobID)
	}
}

// reports checks Settled.WorkflowState/WorkflowEnded over the settles of one
// step, in order: WorkflowEnded is set exactly on the settle that moved the
// workflow from a running state to an ended one.
func (w *ptWorld) reports(pre ptSnap, list []Settled) {
	state := map[string]weir.WorkflowState{}
	for id, wf := range pre.wfs {
		state[id] = wf.State
	}
	for _, s := range list {
		if s.Err != nil {
			continue
		}
		wf, _, _, ok := ptSplit(s.JobID)
		if !ok {
			if s.WorkflowState != "" || s.WorkflowEnded {
				w.fatalf("plain job %s settled with workflow state %q ended=%v", s.JobID, s.WorkflowState, s.WorkflowEnded)
			}
			continue
		}
		before := state[wf]
		if s.WorkflowState == "" {
			w.fatalf("settle of %s has no workflow state", s.JobID)
		}
		if before.Ended() && s.WorkflowState != before {
			w.fatalf("settle of %s: workflow %s went from ended %s to %s", s.JobID, wf, before, s.WorkflowState)
		}
		if want := !before.Ended() && s.WorkflowState.Ended(); s.WorkflowEnded != want {
			w.fatalf("settle of %s: WorkflowEnded=%v, workflow went %s -> %s", s.JobID, s.WorkflowEnded, before, s.WorkflowState)
		}
		state[wf] = s.WorkflowState
		if s.WorkflowEnded {
			w.stepReports[wf]++
			w.endReports[wf]++
			if w.endReports[wf] > 1 {
				w.fatalf("workflow %s reported ended %d times", wf, w.endReports[wf])
			}
		}
	}
}

// expectSettle is the job-level oracle of one finished attempt.
func (w *ptWorld) expectSettle(pj weir.Job, o Outcome, s Settled) {
	_, maxAttempts, backoff := w.spec(pj.ID)
	var state weir.State
	var runAt int64
	switch o.Kind {
	case OutcomeCompleted:
		state = weir.Completed
	case OutcomeCancelled:
		state = weir.Cancelled
	case OutcomeReleased:
		state = weir.Queued
		if pj.CancelRequested {
			state = weir.Cancelled
		}
	case OutcomeFailed:
		switch {
		case pj.CancelRequested:
			state = weir.Cancelled
		case !o.NonRetryable && pj.Attempt-pj.Expiries < maxAttempts:
			state = weir.Queued
			delay := o.RetryAfter
			if delay == 0 {
				delay = backoff
				for i := 1; i < pj.Attempt-pj.Expiries; i++ {
					delay *= 2
				}
				delay = min(delay, weir.DefaultLimits().MaxBackoff)
			}
			runAt = w.now + delay.Milliseconds()
		default:
			state = weir.Failed
		}
	}
	if s.State != state {
		w.fatalf("%s (attempt %d/%d, cancel=%v) finished %s: state %s, want %s", pj.ID, pj.Attempt, maxAttempts, pj.CancelRequested, o.Kind, s.State, state)
	}
	want := time.Time{}
	if runAt != 0 {
		want = time.UnixMilli(runAt)
	}
	if !s.RunAt.Equal(want) {
		w.fatalf("%s finished %s: RunAt %v, want %v", pj.ID, o.Kind, s.RunAt, want)
	}
}

// check holds the invariants between two consecutive snapshots.
func (w *ptWorld) check(prev, cur ptSnap) {
	held := map[string]string{}
	for _, l := range w.held {
		if _, dup := held[l.token]; dup {
			w.fatalf("lease token %s handed out twice", l.token)
		}
		held[l.token] = l.id
	}

	// Queues: every listed job is known and listed once.
	where := map[string][]string{}
	for _, q := range ptQueueNames {
		qc := cur.queues[q]
		lists := []struct {
			name string
			ids  []string
		}{{"ready", qc.Ready}, {"delayed", qc.Delayed}, {"running", qc.Running}}
		for _, l := range lists {
			for k, id := range l.ids {
				j, ok := cur.jobs[id]
				if !ok {
					w.fatalf("queue %s %s holds unknown job %s", q, l.name, id)
				}
				where[id] = append(where[id], q+"."+l.name)
				if k == 0 {
					continue
				}
				p := cur.jobs[l.ids[k-1]]
				switch {
				case l.name == "ready" && p.Priority > j.Priority,
					l.name == "delayed" && p.RunAt.After(j.RunAt),
					l.name == "running" && p.Lease != nil && j.Lease != nil && p.Lease.Deadline.After(j.Lease.Deadline):
					w.fatalf("queue %s %s out of order at %s, %s", q, l.name, l.ids[k-1], id)
				}
			}
		}
	}
	for _, qi := range cur.infos {
		if !slices.Contains(ptQueueNames, qi.Name) {
			w.fatalf("unexpected queue %q", qi.Name)
		}
		qc := cur.queues[qi.Name]
		if qi.Ready != len(qc.Ready) || qi.Delayed != len(qc.Delayed) || qi.Running != len(qc.Running) || qi.Paused != w.paused[qi.Name] {
			w.fatalf("Queues() %+v disagrees with contents %+v / paused=%v", qi, qc, w.paused[qi.Name])
		}
	}

	// Jobs: one state, in the right list, leased iff running.
	running := 0
	for id, j := range cur.jobs {
		q, maxAttempts, _ := w.spec(id)
		if j.ID != id || j.Queue != q || j.MaxAttempts != maxAttempts {
			w.fatalf("job %s snapshot: id %s queue %s max %d, want queue %s max %d", id, j.ID, j.Queue, j.MaxAttempts, q, maxAttempts)
		}
		_, _, undo, isWf := ptSplit(id)
		if j.Undo != undo {
			w.fatalf("job %s: Undo=%v", id, j.Undo)
		}
		if j.Attempt < 0 || j.Expiries < 0 || j.Expiries > j.MaxExpiries || j.Attempt-j.Expiries > maxAttempts {
			w.fatalf("job %s: attempt %d (%d expiries of %d) of %d", id, j.Attempt, j.Expiries, j.MaxExpiries, maxAttempts)
		}
		var want []string
		switch j.State {
		case weir.Queued:
			if j.RunAt.IsZero() {
				want = []string{j.Queue + ".ready"}
			} else {
				want = []string{j.Queue + ".delayed"}
			}
		case weir.Running:
			want = []string{j.Queue + ".running"}
			running++
			if j.Lease == nil || held[j.Lease.Token] != id {
				w.fatalf("running job %s has lease %+v that no claim handed out", id, j.Lease)
			}
			if j.Attempt < 1 {
				w.fatalf("running job %s at attempt %d", id, j.Attempt)
			}
		case weir.Waiting:
			if !isWf || undo {
				w.fatalf("job %s is waiting", id)
			}
		case weir.Pending:
			if !undo {
				w.fatalf("job %s is pending", id)
			}
		case weir.Completed, weir.Failed, weir.Cancelled:
		default:
			w.fatalf("job %s has state %q", id, j.State)
		}
		if j.State != weir.Running && j.Lease != nil {
			w.fatalf("job %s is %s with a lease", id, j.State)
		}
		if !slices.Equal(where[id], want) {
			w.fatalf("job %s is %s (runAt %v) but listed in %v", id, j.State, j.RunAt, where[id])
		}
		if j.State.Ended() == j.EndedAt.IsZero() {
			w.fatalf("job %s is %s with EndedAt %v", id, j.State, j.EndedAt)
		}
		if pj, ok := prev.jobs[id]; ok && pj.State.Ended() {
			if j.State != pj.State || j.Attempt != pj.Attempt || !bytes.Equal(j.Result, pj.Result) || j.Error != pj.Error || !j.EndedAt.Equal(pj.EndedAt) {
				w.fatalf("ended job %s changed: %s -> %s", id, pj.State, j.State)
			}
		}
	}
	for _, pj := range prev.jobs {
		if _, ok := cur.jobs[pj.ID]; !ok {
			w.fatalf("job %s disappeared", pj.ID)
		}
	}
	live := 0
	for _, l := range w.held {
		if j, ok := cur.jobs[l.id]; ok && j.State == weir.Running && j.Lease.Token == l.token {
			live++
		}
	}
	if live != running {
		w.fatalf("%d running jobs, %d live leases", running, live)
	}

	// Every job that became ready was reported pushed (a claim's sweep
	// reports nothing).
	if w.pushesAll {
		for _, q := range ptQueueNames {
			for _, id := range cur.queues[q].Ready {
				if !slices.Contains(prev.queues[q].Ready, id) && !slices.Contains(w.stepAll, id) {
					w.fatalf("%s became ready in %s without being reported pushed", id, q)
				}
			}
		}
	}
	for _, id := range w.stepPushed {
		wf, task, undo, ok := ptSplit(id)
		if !ok || undo {
			continue
		}
		in := w.byID[wf]
		for _, d := range in.deps[w.taskIndex(in, task)] {
			if s := cur.wfs[wf].Tasks[d].State; !s.Ended() {
				w.fatalf("%s pushed while its dependency %s is %s", id, in.plan.Tasks[d].Name, s)
			}
		}
	}

	for _, in := range w.infos {
		if w.submitted[in.plan.ID] {
			w.checkWorkflow(in, prev, cur)
		}
	}
}

func ptCompensates(s weir.WorkflowState) bool {
	return s == weir.WorkflowCompensating || s == weir.WorkflowCompensated || s == weir.WorkflowCompensationFailed
}

func (w *ptWorld) checkWorkflow(in *ptInfo, prev, cur ptSnap) {
	id := in.plan.ID
	wf := cur.wfs[id]
	pw, hadPrev := prev.wfs[id]
	tasks := in.plan.Tasks
	if wf.ID != id || len(wf.Tasks) != len(tasks) || wf.FailFast != in.plan.FailFast || wf.UndoOnCancel != in.plan.UndoOnCancel {
		w.fatalf("workflow %s snapshot does not match its plan", id)
	}

	// The workflow ends exactly once: an ended state never changes.
	if hadPrev {
		if pw.State.Ended() && (wf.State != pw.State || !wf.EndedAt.Equal(pw.EndedAt) || wf.Reason != pw.Reason) {
			w.fatalf("workflow %s ended %s at %v, now %s at %v", id, pw.State, pw.EndedAt, wf.State, wf.EndedAt)
		}
		if pw.State == weir.WorkflowCompensating && !ptCompensates(wf.State) {
			w.fatalf("workflow %s went from compensating to %s", id, wf.State)
		}
		if pw.CancelRequested && (!wf.CancelRequested || wf.CancelUndo != pw.CancelUndo) {
			w.fatalf("workflow %s lost its cancel", id)
		}
		ended := !pw.State.Ended() && wf.State.Ended()
		if w.stepReports[id] > 0 && !ended {
			w.fatalf("workflow %s reported ended but went %s -> %s", id, pw.State, wf.State)
		}
		if ended && w.reportsAll && w.stepReports[id] != 1 {
			w.fatalf("workflow %s ended (%s) with %d WorkflowEnded reports", id, wf.State, w.stepReports[id])
		}
	}
	if wf.State.Ended() == wf.EndedAt.IsZero() {
		w.fatalf("workflow %s is %s with EndedAt %v", id, wf.State, wf.EndedAt)
	}
	if ptCompensates(wf.State) != (wf.Reason != "") {
		w.fatalf("workflow %s is %s with reason %q", id, wf.State, wf.Reason)
	}

	allEnded, unabsorbed := true, false
	for i, tk := range wf.Tasks {
		ts := tasks[i]
		j, ok := cur.jobs[weir.TaskJobID(id, ts.Name)]
		if !ok {
			w.fatalf("task job of %s/%s missing", id, ts.Name)
		}
		if tk.Name != ts.Name || tk.State != j.State || tk.Attempt != j.Attempt || tk.Always != ts.Always {
			w.fatalf("task %s/%s is %s (attempt %d), its job %s (attempt %d)", id, ts.Name, tk.State, tk.Attempt, j.State, j.Attempt)
		}
		if tk.State == weir.Pending {
			w.fatalf("task %s/%s is pending", id, ts.Name)
		}
		if hadPrev {
			pt := pw.Tasks[i]
			if pt.State != weir.Waiting && tk.State == weir.Waiting {
				w.fatalf("task %s/%s went back from %s to waiting", id, ts.Name, pt.State)
			}
		}
		if !tk.State.Ended() {
			allEnded = false
		}
		if tk.State == weir.Failed && !in.absorbable[i] {
			unabsorbed = true
		}
		// No task starts before its dependencies ended; a failed or
		// cancelled dependency cancels a task that is not Always.
		open, bad := "", ""
		for _, d := range in.deps[i] {
			s := wf.Tasks[d].State
			if !s.Ended() && open == "" {
				open = tasks[d].Name
			}
			if (s == weir.Failed || s == weir.Cancelled) && bad == "" {
				bad = tasks[d].Name
			}
		}
		if open != "" && tk.State != weir.Waiting && tk.State != weir.Cancelled {
			w.fatalf("task %s/%s is %s while its dependency %s has not ended", id, ts.Name, tk.State, open)
		}
		if open == "" && tk.State == weir.Waiting {
			w.fatalf("task %s/%s is waiting with every dependency ended", id, ts.Name)
		}
		if bad != "" && !ts.Always && tk.State != weir.Cancelled {
			w.fatalf("task %s/%s is %s although dependency %s is %s", id, ts.Name, tk.State, bad, wf.Tasks[w.taskIndex(in, bad)].State)
		}
		if wf.CancelRequested && (tk.State == weir.Waiting || tk.State == weir.Queued) {
			w.fatalf("task %s/%s is %s after the workflow's cancel", id, ts.Name, tk.State)
		}
		if wf.CancelRequested && tk.State == weir.Running && !j.CancelRequested {
			w.fatalf("task %s/%s runs after the workflow's cancel without being told to stop", id, ts.Name)
		}
	}
	if allEnded == (wf.State == weir.WorkflowRunning) {
		w.fatalf("workflow %s is %s, every task ended: %v", id, wf.State, allEnded)
	}
	if unabsorbed && !wf.CancelRequested {
		w.failedBeforeCancel[id] = true
	}

	// Why a task was cancelled: FailFast never cancels an Always task, a
	// dependency never cancels an Always task.
	for i, tk := range wf.Tasks {
		if tk.State != weir.Cancelled {
			continue
		}
		ts := tasks[i]
		switch {
		case tk.Error == weir.ReasonTextFailFast:
			if ts.Always || !in.plan.FailFast || !w.failedBeforeCancel[id] {
				w.fatalf("task %s/%s (always=%v) cancelled by FailFast (failFast=%v, failed=%v)", id, ts.Name, ts.Always, in.plan.FailFast, w.failedBeforeCancel[id])
			}
		case tk.Error == weir.ReasonTextWorkflowCancelled:
			if !wf.CancelRequested {
				w.fatalf("task %s/%s cancelled by a workflow cancel that did not happen", id, ts.Name)
			}
		case strings.HasPrefix(tk.Error, "dependency "):
			ok := false
			for _, d := range in.deps[i] {
				ds := wf.Tasks[d].State
				ok = ok || ((ds == weir.Failed || ds == weir.Cancelled) && tk.Error == weir.DependencyReason(tasks[d].Name, ds))
			}
			if !ok || ts.Always {
				w.fatalf("task %s/%s (always=%v) cancelled with %q", id, ts.Name, ts.Always, tk.Error)
			}
		}
	}

	// FailFast: after the first unabsorbed failure (before any cancel), no
	// task that had not started runs, except Always tasks.
	if in.plan.FailFast && w.failedBeforeCancel[id] {
		set := w.failFastSet[id]
		if set == nil {
			ptCoverage.failFast++
			set = map[string]bool{}
			for jid := range w.claimed {
				set[jid] = true
			}
			for _, jid := range w.stepClaims {
				set[jid] = true
			}
			w.failFastSet[id] = set
		}
		for i, tk := range wf.Tasks {
			if tasks[i].Always {
				continue
			}
			jid := weir.TaskJobID(id, tasks[i].Name)
			if tk.State == weir.Waiting || ((tk.State == weir.Queued || tk.State == weir.Running) && !set[jid]) {
				w.fatalf("task %s is %s after FailFast fired", jid, tk.State)
			}
		}
	}

	// Compensation.
	comp := make([]bool, len(tasks))
	anyComp, undoOpen, undoBad := false, false, false
	for i, tk := range wf.Tasks {
		ts := tasks[i]
		if (ts.Undo == nil) != (tk.Undo == nil) || (tk.Undo != nil && tk.Undo.Queue != ts.Undo.Queue) {
			w.fatalf("task %s/%s undo status %+v, spec %+v", id, ts.Name, tk.Undo, ts.Undo)
		}
		uj, exists := cur.jobs[weir.UndoJobID(id, ts.Name)]
		if tk.Undo == nil || tk.Undo.State == "" {
			if exists {
				w.fatalf("undo job %s exists with no undo state in its workflow", uj.ID)
			}
			if ptCompensates(wf.State) && tk.State == weir.Completed && ts.Undo != nil {
				w.fatalf("workflow %s is %s but completed %s has no undo job", id, wf.State, ts.Name)
			}
			continue
		}
		comp[i], anyComp = true, true
		if !exists || uj.State != tk.Undo.State || uj.Attempt != tk.Undo.Attempt {
			w.fatalf("undo of %s/%s is %s, its job %+v", id, ts.Name, tk.Undo.State, uj)
		}
		if tk.State != weir.Completed || !ptCompensates(wf.State) {
			w.fatalf("undo of %s/%s is %s: task %s, workflow %s", id, ts.Name, tk.Undo.State, tk.State, wf.State)
		}
		if !tk.Undo.State.Ended() {
			undoOpen = true
		} else if tk.Undo.State != weir.Completed {
			undoBad = true
		}
	}
	switch wf.State {
	case weir.WorkflowCompensating:
		if !anyComp || !undoOpen {
			w.fatalf("workflow %s compensating with undos=%v open=%v", id, anyComp, undoOpen)
		}
	case weir.WorkflowCompensated, weir.WorkflowCompensationFailed:
		if !anyComp || undoOpen || undoBad != (wf.State == weir.WorkflowCompensationFailed) {
			w.fatalf("workflow %s is %s with undos=%v open=%v failed=%v", id, wf.State, anyComp, undoOpen, undoBad)
		}
	}
	// Compensation order: X's undo starts once the undos of every
	// compensated descendant of X have ended (transitively, also through an
	// undo cancelled while it waited): never before, and it does not stay
	// pending after.
	for x, tk := range wf.Tasks {
		if !comp[x] {
			continue
		}
		open := -1
		for y, isDesc := range in.desc[x] {
			if isDesc && comp[y] && !wf.Tasks[y].Undo.State.Ended() {
				open = y
				break
			}
		}
		switch s := tk.Undo.State; {
		case open >= 0 && (s == weir.Queued || s == weir.Running || s == weir.Completed || s == weir.Failed):
			w.fatalf("undo of %s/%s is %s while the undo of its descendant %s is %s", id, tasks[x].Name, s, tasks[open].Name, wf.Tasks[open].Undo.State)
		case open < 0 && s == weir.Pending:
			w.fatalf("undo of %s/%s still pending with every descendant undo ended", id, tasks[x].Name)
		}
	}
}

// --- operations ---

func (w *ptWorld) genClaim(label string) ClaimParams {
	return ClaimParams{
		Queues: rapid.SliceOfN(rapid.SampledFrom(ptQueueNames), 1, 3).Draw(w.t, label+".queues"),
		Max:    rapid.IntRange(1, 4).Draw(w.t, label+".max"),
		Lease:  time.Duration(rapid.IntRange(1, 10_000).Draw(w.t, label+".leaseMs")) * time.Millisecond,
	}
}

// afterClaim checks the jobs one claim handed out (cur is the snapshot after
// the step; the claim was the step's last action).
func (w *ptWorld) afterClaim(p ClaimParams, got []Claimed, pre, cur ptSnap) {
	if len(got) > p.Max {
		w.fatalf("claimed %d jobs, max %d", len(got), p.Max)
	}
	var visited []string
	n := 0
	for i, q := range p.Queues {
		if slices.Contains(p.Queues[:i], q) || w.paused[q] {
			continue
		}
		visited = append(visited, q)
		for n < len(got) && got[n].Job.Queue == q {
			n++
		}
		if n == p.Max {
			break
		}
	}
	if n != len(got) {
		w.fatalf("claim of %v (paused %v) handed out jobs in queue order %v", p.Queues, w.paused, got)
	}
	for _, q := range visited {
		qc := cur.queues[q]
		// A job ready before the claim is taken while the claim has room (a
		// job pushed into a visited queue by a later queue's sweep may stay).
		for _, id := range qc.Ready {
			if len(got) < p.Max && slices.Contains(pre.queues[q].Ready, id) {
				w.fatalf("claim took %d of max %d while %s had %s ready", len(got), p.Max, q, id)
			}
		}
		for _, id := range qc.Running {
			if j := cur.jobs[id]; !j.Lease.Deadline.After(w.time()) {
				w.fatalf("claim from %s left overdue lease of %s", q, id)
			}
		}
		for _, id := range qc.Delayed {
			if j := cur.jobs[id]; !j.RunAt.After(w.time()) {
				w.fatalf("claim from %s left due delayed job %s", q, id)
			}
		}
	}
	for _, c := range got {
		id := c.Job.ID
		j := cur.jobs[id]
		if c.Job.State != weir.Running || c.Job.Lease == nil || *c.Job.Lease != c.Lease || j.State != weir.Running || *j.Lease != c.Lease {
			w.fatalf("claimed %s: job %+v lease %+v, now %+v", id, c.Job, c.Lease, j)
		}
		if want := w.time().Add(p.Lease); !c.Lease.Deadline.Equal(want) {
			w.fatalf("claimed %s: deadline %v, want %v", id, c.Lease.Deadline, want)
		}
		wfID, task, undo, ok := ptSplit(id)
		switch {
		case !ok:
			if c.Deps != nil || c.Job.Workflow != "" {
				w.fatalf("plain job %s claimed with deps %v", id, c.Deps)
			}
		case undo:
			wf := cur.wfs[wfID]
			if wf.State != weir.WorkflowCompensating {
				w.fatalf("undo %s claimed while its workflow is %s", id, wf.State)
			}
			if len(c.Deps) != 1 || c.Deps[0].Task != task || c.Deps[0].State != weir.Completed {
				w.fatalf("undo %s claimed with deps %+v", id, c.Deps)
			}
		default:
			in := w.byID[wfID]
			i := w.taskIndex(in, task)
			wf := cur.wfs[wfID]
			if wf.CancelRequested || wf.State != weir.WorkflowRunning {
				w.fatalf("task %s claimed while its workflow is %s (cancel=%v)", id, wf.State, wf.CancelRequested)
			}
			if c.Job.Workflow != wfID || c.Job.Task != task || len(c.Deps) != len(in.deps[i]) {
				w.fatalf("task %s claimed as %s/%s with %d deps", id, c.Job.Workflow, c.Job.Task, len(c.Deps))
			}
			for k, d := range in.deps[i] {
				dep, now := c.Deps[k], wf.Tasks[d]
				if dep.Task != in.plan.Tasks[d].Name || !dep.State.Ended() || dep.State != now.State || !bytes.Equal(dep.Result, now.Result) || dep.Error != now.Error {
					w.fatalf("task %s claimed with dependency %+v, which is %s", id, dep, now.State)
				}
				if !in.plan.Tasks[i].Always && dep.State != weir.Completed {
					w.fatalf("task %s (not Always) claimed with dependency %s %s", id, dep.Task, dep.State)
				}
			}
		}
	}
}

func (w *ptWorld) claim(p ClaimParams) {
	pre := w.begin("claim %v max=%d lease=%v", p.Queues, p.Max, p.Lease)
	w.pushesAll = false
	got, err := w.m.Claim(w.time(), p)
	if err != nil {
		w.fatalf("claim: %v", err)
	}
	ptCoverage.claims += len(got)
	for _, c := range got {
		if c.Job.Undo {
			ptCoverage.undoClaims++
		}
		w.held = append(w.held, ptLease{c.Job.ID, c.Lease.Token})
		w.stepClaims = append(w.stepClaims, c.Job.ID)
		w.t.Logf("  claimed %s token %s", c.Job.ID, c.Lease.Token)
	}
	w.afterClaim(p, got, pre, w.commit())
}

func (w *ptWorld) genOutcome(l ptLease) Outcome {
	o := Outcome{JobID: l.id, Token: l.token}
	o.Kind = rapid.SampledFrom([]OutcomeKind{OutcomeCompleted, OutcomeCompleted, OutcomeFailed, OutcomeFailed, OutcomeCancelled, OutcomeReleased}).Draw(w.t, "kind")
	switch o.Kind {
	case OutcomeCompleted:
		o.Result = []byte(fmt.Sprintf("r%d", w.step))
	case OutcomeFailed:
		o.Error = "boom"
		o.NonRetryable = rapid.IntRange(0, 3).Draw(w.t, "nonRetryable") == 0
		if rapid.IntRange(0, 3).Draw(w.t, "retryAfter?") == 0 {
			o.RetryAfter = time.Duration(rapid.IntRange(1, 5000).Draw(w.t, "retryAfterMs")) * time.Millisecond
		}
	case OutcomeCancelled:
		o.Error = "stopped"
	}
	return o
}

func (w *ptWorld) finish(outs []Outcome, claim *ClaimParams) {
	var desc []string
	for _, o := range outs {
		desc = append(desc, fmt.Sprintf("%s#%s:%s", o.JobID, o.Token, o.Kind))
		if o.Kind == OutcomeFailed {
			desc[len(desc)-1] += fmt.Sprintf("(nonRetryable=%v retryAfter=%v)", o.NonRetryable, o.RetryAfter)
		}
	}
	if claim != nil {
		desc = append(desc, fmt.Sprintf("+claim %v max=%d lease=%v", claim.Queues, claim.Max, claim.Lease))
	}
	pre := w.begin("finish %s", strings.Join(desc, " "))
	res, err := w.m.Finish(w.time(), FinishParams{Outcomes: outs, Claim: claim})
	if err != nil {
		w.fatalf("finish: %v", err)
	}
	if len(res.Settled) != len(outs) {
		w.fatalf("%d settled for %d outcomes", len(res.Settled), len(outs))
	}
	w.held = slices.DeleteFunc(w.held, func(l ptLease) bool {
		return slices.ContainsFunc(outs, func(o Outcome) bool { return o.Token == l.token })
	})
	anyLive := false
	for i, o := range outs {
		s := res.Settled[i]
		pj, ok := pre.jobs[o.JobID]
		live := ok && pj.State == weir.Running && pj.Lease.Token == o.Token
		if s.JobID != o.JobID {
			w.fatalf("settled %s for outcome of %s", s.JobID, o.JobID)
		}
		if !live {
			if !errors.Is(s.Err, weir.ErrLeaseLost) || s.State != "" || s.Pushed != nil || s.WorkflowState != "" || s.WorkflowEnded {
				w.fatalf("finish of %s with a stale token: %+v", o.JobID, s)
			}
			continue
		}
		anyLive = true
		ptCoverage.settles++
		if s.Err != nil {
			w.fatalf("finish of %s: %v", o.JobID, s.Err)
		}
		w.expectSettle(pj, o, s)
		f := ptFinish{o, s}
		w.last[o.JobID] = f
		w.past = append(w.past, f)
		w.observePushes(s.Pushed)
	}
	w.reports(pre, res.Settled)
	w.reportsAll = claim == nil
	w.pushesAll = claim == nil
	for _, c := range res.Claimed {
		w.held = append(w.held, ptLease{c.Job.ID, c.Lease.Token})
		w.stepClaims = append(w.stepClaims, c.Job.ID)
		w.t.Logf("  claimed %s token %s", c.Job.ID, c.Lease.Token)
	}
	cur := w.commit()
	if claim != nil {
		w.afterClaim(*claim, res.Claimed, pre, cur)
	} else if res.Claimed != nil {
		w.fatalf("finish without a claim claimed %v", res.Claimed)
	}
	for i, o := range outs {
		s := res.Settled[i]
		if s.Err != nil || slices.Contains(w.stepClaims, o.JobID) {
			continue
		}
		if j := cur.jobs[o.JobID]; j.State != s.State && !ptFailFastRetry(s, j) {
			w.fatalf("settled %s as %s, it is %s", o.JobID, s.State, j.State)
		}
	}
	if !anyLive && claim == nil {
		w.unchanged(pre, cur, "a finish with stale tokens")
	}
}

// ptFailFastRetry reports whether a job settled for a retry was then
// cancelled by FailFast in the same step (a later outcome of the same batch or
// sweep): the model cancels every queued task, retries included.
func ptFailFastRetry(s Settled, j weir.Job) bool {
	return s.State == weir.Queued && j.State == weir.Cancelled && j.Error == weir.ReasonTextFailFast
}

func (w *ptWorld) opFinish() {
	if len(w.held) == 0 {
		return
	}
	k := rapid.IntRange(1, min(3, len(w.held))).Draw(w.t, "finish.n")
	idx := rapid.SliceOfNDistinct(rapid.IntRange(0, len(w.held)-1), k, k, rapid.ID[int]).Draw(w.t, "finish.leases")
	var outs []Outcome
	for _, i := range idx {
		outs = append(outs, w.genOutcome(w.held[i]))
	}
	var claim *ClaimParams
	if rapid.Bool().Draw(w.t, "finish.claim?") {
		c := w.genClaim("finish.claim")
		claim = &c
	}
	w.finish(outs, claim)
}

// opRepeat sends a past finish again, as after a lost reply: the latest
// finish of a job returns a deep-equal Settled, an older one ErrLeaseLost;
// neither changes anything.
func (w *ptWorld) opRepeat() {
	if len(w.past) == 0 {
		return
	}
	f := w.past[rapid.IntRange(0, len(w.past)-1).Draw(w.t, "repeat")]
	pre := w.begin("repeat finish %s#%s:%s", f.o.JobID, f.o.Token, f.o.Kind)
	res, err := w.m.Finish(w.time(), FinishParams{Outcomes: []Outcome{f.o}})
	if err != nil {
		w.fatalf("repeat: %v", err)
	}
	s := res.Settled[0]
	ptCoverage.repeats++
	if w.last[f.o.JobID].o.Token == f.o.Token {
		if !reflect.DeepEqual(s, f.s) {
			w.fatalf("repeated finish of %s: %+v, first %+v", f.o.JobID, s, f.s)
		}
	} else if !errors.Is(s.Err, weir.ErrLeaseLost) {
		w.fatalf("repeat of an older finish of %s: %+v", f.o.JobID, s)
	}
	w.unchanged(pre, w.commit(), "a repeated finish")
}

func (w *ptWorld) opHeartbeat() {
	if len(w.held) == 0 {
		return
	}
	k := rapid.IntRange(1, len(w.held)).Draw(w.t, "hb.n")
	idx := rapid.SliceOfNDistinct(rapid.IntRange(0, len(w.held)-1), k, k, rapid.ID[int]).Draw(w.t, "hb.leases")
	extend := time.Duration(rapid.IntRange(1, 10_000).Draw(w.t, "hb.extendMs")) * time.Millisecond
	var refs []LeaseRef
	for _, i := range idx {
		refs = append(refs, LeaseRef{w.held[i].id, w.held[i].token})
	}
	pre := w.begin("heartbeat %v extend=%v", refs, extend)
	res, err := w.m.Heartbeat(w.time(), HeartbeatParams{Leases: refs, Extend: extend})
	if err != nil {
		w.fatalf("heartbeat: %v", err)
	}
	cur := w.commit()
	for i, r := range refs {
		pj, ok := pre.jobs[r.JobID]
		live := ok && pj.State == weir.Running && pj.Lease.Token == r.Token
		ls := res[i]
		want := LeaseStatus{JobID: r.JobID, Lost: !live}
		if live {
			want.Cancel = pj.CancelRequested
			want.Deadline = w.time().Add(extend)
			if j := cur.jobs[r.JobID]; !j.Lease.Deadline.Equal(want.Deadline) {
				w.fatalf("heartbeat of %s: deadline now %v, want %v", r.JobID, j.Lease.Deadline, want.Deadline)
			}
		}
		if ls.JobID != want.JobID || ls.Lost != want.Lost || ls.Cancel != want.Cancel || !ls.Deadline.Equal(want.Deadline) {
			w.fatalf("heartbeat of %s: %+v, want %+v", r.JobID, ls, want)
		}
	}
}

// advance moves the clock: time alone changes nothing observable.
func (w *ptWorld) advance(d int64) {
	pre := w.begin("advance %dms", d)
	w.now += d
	w.unchanged(pre, w.commit(), "time passing")
}

func (w *ptWorld) expire(max int) {
	pre := w.begin("expire leases max=%d", max)
	res, err := w.m.ExpireLeases(w.time(), ExpireParams{Max: max})
	if err != nil {
		w.fatalf("expire: %v", err)
	}
	for _, s := range res.Expired {
		pj := pre.jobs[s.JobID]
		if pj.State != weir.Running || pj.Lease.Deadline.After(w.time()) {
			w.fatalf("expired %s, which was %s with lease %+v", s.JobID, pj.State, pj.Lease)
		}
		if !pj.CancelRequested && pj.Expiries < pj.MaxExpiries {
			// within its expiry budget: queued again at once, not counted
			if s.State != weir.Queued || !s.RunAt.IsZero() || s.Err != nil {
				w.fatalf("expired %s within its budget (%d of %d expiries): %s runAt %v err %v, want queued at once", s.JobID, pj.Expiries, pj.MaxExpiries, s.State, s.RunAt, s.Err)
			}
		} else {
			w.expectSettle(pj, Outcome{JobID: s.JobID, Kind: OutcomeFailed, Error: weir.ReasonTextLeaseExpired}, s)
		}
		w.observePushes(s.Pushed)
	}
	for _, p := range res.Due {
		pj := pre.jobs[p.JobID]
		if pj.State != weir.Queued || pj.RunAt.IsZero() || pj.RunAt.After(w.time()) {
			w.fatalf("made %s ready, which was %s runAt %v", p.JobID, pj.State, pj.RunAt)
		}
	}
	w.observePushes(res.Due)
	w.reports(pre, res.Expired)
	w.reportsAll = true
	cur := w.commit()
	for _, s := range res.Expired {
		if j := cur.jobs[s.JobID]; (j.State != s.State || j.Error != weir.ReasonTextLeaseExpired || j.Attempt != pre.jobs[s.JobID].Attempt) && !ptFailFastRetry(s, j) {
			w.fatalf("expired %s settled %s, now %s error %q attempt %d", s.JobID, s.State, j.State, j.Error, j.Attempt)
		}
		pj, j := pre.jobs[s.JobID], cur.jobs[s.JobID]
		free := !pj.CancelRequested && pj.Expiries < pj.MaxExpiries
		if want := pj.Expiries + map[bool]int{true: 1}[free]; j.Expiries != want {
			w.fatalf("expired %s (%d of %d expiries before, cancel=%v): now %d expiries, want %d", s.JobID, pj.Expiries, pj.MaxExpiries, pj.CancelRequested, j.Expiries, want)
		}
	}
	if max == 0 {
		for id, j := range cur.jobs {
			if (j.State == weir.Running && !j.Lease.Deadline.After(w.time())) || (j.State == weir.Queued && !j.RunAt.IsZero() && !j.RunAt.After(w.time())) {
				w.fatalf("a full sweep left %s %s", id, j.State)
			}
		}
	}
}

func (w *ptWorld) opCancelWorkflow() {
	in := w.infos[rapid.IntRange(0, len(w.infos)-1).Draw(w.t, "cancel.wf")]
	id := in.plan.ID
	var undo *bool
	switch rapid.IntRange(0, 2).Draw(w.t, "cancel.undo") {
	case 1:
		undo = new(true)
	case 2:
		undo = new(false)
	}
	pre := w.begin("cancel workflow %s undo=%s", id, ptBoolPtr(undo))
	res, err := w.m.CancelWorkflow(w.time(), CancelWorkflowParams{ID: id, Undo: undo})
	pwf, exists := pre.wfs[id]
	switch {
	case !exists:
		if !errors.Is(err, weir.ErrNotFound) {
			w.fatalf("cancel of unknown workflow: %v", err)
		}
		w.unchanged(pre, w.commit(), "cancel of an unknown workflow")
	case pwf.State.Ended():
		if !errors.Is(err, weir.ErrWorkflowEnded) || res.WorkflowState != pwf.State {
			w.fatalf("cancel of %s workflow: %+v, %v", pwf.State, res, err)
		}
		w.unchanged(pre, w.commit(), "cancel of an ended workflow")
	case pwf.CancelRequested || pwf.State == weir.WorkflowCompensating:
		if err != nil || res.Cancelled != nil || res.Stopping != nil || res.Pushed != nil || res.WorkflowState != pwf.State {
			w.fatalf("cancel of a cancelled or compensating workflow: %+v, %v", res, err)
		}
		w.unchanged(pre, w.commit(), "a second cancel")
	default:
		if err != nil {
			w.fatalf("cancel: %v", err)
		}
		var cancelled, stopping []string
		for _, tk := range pwf.Tasks {
			switch tk.State {
			case weir.Waiting, weir.Queued:
				cancelled = append(cancelled, weir.TaskJobID(id, tk.Name))
			case weir.Running:
				stopping = append(stopping, weir.TaskJobID(id, tk.Name))
			}
		}
		if !slices.Equal(res.Cancelled, cancelled) || !slices.Equal(res.Stopping, stopping) {
			w.fatalf("cancel of %s: cancelled %v stopping %v, want %v and %v", id, res.Cancelled, res.Stopping, cancelled, stopping)
		}
		for _, p := range res.Pushed {
			if wf, _, u, _ := ptSplit(p.JobID); wf != id || !u {
				w.fatalf("cancel of %s pushed %s", id, p.JobID)
			}
		}
		w.observePushes(res.Pushed)
		cur := w.commit()
		wantUndo := in.plan.UndoOnCancel
		if undo != nil {
			wantUndo = *undo
		}
		wf := cur.wfs[id]
		if !wf.CancelRequested || wf.CancelUndo != wantUndo || res.WorkflowState != wf.State {
			w.fatalf("after cancel: %s cancel=%v undo=%v (want %v), reply %s", wf.State, wf.CancelRequested, wf.CancelUndo, wantUndo, res.WorkflowState)
		}
	}
}

func ptBoolPtr(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}

func (w *ptWorld) opCancelJob() {
	ids := append(w.jobIDs(), "nosuch")
	var open []string
	for _, id := range ids {
		if j, ok := w.snap.jobs[id]; ok && !j.State.Ended() {
			open = append(open, id)
		}
	}
	if len(open) > 0 && rapid.IntRange(0, 3).Draw(w.t, "cancelJob.open?") > 0 {
		ids = open
	}
	id := rapid.SampledFrom(ids).Draw(w.t, "cancelJob")
	pre := w.begin("cancel job %s", id)
	res, err := w.m.CancelJob(w.time(), CancelJobParams{ID: id})
	pj, ok := pre.jobs[id]
	switch {
	case !ok:
		if !errors.Is(err, weir.ErrNotFound) {
			w.fatalf("cancel of unknown job %s: %v", id, err)
		}
		w.unchanged(pre, w.commit(), "cancel of an unknown job")
		return
	case pj.State.Ended():
		if !errors.Is(err, weir.ErrJobEnded) || res.State != pj.State {
			w.fatalf("cancel of %s job: %+v, %v", pj.State, res, err)
		}
		w.unchanged(pre, w.commit(), "cancel of an ended job")
		return
	}
	if err != nil {
		w.fatalf("cancel job %s: %v", id, err)
	}
	if pj.State == weir.Pending {
		ptCoverage.cancelPendingUndo++
	}
	w.observePushes(res.Pushed)
	cur := w.commit()
	j := cur.jobs[id]
	if pj.State == weir.Running {
		if !slices.Equal(res.Stopping, []string{id}) || res.Cancelled != nil || res.State != weir.Running || j.State != weir.Running || !j.CancelRequested {
			w.fatalf("cancel of running %s: %+v, now %s cancel=%v", id, res, j.State, j.CancelRequested)
		}
	} else if len(res.Cancelled) == 0 || res.Cancelled[0] != id || res.State != weir.Cancelled || j.State != weir.Cancelled {
		w.fatalf("cancel of %s %s: %+v, now %s", pj.State, id, res, j.State)
	}
	for _, c := range res.Cancelled {
		if pre.jobs[c].State.Ended() || cur.jobs[c].State != weir.Cancelled {
			w.fatalf("cancel of %s reports %s cancelled: %s -> %s", id, c, pre.jobs[c].State, cur.jobs[c].State)
		}
	}
	if wf, _, _, isWf := ptSplit(id); isWf != (res.WorkflowState != "") || (isWf && res.WorkflowState != cur.wfs[wf].State) {
		w.fatalf("cancel of %s: workflow state %q", id, res.WorkflowState)
	}
}

func (w *ptWorld) opPurge() {
	q := rapid.SampledFrom(ptQueueNames).Draw(w.t, "purge")
	pre := w.begin("purge %s", q)
	res, err := w.m.PurgeQueue(w.time(), q)
	if err != nil {
		w.fatalf("purge: %v", err)
	}
	want := slices.Concat(pre.queues[q].Ready, pre.queues[q].Delayed)
	if !slices.Equal(res.Purged, want) {
		w.fatalf("purge of %s removed %v, want %v", q, res.Purged, want)
	}
	w.observePushes(res.Pushed)
	cur := w.commit()
	for _, id := range res.Purged {
		if cur.jobs[id].State != weir.Cancelled {
			w.fatalf("purged %s is %s", id, cur.jobs[id].State)
		}
	}
}

func (w *ptWorld) setPaused(q string, paused bool) {
	w.begin("paused %s = %v", q, paused)
	var err error
	if paused {
		err = w.m.PauseQueue(w.time(), q)
	} else {
		err = w.m.ResumeQueue(w.time(), q)
	}
	if err != nil {
		w.fatalf("pause %s: %v", q, err)
	}
	w.paused[q] = paused
	w.commit()
}

func (w *ptWorld) submit(in *ptInfo) {
	id := in.plan.ID
	if w.submitted[id] {
		pre := w.begin("submit %s again", id)
		res, err := w.m.Submit(w.time(), SubmitParams{Plan: in.plan})
		if err != nil || res.Created || res.Pushed != nil {
			w.fatalf("second submit of %s: %+v, %v", id, res, err)
		}
		other := in.plan
		other.FailFast = !other.FailFast
		if _, err := w.m.Submit(w.time(), SubmitParams{Plan: other}); !errors.Is(err, weir.ErrWorkflowExists) {
			w.fatalf("submit of another plan under %s: %v", id, err)
		}
		w.unchanged(pre, w.commit(), "a second submit")
		return
	}
	w.begin("submit %s", ptPlanString(in.plan))
	res, err := w.m.Submit(w.time(), SubmitParams{Plan: in.plan})
	if err != nil || !res.Created {
		w.fatalf("submit %s: %+v, %v", id, res, err)
	}
	var roots []Pushed
	for _, t := range in.plan.Tasks {
		if len(t.After) == 0 {
			roots = append(roots, Pushed{weir.TaskJobID(id, t.Name), t.Queue})
		}
	}
	if !slices.Equal(res.Pushed, roots) {
		w.fatalf("submit %s pushed %v, want the roots %v", id, res.Pushed, roots)
	}
	w.submitted[id] = true
	w.observePushes(res.Pushed)
	w.commit()
}

func (w *ptWorld) opEnqueue() {
	if len(w.plainIDs) < ptMaxPlain && rapid.IntRange(0, 2).Draw(w.t, "enqueue.new") > 0 {
		s := JobSpec{
			ID:          fmt.Sprintf("p%d", len(w.plainIDs)),
			Queue:       rapid.SampledFrom(ptQueueNames).Draw(w.t, "enqueue.queue"),
			Payload:     []byte("p"),
			Priority:    rapid.IntRange(-1, 1).Draw(w.t, "enqueue.priority"),
			MaxAttempts: rapid.IntRange(0, 3).Draw(w.t, "enqueue.maxAttempts"),
			MaxExpiries: rapid.SampledFrom([]int{0, 0, weir.NoExpiries, 2}).Draw(w.t, "enqueue.maxExpiries"),
			Backoff:     time.Duration(rapid.SampledFrom([]int{0, 10, 500}).Draw(w.t, "enqueue.backoffMs")) * time.Millisecond,
		}
		if d := rapid.IntRange(-3, 5000).Draw(w.t, "enqueue.delayMs"); d > 0 {
			s.RunAt = time.UnixMilli(w.now + int64(d))
		}
		w.begin("enqueue %+v", s)
		res, err := w.m.Enqueue(w.time(), EnqueueParams{Job: s})
		if err != nil || !res.Created || res.State != weir.Queued {
			w.fatalf("enqueue: %+v, %v", res, err)
		}
		w.plain[s.ID] = s
		w.plainIDs = append(w.plainIDs, s.ID)
		if s.RunAt.IsZero() {
			w.observePushes([]Pushed{{s.ID, s.Queue}})
		}
		w.commit()
		return
	}
	if len(w.plainIDs) == 0 {
		return
	}
	id := rapid.SampledFrom(w.plainIDs).Draw(w.t, "enqueue.again")
	pre := w.begin("enqueue %s again", id)
	res, err := w.m.Enqueue(w.time(), EnqueueParams{Job: w.plain[id]})
	if err != nil || res.Created || res.State != pre.jobs[id].State {
		w.fatalf("second enqueue of %s: %+v, %v", id, res, err)
	}
	w.unchanged(pre, w.commit(), "a second enqueue")
}

// randomOp runs one random operation.
func (w *ptWorld) randomOp() {
	switch op := rapid.IntRange(0, 99).Draw(w.t, "op"); {
	case op < 22:
		w.claim(w.genClaim("claim"))
	case op < 46:
		w.opFinish()
	case op < 52:
		w.opRepeat()
	case op < 57:
		w.opHeartbeat()
	case op < 65:
		w.advance(int64(rapid.SampledFrom([]int{1, 500, 3000, 12_000}).Draw(w.t, "advanceMs")))
	case op < 69:
		w.expire(rapid.IntRange(0, 2).Draw(w.t, "expire.max"))
	case op < 74:
		w.opCancelWorkflow()
	case op < 78:
		w.opCancelJob()
	case op < 81:
		w.opPurge()
	case op < 86:
		w.setPaused(rapid.SampledFrom(ptQueueNames).Draw(w.t, "pause.queue"), rapid.Bool().Draw(w.t, "pause"))
	case op < 93:
		w.submit(rapid.SampledFrom(w.infos).Draw(w.t, "submit"))
	default:
		w.opEnqueue()
	}
}

// drainOp runs one random operation that cannot keep a workflow from
// ending (no pause, no release).
func (w *ptWorld) drainOp() {
	switch rapid.IntRange(0, 5).Draw(w.t, "drain.op") {
	case 0:
		w.opCancelJob()
	case 1:
		w.opCancelWorkflow()
	case 2:
		w.opPurge()
	case 3:
		w.opRepeat()
	case 4:
		w.opHeartbeat()
	default:
		w.claim(w.genClaim("drain.claim"))
	}
}

func (w *ptWorld) allEnded() bool {
	for _, in := range w.infos {
		if wf, ok := w.snap.wfs[in.plan.ID]; !ok || !wf.State.Ended() {
			return false
		}
	}
	for _, id := range w.plainIDs {
		if !w.snap.jobs[id].State.Ended() {
			return false
		}
	}
	return true
}

// drain ends everything: submit what is left, resume every queue, then
// finish every claimed job (mostly completed; failed and cancelled, which
// end a job or use one of its attempts, but never released), letting time
// pass, until every workflow ended.
func (w *ptWorld) drain() {
	for _, in := range w.infos {
		if !w.submitted[in.plan.ID] {
			w.submit(in)
		}
	}
	for _, q := range ptQueueNames {
		if w.paused[q] {
			w.setPaused(q, false)
		}
	}
	for round := 0; !w.allEnded(); round++ {
		if round == 400 {
			w.fatalf("still not ended after %d drain rounds", round)
		}
		if len(w.held) > 0 {
			var outs []Outcome
			for _, l := range w.held {
				o := Outcome{JobID: l.id, Token: l.token, Kind: OutcomeCompleted, Result: []byte("d")}
				switch rapid.IntRange(0, 5).Draw(w.t, "drain.kind") {
				case 0:
					o.Kind, o.Result, o.Error = OutcomeFailed, nil, "boom"
					o.NonRetryable = rapid.Bool().Draw(w.t, "drain.nonRetryable")
				case 1:
					o.Kind, o.Result, o.Error = OutcomeCancelled, nil, "stopped"
				}
				outs = append(outs, o)
			}
			w.finish(outs, nil)
		}
		if rapid.IntRange(0, 2).Draw(w.t, "drain.extra?") == 0 {
			w.drainOp()
		}
		w.advance(60_000)
		w.expire(0)
		w.claim(ClaimParams{Queues: ptQueueNames, Max: 1000, Lease: 10 * time.Second})
	}
}

// oracle recomputes each workflow's end (spec/states.md, Absorption,
// Workflow end decision, Compensation) from its final task states,
// independently of how the model got there.
func (w *ptWorld) oracle() {
	for _, in := range w.infos {
		id := in.plan.ID
		wf := w.snap.wfs[id]
		unabsorbed, compensable, undoFailed := false, false, false
		for i, tk := range wf.Tasks {
			if !tk.State.Ended() {
				w.fatalf("workflow %s ended %s with task %s %s", id, wf.State, tk.Name, tk.State)
			}
			if tk.State == weir.Failed && !in.absorbable[i] {
				unabsorbed = true
			}
			if tk.State == weir.Completed && in.plan.Tasks[i].Undo != nil {
				compensable = true
				if s := tk.Undo.State; s != weir.Completed {
					undoFailed = true
				}
			}
		}
		var want weir.WorkflowState
		var reason weir.Reason
		fbc := w.failedBeforeCancel[id]
		switch {
		case wf.CancelRequested && (wf.CancelUndo || fbc) && compensable:
			want, reason = weir.WorkflowCompensated, weir.ReasonCancel
			if fbc {
				reason = weir.ReasonFailure
			}
		case wf.CancelRequested:
			want = weir.WorkflowCancelled
		case unabsorbed && compensable:
			want, reason = weir.WorkflowCompensated, weir.ReasonFailure
		case unabsorbed:
			want = weir.WorkflowFailed
		default:
			want = weir.WorkflowCompleted
		}
		if want == weir.WorkflowCompensated && undoFailed {
			want = weir.WorkflowCompensationFailed
		}
		if want != weir.WorkflowCompensated && want != weir.WorkflowCompensationFailed {
			for _, tk := range wf.Tasks {
				if tk.Undo != nil && tk.Undo.State != "" {
					w.fatalf("workflow %s ended %s but the undo of %s is %s", id, want, tk.Name, tk.Undo.State)
				}
			}
		}
		if wf.State != want || wf.Reason != reason {
			w.fatalf("workflow %s ended %s (reason %q), the oracle says %s (%q): cancel=%v undo=%v failedBeforeCancel=%v unabsorbed=%v compensable=%v",
				id, wf.State, wf.Reason, want, reason, wf.CancelRequested, wf.CancelUndo, fbc, unabsorbed, compensable)
		}
		if w.endReports[id] > 1 {
			w.fatalf("workflow %s reported ended %d times", id, w.endReports[id])
		}
		ptCoverage.ends[fmt.Sprintf("%s/%s", wf.State, wf.Reason)]++
	}
	ptCoverage.cases++
	ptCoverage.steps += w.step
	for id, j := range w.snap.jobs {
		if !j.State.Ended() {
			w.fatalf("job %s is %s at the end", id, j.State)
		}
	}
	for q, qc := range w.snap.queues {
		if len(qc.Ready)+len(qc.Delayed)+len(qc.Running) > 0 {
			w.fatalf("queue %s not empty at the end: %+v", q, qc)
		}
	}
}

func TestPropertyWorkflows(t *testing.T) {
	ptCoverage = ptStats{ends: map[string]int{}}
	defer func() {
		c := ptCoverage
		t.Logf("coverage: %d cases, %d steps, %d claims (%d undo), %d settles, %d repeats, %d FailFast fired, %d pending undos cancelled; ends %v",
			c.cases, c.steps, c.claims, c.undoClaims, c.settles, c.repeats, c.failFast, c.cancelPendingUndo, c.ends)
	}()
	rapid.Check(t, func(t *rapid.T) {
		w := &ptWorld{
			t: t, m: NewModel(DefaultConfig()), now: ptEpoch,
			byID: map[string]*ptInfo{}, submitted: map[string]bool{},
			plain: map[string]JobSpec{}, paused: map[string]bool{},
			last: map[string]ptFinish{}, claimed: map[string]bool{}, firstPush: map[string]int{},
			endReports: map[string]int{}, failedBeforeCancel: map[string]bool{},
			failFastSet: map[string]map[string]bool{},
		}
		nwf := rapid.IntRange(1, 3).Draw(t, "workflows")
		for i := range nwf {
			in := ptNewInfo(ptGenPlan(t, fmt.Sprintf("w%d", i)))
			w.infos = append(w.infos, in)
			w.byID[in.plan.ID] = in
		}
		w.snap = w.snapshot()
		w.submit(w.infos[0])

		steps := rapid.IntRange(0, ptMaxSteps).Draw(t, "steps")
		for range steps {
			w.randomOp()
		}
		w.drain()
		w.oracle()
	})
}

// TestPropertyUndoOrderCancelledPending: a chain of compensated tasks
// t0 -> t1 -> ... -> tn (each with an undo) and a failing leaf after tn. The
// undos run tn first, t0 last. Cancelling the pending undo of a middle task
// must not let the undos of its ancestors start while the undos of its
// descendants still run (compensation order respects the DAG),
// nor keep them from running once those ended.
func TestPropertyUndoOrderCancelledPending(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(3, 8).Draw(t, "chain")
		cut := rapid.IntRange(1, n-2).Draw(t, "cancel")
		p := Plan{ID: "w"}
		for i := range n {
			ts := TaskSpec{Name: fmt.Sprintf("t%d", i), Queue: "a", Undo: &UndoSpec{Queue: "u"}}
			if i > 0 {
				ts.After = []string{fmt.Sprintf("t%d", i-1)}
			}
			p.Tasks = append(p.Tasks, ts)
		}
		p.Tasks = append(p.Tasks, TaskSpec{Name: "leaf", Queue: "a", After: []string{fmt.Sprintf("t%d", n-1)}})
		m := NewModel(DefaultConfig())
		now := time.UnixMilli(ptEpoch)
		if _, err := m.Submit(now, SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i <= n; i++ {
			c, err := m.Claim(now, ClaimParams{Queues: []string{"a"}, Max: 1, Lease: time.Minute})
			if err != nil || len(c) != 1 {
				t.Fatalf("claim %d: %v %v", i, c, err)
			}
			kind := OutcomeCompleted
			if i == n {
				kind = OutcomeFailed
			}
			if _, err := m.Finish(now, FinishParams{Outcomes: []Outcome{{JobID: c[0].Job.ID, Token: c[0].Lease.Token, Kind: kind}}}); err != nil {
				t.Fatal(err)
			}
		}
		// Cancel the middle undo while it waits, then run the undos one claim
		// at a time: each one claimed finds the undos of all its descendants
		// ended, and every undo but the cancelled one runs.
		if _, err := m.CancelJob(now, CancelJobParams{ID: weir.UndoJobID("w", fmt.Sprintf("t%d", cut))}); err != nil {
			t.Fatal(err)
		}
		ran := 0
		for {
			wf, err := m.GetWorkflow(now, "w")
			if err != nil {
				t.Fatal(err)
			}
			for x := range n {
				if s := wf.Tasks[x].Undo.State; s == weir.Pending || s.Ended() {
					continue
				}
				for y := x + 1; y < n; y++ {
					if s := wf.Tasks[y].Undo.State; !s.Ended() {
						t.Fatalf("pending undo of t%d cancelled: undo of t%d is %s while the undo of its descendant t%d is %s",
							cut, x, wf.Tasks[x].Undo.State, y, s)
					}
				}
			}
			if wf.State.Ended() {
				if wf.State != weir.WorkflowCompensationFailed || ran != n-1 {
					t.Fatalf("workflow %s after %d undos ran, want compensation_failed after %d", wf.State, ran, n-1)
				}
				return
			}
			c, err := m.Claim(now, ClaimParams{Queues: []string{"u"}, Max: 1, Lease: time.Minute})
			if err != nil || len(c) != 1 {
				t.Fatalf("workflow %s, claim of an undo: %v %v", wf.State, c, err)
			}
			ran++
			if _, err := m.Finish(now, FinishParams{Outcomes: []Outcome{{JobID: c[0].Job.ID, Token: c[0].Lease.Token, Kind: OutcomeCompleted}}}); err != nil {
				t.Fatal(err)
			}
		}
	})
}
