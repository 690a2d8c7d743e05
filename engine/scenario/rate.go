package scenario

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// opRate is "rate <queue> <limit>/<period>" (or "rate <queue> 0"):
// RateLimitQueue.
type opRate struct {
	noMore
	p engine.RateLimitQueueParams
}

func (*opRate) needsReply() bool { return true }

func parseRate(args []word) (operation, error) {
	const usage = "usage: rate <queue> <limit>/<period> | rate <queue> 0"
	if len(args) != 2 || args[0].key != "" || args[1].key != "" {
		return nil, errors.New(usage)
	}
	p := engine.RateLimitQueueParams{Queue: args[0].val}
	n, per, found := strings.Cut(args[1].val, "/")
	var err error
	if p.Limit, err = strconv.Atoi(n); err != nil {
		return nil, fmt.Errorf("rate: limit %q is not an integer (%s)", n, usage)
	}
	if found {
		if p.Period, err = time.ParseDuration(per); err != nil {
			return nil, fmt.Errorf("rate: period %q: %v", per, err)
		}
	}
	return &opRate{p: p}, nil
}

func (op *opRate) exec(r *runner, st *Step) error {
	if err := r.store(st).RateLimitQueue(r.ctx, op.p); err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{{{"", "ok"}}})
}

// opDue is "due <queue>[,<queue>...] [lease=30s]": a claim of one job that
// must take none, replying "none next=<ms>" with the time a blocking claim
// would sleep until at most (a delayed job's due time, a lease's deadline,
// the next start a rate limit allows), or "none next=-".
type opDue struct {
	noMore
	p engine.ClaimParams
}

func (*opDue) needsReply() bool { return true }

func (op *opDue) exec(r *runner, st *Step) error {
	var claimed []engine.Claimed
	var next time.Time
	var err error
	if dc, ok := r.store(st).(DueClaimer); ok {
		claimed, next, err = dc.ClaimDue(r.ctx, op.p)
	} else {
		// the claim runs all the same, so the store's state goes on as
		// the scenario's; only its reply is not compared
		claimed, err = r.t.Store.Claim(r.ctx, op.p)
		if err == nil && len(claimed) == 0 {
			err = errors.ErrUnsupported
		}
	}
	switch {
	case len(claimed) > 0:
		return fmt.Errorf("%s:%d: due: the claim took %s; a due step must find nothing to claim", r.s.Name, st.Line, claimed[0].Job.ID)
	case errors.Is(err, errors.ErrUnsupported):
		r.skip(st)
		return nil
	case err != nil:
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{{{"", "none"}, {"next", ms(next)}}})
}

// rateField renders a queue's rate limit for the queues step: "N/period".
func rateField(q weir.QueueInfo) field {
	return field{"rate", strconv.Itoa(q.RateLimit) + "/" + q.RatePeriod.String()}
}
