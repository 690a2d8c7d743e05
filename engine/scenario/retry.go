package scenario

import (
	"strconv"
	"time"

	"github.com/weirflow/weir/engine"
)

// opRetry runs an ended plain job again: "retry <job> [run_at=<ms>|+<d>]",
// reply "<state> [run_at=<ms>] pushed=<job>,...".
type opRetry struct {
	noMore
	p engine.RetryJobParams
}

func (*opRetry) needsReply() bool { return true }

func parseRetry(args []word, now int64) (operation, error) {
	pos, rest, err := positional(args, 1, "retry <job> [run_at=<ms>|+<duration>]")
	if err != nil {
		return nil, err
	}
	o, err := parseOpts(rest, map[string]kind{"run_at": kTime})
	if err != nil {
		return nil, err
	}
	op := &opRetry{p: engine.RetryJobParams{ID: pos[0]}}
	if v := o.str("run_at"); v != "" && v != "-" {
		op.p.RunAt = time.UnixMilli(timeValue(v, now)).UTC()
	}
	return op, nil
}

func (op *opRetry) exec(r *runner, st *Step) error {
	res, err := r.store(st).RetryJob(r.ctx, op.p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	l := line{{"", string(res.State)}}
	if !res.RunAt.IsZero() {
		l = append(l, field{"run_at", strconv.FormatInt(res.RunAt.UnixMilli(), 10)})
	}
	return r.compare(st, []line{append(l, field{"pushed", pushedList(res.Pushed)})})
}
