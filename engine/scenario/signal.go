package scenario

import (
	"errors"

	"github.com/weirflow/weir/engine"
)

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
	sg, ok := r.store(st).(engine.Signaller)
	if !ok {
		r.skip(st)
		return nil
	}
	res, err := sg.Signal(r.ctx, op.p)
	if errors.Is(err, errors.ErrUnsupported) {
		r.skip(st)
		return nil
	}
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{signalLine(res)})
}
