package scenario

import (
	"github.com/weirflow/weir/engine"
)

type opExpire struct {
	noMore
	max int
}

func (*opExpire) needsReply() bool { return true }

func (op *opExpire) exec(r *runner, st *Step) error {
	res, err := r.store(st).ExpireLeases(r.ctx, engine.ExpireParams{Max: op.max})
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, s := range res.Expired {
		got = append(got, append(line{{"", "expired"}, {"", s.JobID}}, settledLine(s)...))
	}
	for _, p := range res.Due {
		got = append(got, line{{"", "due"}, {"", p.JobID}})
	}
	if len(got) == 0 {
		got = []line{{{"", "none"}}}
	}
	return r.compare(st, got)
}
