package redisstore

import (
	"context"
	"errors"
	"github.com/weirflow/weir"

	"github.com/weirflow/weir/engine"
)

var _ engine.Signaller = (*Store)(nil)

// Signal implements engine.Signaller with scripts/signal.lua.
func (pt *part) Signal(ctx context.Context, p engine.SignalParams) (engine.SignalResult, error) {
	lim := pt.cfg.Limits
	if err := engine.ValidateSignal(p, lim); err != nil {
		return engine.SignalResult{}, err
	}
	val := string(p.Value)
	if p.Kind == engine.OutcomeFailed {
		val = p.Reason
		if len(val) > lim.MaxError {
			val = val[:lim.MaxError]
		}
	}
	v, err := pt.run(ctx, "signal", p.Workflow, p.Task, string(p.Kind), flagArg(p.Value != nil), val)
	if err != nil {
		var ce *codeErr
		if errors.As(err, &ce) && ce.code == weir.ErrInvalid {
			return engine.SignalResult{}, &weir.ValidationError{Task: p.Task, Field: "task", Problem: ce.detail}
		}
		return engine.SignalResult{}, err
	}
	r := newReader(v)
	res := engine.SignalResult{Signalled: r.flag(), State: weir.State(r.str()),
		WorkflowState: weir.WorkflowState(r.str()), WorkflowEnded: r.flag()}
	res.Pushed = r.pushed()
	// its cascade may have stopped on the call's budget (drain.go)
	d, err := pt.drainRest(ctx, r)
	if err != nil {
		return engine.SignalResult{}, err
	}
	res.Pushed = append(res.Pushed, d.Pushed...)
	if d.Workflow == p.Workflow {
		res.WorkflowState = d.State
		res.WorkflowEnded = res.WorkflowEnded || d.Ended
	}
	return res, nil
}
