package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"strings"

	"github.com/weirflow/weir/engine"
)

// cancelError decodes "WFENDED|JOBENDED <state> ..." error replies of the
// cancel scripts, which carry the state the model returns with the error.
func cancelError(err error) (string, error) {
	var ce *codeErr
	if !errors.As(err, &ce) || (ce.code != weir.ErrWorkflowEnded && ce.code != weir.ErrJobEnded) {
		return "", err
	}
	st, _, _ := strings.Cut(ce.detail, " ")
	return st, err
}

// CancelWorkflow implements engine.Store.
func (pt *part) CancelWorkflow(ctx context.Context, p engine.CancelWorkflowParams) (engine.CancelResult, error) {
	if !engine.ValidID(p.ID) {
		if err := ctx.Err(); err != nil {
			return engine.CancelResult{}, err
		}
		return engine.CancelResult{}, fmt.Errorf("%w: workflow %q", weir.ErrNotFound, p.ID)
	}
	undo := ""
	if p.Undo != nil {
		undo = "0"
		if *p.Undo {
			undo = "1"
		}
	}
	v, err := pt.run(ctx, "cancel_workflow", p.ID, undo)
	if err != nil {
		st, err := cancelError(err)
		return engine.CancelResult{WorkflowState: weir.WorkflowState(st)}, err
	}
	r := newReader(v)
	res := engine.CancelResult{WorkflowState: weir.WorkflowState(r.str())}
	states, names := r.str(), strings.Split(r.str(), "\n")
	if states != "" && len(names) != len(states) {
		return engine.CancelResult{}, fmt.Errorf("%w: %d task states for %d names", weir.ErrProtocol, len(states), len(names))
	}
	for i := 0; i < len(states); i++ {
		if states[i] == 'w' || states[i] == 'q' || states[i] == 'o' {
			res.Cancelled = append(res.Cancelled, weir.TaskJobID(p.ID, names[i]))
		}
	}
	res.Stopping = r.strings()
	res.Pushed = r.pushed()
	// the compensation it started may have stopped on the call's budget
	// (drain.go)
	d, err := pt.drainRest(ctx, r)
	if err != nil {
		return engine.CancelResult{}, err
	}
	res.Pushed = append(res.Pushed, d.Pushed...)
	if d.Workflow == p.ID {
		res.WorkflowState = d.State
	}
	return res, nil
}

// CancelJob implements engine.Store.
func (pt *part) CancelJob(ctx context.Context, p engine.CancelJobParams) (engine.CancelResult, error) {
	if !validJobID(p.ID) {
		if err := ctx.Err(); err != nil {
			return engine.CancelResult{}, err
		}
		return engine.CancelResult{}, fmt.Errorf("%w: job %q", weir.ErrNotFound, p.ID)
	}
	v, err := pt.run(ctx, "cancel_job", p.ID)
	if err != nil {
		st, err := cancelError(err)
		return engine.CancelResult{State: weir.State(st)}, err
	}
	r := newReader(v)
	res := engine.CancelResult{State: weir.State(r.str()), WorkflowState: weir.WorkflowState(r.str())}
	res.Cancelled = r.strings()
	res.Stopping = r.strings()
	res.Pushed = r.pushed()
	// its cascade may have stopped on the call's budget (drain.go)
	d, err := pt.drainRest(ctx, r)
	if err != nil {
		return engine.CancelResult{}, err
	}
	res.Cancelled = append(res.Cancelled, d.Cancelled...)
	res.Pushed = append(res.Pushed, d.Pushed...)
	if d.Workflow != "" {
		res.WorkflowState = d.State
	}
	return res, nil
}
