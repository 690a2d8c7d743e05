package scenario

import (
	"fmt"
	"time"

	"github.com/weirflow/weir/engine"
)

type opHeartbeat struct {
	noMore
	extend time.Duration
	jobs   []string
	tokens []word
}

func (*opHeartbeat) needsReply() bool { return true }

func parseHeartbeat(args []word) (operation, error) {
	op := &opHeartbeat{extend: DefaultLease}
	var pairs []word
	for _, w := range args {
		if w.key == "extend" {
			d, err := parseDur(w.val)
			if err != nil {
				return nil, fmt.Errorf("extend: bad duration %q", w.val)
			}
			op.extend = d
			continue
		}
		if w.key != "" {
			return nil, fmt.Errorf("unknown option %q (heartbeat [extend=30s] <job> <token> ...)", w.key)
		}
		pairs = append(pairs, w)
	}
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("usage: heartbeat [extend=30s] <job> <token> [<job> <token> ...]")
	}
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i].isVar {
			return nil, fmt.Errorf("a heartbeat names a job, then its token")
		}
		op.jobs = append(op.jobs, pairs[i].val)
		op.tokens = append(op.tokens, pairs[i+1])
	}
	return op, nil
}

func (op *opHeartbeat) exec(r *runner, st *Step) error {
	p := engine.HeartbeatParams{Extend: op.extend}
	for i, id := range op.jobs {
		tok, err := r.value(st, op.tokens[i])
		if err != nil {
			return err
		}
		p.Leases = append(p.Leases, engine.LeaseRef{JobID: id, Token: tok})
	}
	res, err := r.store(st).Heartbeat(r.ctx, p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, s := range res {
		l := line{{"", s.JobID}}
		if s.Lost {
			l = append(l, field{"", "lost"})
		}
		if !s.Deadline.IsZero() {
			l = append(l, field{"deadline", ms(s.Deadline)})
		}
		if s.Cancel {
			l = append(l, field{"", "cancel"})
		}
		got = append(got, l)
	}
	return r.compare(st, got)
}
