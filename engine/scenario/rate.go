package scenario

import (
	"context"
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
	if err := r.t.RateLimitQueue(r.ctx, st.Now, op.p); err != nil {
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
	claimed, next, err := r.t.ClaimDue(r.ctx, st.Now, op.p)
	switch {
	case len(claimed) > 0:
		return fmt.Errorf("%s:%d: due: the claim took %s; a due step must find nothing to claim", r.s.Name, st.Line, claimed[0].Job.ID)
	case errors.Is(err, errors.ErrUnsupported):
		r.res.Skipped = append(r.res.Skipped, fmt.Sprintf("%s:%d: %s", r.s.Name, st.Line, st.Text))
		return nil
	case err != nil:
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{{{"", "none"}, {"next", ms(next)}}})
}

// ClaimDue calls Model.Claim and, when it claimed nothing, Model.NextDue.
func (t *ModelTarget) ClaimDue(_ context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, time.Time, error) {
	c, err := t.M.Claim(now, p)
	if err != nil || len(c) > 0 {
		return c, time.Time{}, err
	}
	return nil, t.M.NextDue(p.Queues), nil
}

// RateLimitQueue calls Model.RateLimitQueue.
func (t *ModelTarget) RateLimitQueue(_ context.Context, now time.Time, p engine.RateLimitQueueParams) error {
	return t.M.RateLimitQueue(now, p)
}

// RateLimitQueue calls Store.RateLimitQueue at now.
func (t *StoreTarget) RateLimitQueue(ctx context.Context, now time.Time, p engine.RateLimitQueueParams) error {
	t.SetClock(now)
	return t.Store.RateLimitQueue(ctx, p)
}

// ClaimDue calls Store.Claim at now; when it claimed nothing it answers
// errors.ErrUnsupported, as a Store's Claim does not report its next due
// time (a target that can, as the Lua store's golden test does, overrides
// it), so the runner skips the comparison of "due" steps.
func (t *StoreTarget) ClaimDue(ctx context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, time.Time, error) {
	t.SetClock(now)
	c, err := t.Store.Claim(ctx, p)
	if err != nil || len(c) > 0 {
		return c, time.Time{}, err
	}
	return nil, time.Time{}, errors.ErrUnsupported
}

// rateField renders a queue's rate limit for the queues step: "N/period".
func rateField(q weir.QueueInfo) field {
	return field{"rate", strconv.Itoa(q.RateLimit) + "/" + q.RatePeriod.String()}
}
