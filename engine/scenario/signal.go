package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weirflow/weir/engine"
)

// SignalTarget is a Target that ends signal tasks (engine.Signaller at the
// scenario's clock). A target without it answers errors.ErrUnsupported,
// and the runner skips its signal steps.
type SignalTarget interface {
	Signal(ctx context.Context, now time.Time, p engine.SignalParams) (engine.SignalResult, error)
}

var (
	_ SignalTarget = (*ModelTarget)(nil)
	_ SignalTarget = (*StoreTarget)(nil)
)

// Signal calls Model.Signal.
func (t *ModelTarget) Signal(_ context.Context, now time.Time, p engine.SignalParams) (engine.SignalResult, error) {
	return t.M.Signal(now, p)
}

// Signal calls the store's Signal at now, or answers
// errors.ErrUnsupported for a store that is no engine.Signaller.
func (t *StoreTarget) Signal(ctx context.Context, now time.Time, p engine.SignalParams) (engine.SignalResult, error) {
	s, ok := t.Store.(engine.Signaller)
	if !ok {
		return engine.SignalResult{}, fmt.Errorf("store %T has no signals: %w", t.Store, errors.ErrUnsupported)
	}
	t.SetClock(now)
	return s.Signal(ctx, p)
}

type opSignal struct {
	noMore
	p engine.SignalParams
}

func (*opSignal) needsReply() bool { return true }

const signalUsage = "signal <workflow> <task> completed [value=<text>] | signal <workflow> <task> failed [reason=<text>]"

func parseSignal(args []word) (operation, error) {
	pos, rest, err := positional(args, 3, signalUsage)
	if err != nil {
		return nil, err
	}
	o, err := parseOpts(rest, map[string]kind{"value": kStr, "reason": kStr})
	if err != nil {
		return nil, err
	}
	return &opSignal{p: engine.SignalParams{
		Workflow: pos[0], Task: pos[1], Kind: engine.OutcomeKind(pos[2]),
		Value: o.bytes("value"), Reason: o.str("reason"),
	}}, nil
}

// signalLine is a signal's reply: "signalled" or "unchanged" (the same
// signal again), the task's state, its wake-ups, the workflow's state.
func signalLine(res engine.SignalResult) line {
	verb := "signalled"
	if !res.Signalled {
		verb = "unchanged"
	}
	l := line{{"", verb}, {"", string(res.State)}, {"pushed", pushedList(res.Pushed)}, {"wf", string(res.WorkflowState)}}
	if res.WorkflowEnded {
		l = append(l, field{"", "ended"})
	}
	return l
}

func (op *opSignal) exec(r *runner, st *Step) error {
	t, ok := r.t.(SignalTarget)
	if !ok {
		r.res.Skipped = append(r.res.Skipped, fmt.Sprintf("%s:%d: %s", r.s.Name, st.Line, st.Text))
		return nil
	}
	res, err := t.Signal(r.ctx, st.Now, op.p)
	if errors.Is(err, errors.ErrUnsupported) {
		r.res.Skipped = append(r.res.Skipped, fmt.Sprintf("%s:%d: %s", r.s.Name, st.Line, st.Text))
		return nil
	}
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{signalLine(res)})
}
