package scenario

import (
	"fmt"
	"github.com/weirflow/weir"
)

// opJobs lists one list of a queue: "jobs <queue> state=<list>
// [limit=<n>] [cursor=$c]". Each job is a line "<id> <state>", with
// "error=<text>" when it has one; the page ends with "next=<cursor>" or
// "next=-".
type opJobs struct {
	noMore
	p      weir.ListJobsParams
	cursor *word
}

func (*opJobs) needsReply() bool { return true }

func parseJobs(args []word) (operation, error) {
	if len(args) == 0 || args[0].key != "" || args[0].isVar {
		return nil, fmt.Errorf("usage: jobs <queue> state=<list> [limit=<n>] [cursor=$c]")
	}
	o, err := parseOpts(args[1:], map[string]kind{"state": kStr, "limit": kInt, "cursor": kToken})
	if err != nil {
		return nil, err
	}
	op := &opJobs{p: weir.ListJobsParams{Queue: args[0].val, State: weir.JobList(o.str("state")), Limit: o.int("limit", 0)}}
	if w, ok := o["cursor"]; ok {
		op.cursor = &w
	}
	return op, nil
}

func (op *opJobs) exec(r *runner, st *Step) error {
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
	page, err := r.store(st).ListJobs(r.ctx, p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, j := range page.Jobs {
		l := line{{"", j.ID}, {"", string(j.State)}}
		if j.Error != "" {
			l = append(l, field{"error", j.Error})
		}
		got = append(got, l)
	}
	next := page.NextCursor
	if next == "" {
		next = "-"
	}
	return r.compare(st, append(got, line{{"next", next}}))
}
