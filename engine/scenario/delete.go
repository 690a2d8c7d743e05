package scenario

import (
	"fmt"
)

// opDelete removes an ended record: "delete job <id>" or "delete workflow
// <id>", reply "ok".
type opDelete struct {
	noMore
	workflow bool
	id       string
}

func (*opDelete) needsReply() bool { return true }

func parseDelete(args []word) (operation, error) {
	const usage = "delete job <id> | delete workflow <id>"
	pos, rest, err := positional(args, 2, usage)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 || (pos[0] != "job" && pos[0] != "workflow") {
		return nil, fmt.Errorf("usage: %s", usage)
	}
	return &opDelete{workflow: pos[0] == "workflow", id: pos[1]}, nil
}

func (op *opDelete) exec(r *runner, st *Step) error {
	var err error
	if op.workflow {
		err = r.store(st).DeleteWorkflow(r.ctx, op.id)
	} else {
		err = r.store(st).DeleteJob(r.ctx, op.id)
	}
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{{{"", "ok"}}})
}
