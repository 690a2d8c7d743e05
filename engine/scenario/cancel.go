package scenario

import (
	"fmt"

	"github.com/weirflow/weir/engine"
)

type opCancel struct {
	noMore
	workflow bool
	id       string
	undo     *bool
}

func (*opCancel) needsReply() bool { return true }

func parseCancel(args []word) (operation, error) {
	pos, rest, err := positional(args, 2, "cancel workflow <id> [undo=true|false] | cancel job <id>")
	if err != nil {
		return nil, err
	}
	switch pos[0] {
	case "workflow":
		o, err := parseOpts(rest, map[string]kind{"undo": kBool})
		if err != nil {
			return nil, err
		}
		op := &opCancel{workflow: true, id: pos[1]}
		if o.has("undo") {
			u := o.bool("undo", false)
			op.undo = &u
		}
		return op, nil
	case "job":
		if len(rest) != 0 {
			return nil, fmt.Errorf("usage: cancel job <id>")
		}
		return &opCancel{id: pos[1]}, nil
	}
	return nil, fmt.Errorf("usage: cancel workflow <id> [undo=true|false] | cancel job <id>")
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

func (op *opCancel) exec(r *runner, st *Step) error {
	var res engine.CancelResult
	var err error
	if op.workflow {
		res, err = r.store(st).CancelWorkflow(r.ctx, engine.CancelWorkflowParams{ID: op.id, Undo: op.undo})
	} else {
		res, err = r.store(st).CancelJob(r.ctx, engine.CancelJobParams{ID: op.id})
	}
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{cancelLine(res, !op.workflow)})
}
