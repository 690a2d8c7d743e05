package scenario

import (
	"strconv"

	"github.com/weirflow/weir/engine"
)

// opRerun runs the failed part of an ended workflow again: "rerun
// <workflow>", reply "run=<n> reset=<job>,... pushed=<job>,...".
type opRerun struct {
	noMore
	p engine.RerunWorkflowParams
}

func (*opRerun) needsReply() bool { return true }

func parseRerun(args []word) (operation, error) {
	pos, rest, err := positional(args, 1, "rerun <workflow>")
	if err != nil {
		return nil, err
	}
	if _, err := parseOpts(rest, map[string]kind{}); err != nil {
		return nil, err
	}
	return &opRerun{p: engine.RerunWorkflowParams{ID: pos[0]}}, nil
}

func (op *opRerun) exec(r *runner, st *Step) error {
	res, err := r.store(st).RerunWorkflow(r.ctx, op.p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{{
		{"run", strconv.Itoa(res.Run)}, {"reset", list(res.Reset)}, {"pushed", pushedList(res.Pushed)},
	}})
}
