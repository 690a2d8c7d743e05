package scenario

import (
	"fmt"
	"github.com/weirflow/weir"
	"strconv"

	"github.com/weirflow/weir/engine"
)

// opProgress is "progress <job> <token> [pct=N] [msg=text]
// [checkpoint=bytes]": a progress report (pct, with msg) and/or a
// checkpoint ("checkpoint=" removes it); reply "ok" or the error.
type opProgress struct {
	noMore
	job   string
	token word
	p     engine.ProgressParams
}

func (*opProgress) needsReply() bool { return true }

const progressUsage = "progress <job> <token> [pct=N] [msg=text] [checkpoint=bytes]"

func parseProgress(args []word) (operation, error) {
	if len(args) < 2 || args[0].key != "" || args[0].isVar || args[1].key != "" {
		return nil, fmt.Errorf("usage: %s", progressUsage)
	}
	o, err := parseOpts(args[2:], map[string]kind{"pct": kStr, "msg": kStr, "checkpoint": kStr})
	if err != nil {
		return nil, err
	}
	op := &opProgress{job: args[0].val, token: args[1]}
	if o.has("pct") || o.has("msg") {
		pct, err := strconv.ParseFloat(o.str("pct"), 64)
		if o.has("pct") && err != nil {
			return nil, fmt.Errorf("pct: bad number %q", o.str("pct"))
		}
		op.p.Report = &weir.Progress{Percent: pct, Message: o.str("msg")}
	}
	op.p.Checkpoint = o.bytes("checkpoint")
	return op, nil
}

func (op *opProgress) exec(r *runner, st *Step) error {
	tok, err := r.value(st, op.token)
	if err != nil {
		return err
	}
	p := op.p
	p.JobID, p.Token = op.job, tok
	if err := r.store(st).Progress(r.ctx, p); err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{{{"", "ok"}}})
}

// addProgress adds the fields of a job's or task's progress to m:
// progress (the percent, "-" for none), progress_msg, progress_at.
func addProgress(m map[string]string, p *weir.Progress) {
	m["progress"], m["progress_msg"], m["progress_at"] = "-", "", "-"
	if p != nil {
		m["progress"] = strconv.FormatFloat(p.Percent, 'g', -1, 64)
		m["progress_msg"], m["progress_at"] = p.Message, ms(p.At)
	}
}
