package scenario

import (
	"github.com/weirflow/weir"
)

type opList struct {
	noMore
	p      weir.ListParams
	cursor *word
}

func (*opList) needsReply() bool { return true }

func parseList(args []word) (operation, error) {
	o, err := parseOpts(args, map[string]kind{"state": kStr, "limit": kInt, "cursor": kToken})
	if err != nil {
		return nil, err
	}
	op := &opList{p: weir.ListParams{State: weir.WorkflowState(o.str("state")), Limit: o.int("limit", 0)}}
	if w, ok := o["cursor"]; ok {
		op.cursor = &w
	}
	return op, nil
}

func (op *opList) exec(r *runner, st *Step) error {
	p := op.p
	if op.cursor != nil {
		c, err := r.value(st, *op.cursor)
		if err != nil {
			return err
		}
		if c != "-" {
			p.Cursor = c
		}
	}
	page, err := r.store(st).ListWorkflows(r.ctx, p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, w := range page.Workflows {
		got = append(got, line{{"", w.ID}, {"", string(w.State)}})
	}
	next := page.NextCursor
	if next == "" {
		next = "-"
	}
	return r.compare(st, append(got, line{{"next", next}}))
}
