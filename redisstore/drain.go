package redisstore

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// Cascades in bounded steps (spec/scripts.md): a call does at most its budget of
// cascade work (dependents visited, jobs purged: 64 units unless the seq
// hash's cb says otherwise). A cascade that needs more keeps the rest in
// the partition (P work) and the call stops after the step that started
// it, saying so with a last reply value "P…"; the Store then drains the
// rest with the drain script, one bounded call at a time, and sends what
// the first call did not do. Meanwhile every write call that could start a
// cascade and finds one kept goes on with it first and then answers
// PENDING, which callMany answers by draining and sending the call again. A caller sees one call, whose results are the model's.

// maxPendingRounds bounds how often callMany drains and sends a call again
// that was refused with PENDING (other processes' cascades may keep
// coming, each drained by everyone who meets it).
const maxPendingRounds = 1000

func isPending(err error) bool { return err != nil && redis.HasErrorPrefix(err, "PENDING") }

// drained is what drain calls did: the jobs they pushed and cancelled,
// and the kept cascade's workflow with the state they left it in.
type drained struct {
	Pushed    []engine.Pushed
	Cancelled []string
	Workflow  string
	State     weir.WorkflowState
	Ended     bool
}

// maxDrainCalls bounds one drain: the largest step the limits allow (a
// compensation start over 10,000 tasks and 100,000 edges) takes about a
// thousand calls at the default budget, and every call makes progress; a
// drain that does not end is a bug, reported rather than run forever.
const maxDrainCalls = 1_000_000

// drainRest reads the end of reply r, whose call may have stopped on its
// step budget (spec/scripts.md, Cascades in bounded steps), and when it
// did runs the drain calls that finish its work, returning what they did
// (the zero drained when the call did not stop).
func (pt *part) drainRest(ctx context.Context, r *reader) (drained, error) {
	var d drained
	_, stopped := r.stopped()
	if err := r.done(); err != nil || !stopped {
		return d, err
	}
	err := pt.drain(ctx, &d)
	return d, err
}

// drain runs the drain script until nothing is kept, adding what each call
// did to d (nil: not wanted).
func (pt *part) drain(ctx context.Context, d *drained) error {
	for range maxDrainCalls {
		pt.drainCalls.Add(1)
		v, err := pt.call(ctx, scripts["drain"], pt.argv(scripts["drain"], 0))
		if err != nil {
			return err
		}
		r := newReader(v)
		more, wf, st, ended := r.flag(), r.str(), r.str(), r.flag()
		pushed, cancelled := r.pushed(), r.strings()
		if r.err != nil {
			return r.err
		}
		if d != nil && wf != "" {
			d.Pushed = append(d.Pushed, pushed...)
			d.Cancelled = append(d.Cancelled, cancelled...)
			d.Workflow, d.State = wf, weir.WorkflowState(st)
			d.Ended = d.Ended || ended
		}
		if !more {
			return nil
		}
	}
	return fmt.Errorf("%w: the work kept in %swork did not end after %d drain calls", weir.ErrProtocol, pt.keys.prefix, maxDrainCalls)
}

// addTo gives Settled st (a task's, whose cascade the drain calls went on
// with) what they pushed and the workflow's state after them.
func (d *drained) addTo(st *engine.Settled) {
	if d.Workflow == "" || st.Err != nil {
		return
	}
	if wf, _, _ := strings.Cut(st.JobID, "/"); wf != d.Workflow {
		return
	}
	st.Pushed = append(st.Pushed, d.Pushed...)
	st.WorkflowState = d.State
	st.WorkflowEnded = st.WorkflowEnded || d.Ended
}

// stopped reads the last value of a reply whose call stopped on its budget
// ("P" and a number for claim and finish), or reports that it did not.
func (r *reader) stopped() (at int, ok bool) {
	m, ok := r.mark()
	if !ok || m == "" {
		return 0, ok
	}
	n, err := strconv.Atoi(m)
	if err != nil || n < 0 {
		r.fail("bad stop mark %q", "P"+m)
		return 0, false
	}
	return n, true
}

// mark reads the last value of a reply whose call stopped on its budget
// ("P" and what follows it), or reports that it did not.
func (r *reader) mark() (string, bool) {
	if r.err != nil || r.i != len(r.v)-1 || !strings.HasPrefix(r.v[r.i], "P") {
		return "", false
	}
	return r.str()[1:], true
}

// done checks that a reply was read to its end.
func (r *reader) done() error {
	if r.err == nil && r.i != len(r.v) {
		r.fail("%d values left at the end of the reply", len(r.v)-r.i)
	}
	return r.err
}

// DefaultStepBudget is the units of cascade work (a dependent visited, a
// job purged) one call does unless SetStepBudget said otherwise: about
// 5 ms of a loaded redis-server core at the most (docs/reliability.md,
// Cascades in bounded steps; 128 came to 10.5 ms in a CI run).
const DefaultStepBudget = 64

// SetStepBudget sets the units of cascade work one call of this namespace
// does before it leaves the rest to the calls after it (spec/scripts.md,
// Cascades in bounded steps), for every process sharing the namespace: n ≥ 1, or 0 for
// DefaultStepBudget. Smaller budgets make shorter calls and more of them;
// what the transitions do is the same.
func (pt *part) SetStepBudget(ctx context.Context, n int) error {
	if n < 0 {
		return fmt.Errorf("%w: step budget %d: give at least 1, or 0 for the default %d", weir.ErrInvalid, n, DefaultStepBudget)
	}
	if n == 0 {
		return mapErr(pt.rdb.HDel(ctx, pt.keys.seq, "cb").Err())
	}
	return mapErr(pt.rdb.HSet(ctx, pt.keys.seq, "cb", n).Err())
}

// SetFastPaths switches the namespace's fast paths (spec/scripts.md, Fast
// paths) on, the default, or off, for every process sharing the namespace:
// off, every transition runs its general code. Both give the same answers
// and write the same records; the switch is there so that the conformance
// suite holds each path to the model by itself, and as a way out should a
// fast path ever be found wrong.
func (pt *part) SetFastPaths(ctx context.Context, on bool) error {
	if on {
		return mapErr(pt.rdb.HDel(ctx, pt.keys.seq, "fast").Err())
	}
	return mapErr(pt.rdb.HSet(ctx, pt.keys.seq, "fast", "0").Err())
}
