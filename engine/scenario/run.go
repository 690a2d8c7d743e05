package scenario

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// Result says how a run went when it found no mismatch.
type Result struct {
	// Steps is the number of steps run.
	Steps int
	// Skipped lists the steps the target could not check
	// (errors.ErrUnsupported), as "file:line: step".
	Skipped []string
}

// Mismatch is the first difference between a scenario and its target: the
// step, where it is, what the file expects and what the target gave.
type Mismatch struct {
	File string
	Line int
	// Step is the operation or expectation as written.
	Step string
	// Want and Got are the expected and actual reply (or state), one line
	// each, in the file's notation.
	Want []string
	Got  []string
	// Detail explains a mismatch that Want and Got alone do not show.
	Detail string
}

func (m *Mismatch) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s", m.File, m.Line, strings.ReplaceAll(m.Step, "\n", "\n    "))
	if m.Detail != "" {
		fmt.Fprintf(&b, "\n  %s", m.Detail)
	}
	if m.Want != nil || m.Got != nil {
		b.WriteString("\n  want:")
		writeLines(&b, m.Want)
		b.WriteString("\n  got: ")
		writeLines(&b, m.Got)
	}
	return b.String()
}

func writeLines(b *strings.Builder, ls []string) {
	if len(ls) == 0 {
		b.WriteString(" (nothing)")
	}
	for i, l := range ls {
		if i > 0 {
			b.WriteString("\n       ")
		}
		b.WriteString(" " + l)
	}
}

// Run replays s against t, which must be fresh and configured with
// s.Config. It stops at the first difference and returns it as a
// *Mismatch; other errors (an undefined variable, ctx done) are returned as
// they are.
func Run(ctx context.Context, s *Scenario, t Target) (*Result, error) {
	r := &runner{ctx: ctx, s: s, t: t, vars: map[string]string{}, res: &Result{}}
	for _, st := range s.Steps {
		if err := ctx.Err(); err != nil {
			return r.res, err
		}
		r.at = st.Now
		switch st.op.(type) {
		case *opExpect, *opList, *opQueues:
		default:
			t, off := engine.StoreTime(st.Now.UnixMilli(), r.last, r.off)
			r.last, r.off, r.at = t, off, time.UnixMilli(t).UTC()
		}
		if err := st.op.exec(r, st); err != nil {
			return r.res, err
		}
		r.res.Steps++
	}
	return r.res, nil
}

// RunModel replays s against a new Model configured with s.Config.
func RunModel(ctx context.Context, s *Scenario) (*Result, error) {
	return Run(ctx, s, NewModelTarget(s.Config))
}

type runner struct {
	ctx  context.Context
	s    *Scenario
	t    Target
	vars map[string]string
	res  *Result
	// last and off follow the store's clock (engine.StoreTime), counting
	// every operation but list and queues as a write; at is the store time
	// of the step running, which the checks of what a reply does not show
	// (a claim's lease deadline) use.
	last, off int64
	at        time.Time
}

func (r *runner) mismatch(st *Step, detail string, want, got []string) *Mismatch {
	return &Mismatch{File: r.s.Name, Line: st.Line, Step: st.Text, Detail: detail, Want: want, Got: got}
}

// value resolves a word of an operation: a literal, or a bound variable.
func (r *runner) value(st *Step, w word) (string, error) {
	if !w.isVar {
		return w.val, nil
	}
	v, ok := r.vars[w.val]
	if !ok || w.val == "_" {
		return "", fmt.Errorf("%s:%d: variable $%s is used before a reply line captured it", r.s.Name, st.Line, w.val)
	}
	return v, nil
}

// match compares expected words with a rendered line, binding new variables
// into b. It returns false at the first difference.
func (r *runner) match(want []word, got line, b map[string]string) bool {
	if len(want) != len(got) {
		return false
	}
	for i, w := range want {
		if w.key != got[i].key || !r.matchValue(w, got[i].val, b) {
			return false
		}
	}
	return true
}

func (r *runner) matchValue(w word, got string, b map[string]string) bool {
	if !w.isVar {
		return w.val == got
	}
	if w.val == "_" {
		return true
	}
	if v, ok := r.vars[w.val]; ok {
		return v == got
	}
	if v, ok := b[w.val]; ok {
		return v == got
	}
	b[w.val] = got
	return true
}

// compare checks a store operation's reply against the step's '>' lines and
// binds the variables they capture.
func (r *runner) compare(st *Step, got []line) error {
	b := map[string]string{}
	ok := len(got) == len(st.want)
	for i := 0; ok && i < len(got); i++ {
		ok = r.match(st.want[i].words, got[i], b)
	}
	if !ok {
		return r.mismatch(st, "", wantLines(st.want), gotLines(got))
	}
	for k, v := range b {
		r.vars[k] = v
	}
	return nil
}

func wantLines(ws []reply) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = wordsString(w.words)
	}
	return out
}

func gotLines(ls []line) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.String()
	}
	return out
}

// --- rendering ---

// ErrorCode is the result code a scenario shows for err: the Code of an
// *engine.Error, INVALID or TOOLARGE for an *engine.ValidationError, and
// "" for an error that carries no code.
func ErrorCode(err error) string {
	if e := engine.Sentinel(err); e != nil {
		return e.Code
	}
	return ""
}

func errLine(err error) line {
	code := ErrorCode(err)
	if code == "" {
		code = "(no code) " + err.Error()
	}
	return line{{"", "error"}, {"", code}}
}

func ms(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}

func list(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, ",")
}

func pushedList(ps []engine.Pushed) string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.JobID
	}
	return list(ids)
}

// settledLine renders one Settled: "<state> [run_at=MS] pushed=<ids>
// [wf=<state>] [ended]", or "error CODE".
func settledLine(s engine.Settled) line {
	if s.Err != nil {
		return errLine(s.Err)
	}
	l := line{{"", string(s.State)}}
	if !s.RunAt.IsZero() {
		l = append(l, field{"run_at", ms(s.RunAt)})
	}
	l = append(l, field{"pushed", pushedList(s.Pushed)})
	if s.WorkflowState != "" {
		l = append(l, field{"wf", string(s.WorkflowState)})
	}
	if s.WorkflowEnded {
		l = append(l, field{"", "ended"})
	}
	return l
}

// claimedLines renders one claimed job: "<id> attempt=N token=T
// [payload=P]", then one "dep <task> <state> [result=R] [error=E]" line per
// dependency outcome handed with it.
func claimedLines(c engine.Claimed, prefix []field) []line {
	l := append(line{}, prefix...)
	l = append(l, field{"", c.Job.ID}, field{"attempt", strconv.Itoa(c.Job.Attempt)}, field{"token", c.Lease.Token})
	if len(c.Job.Payload) > 0 {
		l = append(l, field{"payload", string(c.Job.Payload)})
	}
	out := []line{l}
	for _, d := range c.Deps {
		dl := line{{"", "dep"}, {"", d.Task}, {"", string(d.State)}}
		if len(d.Result) > 0 {
			dl = append(dl, field{"result", string(d.Result)})
		}
		if d.Error != "" {
			dl = append(dl, field{"error", d.Error})
		}
		out = append(out, dl)
	}
	return out
}

// checkClaimed verifies what a claimed job's line does not show: it is
// running under the lease it was handed, and the lease ends at now + lease.
func checkClaimed(c engine.Claimed, now time.Time, lease time.Duration) string {
	want := now.Add(lease)
	switch {
	case !c.Lease.Deadline.Equal(want):
		return fmt.Sprintf("job %s: lease deadline %s, want now+lease = %s", c.Job.ID, ms(c.Lease.Deadline), ms(want))
	case c.Job.State != engine.Running:
		return fmt.Sprintf("job %s: claimed in state %s, want running", c.Job.ID, c.Job.State)
	case c.Job.Lease == nil || c.Job.Lease.Token != c.Lease.Token || !c.Job.Lease.Deadline.Equal(c.Lease.Deadline):
		return fmt.Sprintf("job %s: the job snapshot's lease differs from the lease handed out", c.Job.ID)
	}
	return ""
}

func claimLines(cs []engine.Claimed, prefix []field) []line {
	if len(cs) == 0 {
		return []line{append(append(line{}, prefix...), field{"", "none"})}
	}
	var out []line
	for _, c := range cs {
		out = append(out, claimedLines(c, prefix)...)
	}
	return out
}

func cancelLine(res engine.CancelResult, job bool) line {
	var l line
	if job {
		l = append(l, field{"state", string(res.State)})
	}
	if res.WorkflowState != "" {
		l = append(l, field{"wf", string(res.WorkflowState)})
	}
	return append(l, field{"cancelled", list(res.Cancelled)}, field{"stopping", list(res.Stopping)},
		field{"pushed", pushedList(res.Pushed)})
}

// --- store operations ---

func (op *opSubmit) exec(r *runner, st *Step) error {
	res, err := r.t.Submit(r.ctx, st.Now, engine.SubmitParams{Plan: op.plan})
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	verb := "created"
	if !res.Created {
		verb = "unchanged"
	}
	return r.compare(st, []line{{{"", verb}, {"pushed", pushedList(res.Pushed)}}})
}

func (op *opEnqueue) exec(r *runner, st *Step) error {
	res, err := r.t.Enqueue(r.ctx, st.Now, engine.EnqueueParams{Job: op.job})
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	verb := "created"
	if !res.Created {
		verb = "unchanged"
	}
	return r.compare(st, []line{{{"", verb}, {"", string(res.State)}}})
}

func (op *opClaim) exec(r *runner, st *Step) error {
	cs, err := r.t.Claim(r.ctx, st.Now, op.p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	for _, c := range cs {
		if d := checkClaimed(c, r.at, op.p.Lease); d != "" {
			return r.mismatch(st, d, nil, nil)
		}
	}
	return r.compare(st, claimLines(cs, nil))
}

func (op *opFinish) exec(r *runner, st *Step) error {
	p := engine.FinishParams{Claim: op.claim}
	for _, o := range op.outs {
		tok, err := r.value(st, o.token)
		if err != nil {
			return err
		}
		oc := o.o
		oc.Token = tok
		p.Outcomes = append(p.Outcomes, oc)
	}
	res, err := r.t.Finish(r.ctx, st.Now, p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	if len(res.Settled) != len(p.Outcomes) {
		return r.mismatch(st, fmt.Sprintf("%d outcomes settled, want one per outcome (%d)", len(res.Settled), len(p.Outcomes)), nil, nil)
	}
	var got []line
	for i, s := range res.Settled {
		if s.JobID != p.Outcomes[i].JobID {
			return r.mismatch(st, fmt.Sprintf("settled #%d is job %q, want %q", i+1, s.JobID, p.Outcomes[i].JobID), nil, nil)
		}
		got = append(got, settledLine(s))
	}
	if op.claim != nil {
		for _, c := range res.Claimed {
			if d := checkClaimed(c, r.at, op.claim.Lease); d != "" {
				return r.mismatch(st, d, nil, nil)
			}
		}
		got = append(got, claimLines(res.Claimed, []field{{"", "claimed"}})...)
	} else if len(res.Claimed) > 0 {
		return r.mismatch(st, "jobs claimed by a finish that asked for no claim", nil, nil)
	}
	return r.compare(st, got)
}

func (op *opHeartbeat) exec(r *runner, st *Step) error {
	p := engine.HeartbeatParams{Extend: op.extend}
	for i, id := range op.jobs {
		tok, err := r.value(st, op.tokens[i])
		if err != nil {
			return err
		}
		p.Leases = append(p.Leases, engine.LeaseRef{JobID: id, Token: tok})
	}
	res, err := r.t.Heartbeat(r.ctx, st.Now, p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, s := range res {
		l := line{{"", s.JobID}}
		if s.Lost {
			l = append(l, field{"", "lost"})
		}
		if !s.Deadline.IsZero() {
			l = append(l, field{"deadline", ms(s.Deadline)})
		}
		if s.Cancel {
			l = append(l, field{"", "cancel"})
		}
		got = append(got, l)
	}
	return r.compare(st, got)
}

func (op *opExpire) exec(r *runner, st *Step) error {
	res, err := r.t.ExpireLeases(r.ctx, st.Now, engine.ExpireParams{Max: op.max})
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, s := range res.Expired {
		got = append(got, append(line{{"", "expired"}, {"", s.JobID}}, settledLine(s)...))
	}
	for _, p := range res.Due {
		got = append(got, line{{"", "due"}, {"", p.JobID}})
	}
	if len(got) == 0 {
		got = []line{{{"", "none"}}}
	}
	return r.compare(st, got)
}

func (op *opCancel) exec(r *runner, st *Step) error {
	var res engine.CancelResult
	var err error
	if op.workflow {
		res, err = r.t.CancelWorkflow(r.ctx, st.Now, engine.CancelWorkflowParams{ID: op.id, Undo: op.undo})
	} else {
		res, err = r.t.CancelJob(r.ctx, st.Now, engine.CancelJobParams{ID: op.id})
	}
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{cancelLine(res, !op.workflow)})
}

func (op *opQueue) exec(r *runner, st *Step) error {
	var err error
	switch op.verb {
	case "purge":
		var res engine.PurgeResult
		res, err = r.t.PurgeQueue(r.ctx, st.Now, op.queue)
		if err == nil {
			return r.compare(st, []line{{{"purged", list(res.Purged)}, {"pushed", pushedList(res.Pushed)}}})
		}
	case "pause":
		err = r.t.PauseQueue(r.ctx, st.Now, op.queue)
	default:
		err = r.t.ResumeQueue(r.ctx, st.Now, op.queue)
	}
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{{{"", "ok"}}})
}

func (op *opList) exec(r *runner, st *Step) error {
	p := op.p
	if op.cursor != nil {
		c, err := r.value(st, *op.cursor)
		if err != nil {
			return err
		}
		if c != "-" {
			p.Cursor = c
		}
	}
	page, err := r.t.ListWorkflows(r.ctx, st.Now, p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, w := range page.Workflows {
		got = append(got, line{{"", w.ID}, {"", string(w.State)}})
	}
	next := page.NextCursor
	if next == "" {
		next = "-"
	}
	return r.compare(st, append(got, line{{"next", next}}))
}

func (op *opQueues) exec(r *runner, st *Step) error {
	qs, err := r.t.Queues(r.ctx, st.Now)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, q := range qs {
		l := line{{"", q.Name}, {"ready", strconv.Itoa(q.Ready)}, {"delayed", strconv.Itoa(q.Delayed)}, {"running", strconv.Itoa(q.Running)}}
		if q.Paused {
			l = append(l, field{"", "paused"})
		}
		got = append(got, l)
	}
	if len(got) == 0 {
		got = []line{{{"", "none"}}}
	}
	return r.compare(st, got)
}
