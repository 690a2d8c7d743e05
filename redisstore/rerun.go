package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"

	"github.com/weirflow/weir/engine"
)

// RerunWorkflow implements engine.Store.
func (pt *part) RerunWorkflow(ctx context.Context, p engine.RerunWorkflowParams) (engine.RerunResult, error) {
	if !engine.ValidID(p.ID) {
		if err := ctx.Err(); err != nil {
			return engine.RerunResult{}, err
		}
		return engine.RerunResult{}, fmt.Errorf("%w: workflow %q", weir.ErrNotFound, p.ID)
	}
	v, err := pt.run(ctx, "rerun_workflow", p.ID)
	if err != nil {
		var ce *codeErr
		if errors.As(err, &ce) && ce.code == weir.ErrNotRerunnable {
			f := strings.Fields(ce.detail)
			res := engine.RerunResult{}
			if len(f) >= 2 {
				res.WorkflowState = weir.WorkflowState(f[0])
				res.Run, _ = strconv.Atoi(f[1])
			}
			return res, err
		}
		return engine.RerunResult{}, err
	}
	r := newReader(v)
	res := engine.RerunResult{Run: int(r.int()), WorkflowState: weir.WorkflowRunning}
	for _, name := range r.strings() {
		res.Reset = append(res.Reset, weir.TaskJobID(p.ID, name))
	}
	res.Pushed = r.pushed()
	// more tasks to push than a call's budget: drain calls push the rest
	d, err := pt.drainRest(ctx, r)
	if err != nil {
		return engine.RerunResult{}, err
	}
	res.Pushed = append(res.Pushed, d.Pushed...)
	return res, nil
}
