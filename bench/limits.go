package bench

import (
	"context"

	"strconv"
	"time"

	"github.com/weirflow/weir/client"
)

// LimitVariant is one row of the limits scenario: what it sets on its
// queue before the jobs are enqueued.
type LimitVariant struct {
	// Name is the row's Variant.
	Name string
	// Set limits queue for a worker of concurrency conc (nil: no limit).
	Set func(ctx context.Context, r *runner, queue string, conc int) error
	// Opts gives the options of the i-th job (nil: none).
	Opts func(i int) []client.JobOption
}

// LimitVariants are the rows of the limits scenario, in run order: the
// same plain jobs without a limit and under each kind of limit, so that
// what a limit adds to a claim shows in the server time per job of one
// run.
var LimitVariants = []LimitVariant{
	{Name: "none"},
	// A queue-wide concurrency limit of half the worker's slots: every
	// claim checks it, and it holds the worker below its concurrency.
	{Name: "concurrency", Set: func(ctx context.Context, r *runner, q string, conc int) error {
		return r.client.LimitQueue(ctx, q, max(conc/2, 1))
	}},
	// A rate limit that the run does not reach (10,000 starts in any
	// 100 ms): what counting the starts costs a claim.
	{Name: "rate", Set: func(ctx context.Context, r *runner, q string, _ int) error {
		return r.client.RateLimitQueue(ctx, q, 10_000, 100*time.Millisecond)
	}},
	// Jobs of 20 concurrency keys in turn, at most 2 running per key (40
	// in all, below the worker's 50): claims rotate across the keys.
	{Name: "keys", Set: func(ctx context.Context, r *runner, q string, _ int) error {
		return r.client.LimitKeys(ctx, q, 2)
	}, Opts: func(i int) []client.JobOption {
		return []client.JobOption{client.ConcurrencyKey(benchKeys[i%len(benchKeys)])}
	}},
}

// benchKeys are the concurrency keys of the limits scenario's keys row.
var benchKeys = func() []string {
	k := make([]string, 20)
	for i := range k {
		k[i] = "tenant-" + strconv.Itoa(i)
	}
	return k
}()

// limited runs the limits scenario's row v.
func (r *runner) limited(ctx context.Context, v LimitVariant) (Result, error) {
	conc := r.opts.LimitsConcurrency
	res := Result{Name: ScenarioLimits, Variant: v.Name, Concurrency: conc, Processes: 1, Jobs: r.opts.Jobs}
	q := noopQueue("limits-" + v.Name + "-c" + strconv.Itoa(conc))
	if v.Set != nil {
		if err := v.Set(ctx, r, q.Name(), conc); err != nil {
			return res, err
		}
	}
	err := r.runPlain(ctx, q, conc, v.Opts, &res)
	return res, err
}
