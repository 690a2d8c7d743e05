package main

import (
	"context"
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
)

// newQueueRateCmd is weir queue rate QUEUE N/PERIOD.
func newQueueRateCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "rate QUEUE N/PERIOD",
		Short: "Let at most N jobs of a queue start in any PERIOD across every worker (0: no limit)",
		Long: "weir queue rate QUEUE N/PERIOD stores a rate limit for the queue: every claim, by\n" +
			"every worker, starts a job of it only while fewer than N of its jobs started in the\n" +
			"last PERIOD (a Go duration, whole milliseconds from 1ms to 24h: 10/1s, 100/1m). A\n" +
			"claim it refuses sleeps until the next start is allowed. A start counts for PERIOD\n" +
			"however its job ends; a new N keeps the count, a new PERIOD starts it afresh. 0\n" +
			"removes the limit. The concurrency limit (weir queue limit) stays as it is.",
		Example: "  weir queue rate default 10/1s\n" +
			"  weir queue rate default 0",
		Args: exactArgs(2),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			p, err := parseRate(args[0], args[1])
			if err != nil {
				return command.Usage(fmt.Errorf("weir queue rate: %w", err))
			}
			if err := engine.ValidateRateLimitQueue(p); err != nil {
				return command.Usage(fmt.Errorf("weir queue rate: %w", err))
			}
			if err := s.RateLimitQueue(ctx, p); err != nil {
				return storeErr("queue "+args[0], err)
			}
			if p.Limit == 0 {
				fmt.Fprintf(c.OutOrStdout(), "queue %s: no rate limit\n", args[0])
			} else {
				fmt.Fprintf(c.OutOrStdout(), "queue %s: at most %d starts per %v\n", args[0], p.Limit, p.Period)
			}
			return nil
		}),
	}
}

// parseRate reads N/PERIOD, or 0.
func parseRate(queue, v string) (engine.RateLimitQueueParams, error) {
	p := engine.RateLimitQueueParams{Queue: queue}
	n, per, found := strings.Cut(v, "/")
	var err error
	if p.Limit, err = strconv.Atoi(n); err != nil {
		return p, fmt.Errorf("limit %q is not an integer (want N/PERIOD, as 10/1s, or 0)", n)
	}
	if !found {
		if p.Limit != 0 {
			return p, fmt.Errorf("%q has no period (want N/PERIOD, as 10/1s, or 0)", v)
		}
		return p, nil
	}
	if p.Period, err = time.ParseDuration(per); err != nil {
		return p, fmt.Errorf("period %q is not a duration (as 1s, 500ms, 1m)", per)
	}
	return p, nil
}

// rateColumn renders a queue's rate limit for weir queues: N/PERIOD, or -.
func rateColumn(q weirpkg.QueueInfo) string {
	if q.RateLimit == 0 {
		return "-"
	}
	return strconv.Itoa(q.RateLimit) + "/" + q.RatePeriod.String()
}
