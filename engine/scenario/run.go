package scenario

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
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
	return r.run()
}

func (r *runner) run() (*Result, error) {
	ctx, s := r.ctx, r.s
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

// RunModel replays s against a new model configured with s.Config
// (NewModelTarget).
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
	// rewrites, when not nil, takes the reply lines of each store
	// operation whose reply differs from its '>' lines (Rewrite), instead
	// of a Mismatch.
	rewrites map[*Step][]string
}

// skip lists step st in Result.Skipped: the target cannot check it.
func (r *runner) skip(st *Step) {
	r.res.Skipped = append(r.res.Skipped, fmt.Sprintf("%s:%d: %s", r.s.Name, st.Line, st.Text))
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
	if !ok && r.rewrites == nil {
		return r.mismatch(st, "", wantLines(st.want), gotLines(got))
	}
	if !ok {
		b = map[string]string{}
		r.rewrites[st] = r.rewriteLines(st, got, b)
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
// *weir.Error, INVALID or TOOLARGE for an *weir.ValidationError, and
// "" for an error that carries no code.
func ErrorCode(err error) string {
	if e := weir.Sentinel(err); e != nil {
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
