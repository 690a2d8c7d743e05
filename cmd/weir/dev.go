package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	weirpkg "github.com/weirflow/weir"
	"github.com/weirflow/weir/dashboard"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/metrics"
	"github.com/weirflow/weir/rest"
	"github.com/weirflow/weir/workflowfile"
)

func newDevCmd(g *globalFlags) *cobra.Command {
	var af apiFlags
	var redisAddr, queues, webhooks string
	var concurrency int
	c := &cobra.Command{
		Use:   "dev",
		Short: "Run an embedded Redis server, the REST API and shell workers in one process",
		Long: "dev starts an embedded Redis-protocol server on a loopback port, the REST API\n" +
			"(spec/rest.md) and workers of shell tasks for --queues, so that other terminals\n" +
			"(weir submit/worker/status... with --redis) and programs can use it. It prints\n" +
			"WEIR_REDIS_URL=<url> and WEIR_HTTP_URL=<url> on stdout once ready, and\n" +
			"WEIR_TOKEN=<token> when it generated the API's bearer token (it does unless given\n" +
			"--token or WEIR_TOKEN, or --no-token), then WEIR_READ_TOKEN=<token>, a read-only\n" +
			"token it generated with it (unless given --read-token or WEIR_READ_TOKEN). The web\n" +
			"dashboard (spec/dashboard.md) is at /; dev prints its address on stderr, with a\n" +
			"token it generated in the fragment. Its data lives in memory and is gone when it\n" +
			"stops (SIGINT or SIGTERM). It ignores WEIR_REDIS_URL and WEIR_REDIS_CLUSTER.\n" +
			"Its workers also deliver workflows' webhooks from --webhooks (weir.webhooks;\n" +
			"signed with WEIR_WEBHOOK_SECRET_<NAME>, as weir worker's --webhooks).",
		Example: "  weir dev\n" +
			"  weir dev --queues default,images --concurrency 4",
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			for flag, v := range map[string]string{"--redis": g.redisURL, "--cluster": g.cluster} {
				if v != "" {
					return command.Usage(fmt.Errorf("dev runs its own embedded server: %s is for the other commands (use --redis-addr to choose its address)", flag))
				}
			}
			if !isLoopback(redisAddr) {
				return command.Usage(fmt.Errorf("--redis-addr %q must be a loopback host:port (the embedded server has no password)", redisAddr))
			}
			if concurrency < 1 {
				return command.Usage(fmt.Errorf("--concurrency must be at least 1, got %d", concurrency))
			}
			qs, err := parseQueues(queues)
			if err != nil {
				return err
			}
			if webhooks != "" {
				if !engine.ValidName(webhooks) {
					return command.Usage(fmt.Errorf("--webhooks: queue name %q must "+engine.NameRule, webhooks))
				}
				if slices.Contains(qs, webhooks) {
					return command.Usage(fmt.Errorf("--webhooks: queue %q is also in --queues", webhooks))
				}
			}
			token, generated, err := af.check(c, true)
			if err != nil {
				return err
			}
			return runDev(c, g, &af, token, generated, redisAddr, qs, concurrency, webhooks)
		},
	}
	af.register(c, "127.0.0.1:0")
	c.Flags().BoolVar(&af.noToken, "no-token", false, "serve the REST API without a token (loopback only; by default dev generates one)")
	c.Flags().StringVar(&redisAddr, "redis-addr", "127.0.0.1:0", "loopback address of the embedded Redis server (port 0 picks a free one)")
	c.Flags().StringVar(&queues, "queues", workflowfile.DefaultQueue, "comma-separated queues to run shell tasks from")
	c.Flags().IntVar(&concurrency, "concurrency", 8, "commands run at once")
	c.Flags().StringVar(&webhooks, "webhooks", weirpkg.WebhookQueue, "deliver the webhooks of this queue (secrets from WEIR_WEBHOOK_SECRET_<NAME>, as weir worker); empty: none")
	return c
}

// runDev runs the embedded server, the workers and the API until the
// command's context is done, then stops them in reverse order.
func runDev(c *cobra.Command, g *globalFlags, af *apiFlags, token string, generated bool, redisAddr string, qs []string, concurrency int, webhooks string) error {
	ctx := c.Context()
	stdout, stderr := c.OutOrStdout(), c.ErrOrStderr()
	if g.namespace != "" && !engine.ValidName(g.namespace) {
		return command.Usage(fmt.Errorf("--namespace %q must "+engine.NameRule, g.namespace))
	}
	if g.durable.Replicas != 0 {
		return command.Usage(fmt.Errorf("--durable-replicas %d: dev's embedded server has no replicas; use weir serve --redis URL", g.durable.Replicas))
	}
	cn, err := g.openEmbeddedAt(redisAddr)
	if err != nil {
		return err
	}
	defer cn.Close()
	limits := cn.store.Config().Limits
	wm := metrics.NewWorkerMetrics(metrics.WorkerMetricsOpts{})
	h, err := rest.NewHandler(rest.Config{
		Store: cn.store, Token: token, ReadTokens: af.readTokens, NoShell: af.noShell,
		MaxBody: af.maxBody, Limits: limits, Ping: cn.ping, Origins: af.origins,
		Logger:    slog.New(slog.NewTextHandler(stderr, nil)),
		Metrics:   metricsHandler(cn.store, wm),
		Dashboard: dashboard.Handler(),
	})
	if err != nil {
		return command.Usage(err)
	}
	ln, err := af.listen()
	if err != nil {
		return err
	}
	tr, err := startTracing(ctx, "dev", stderr)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer tr.shutdown()
	w := newShellWorker(cn.store, limits, qs, concurrency, stderr, wm.Observe, true, tr.worker, cn.embeddedWorker)
	if webhooks != "" {
		if err := w.Webhooks(webhookConfig(webhooks)); err != nil {
			return command.Fail(err)
		}
	}
	if err := w.Start(ctx); err != nil {
		_ = ln.Close()
		return command.Fail(err)
	}
	fmt.Fprintf(stdout, "WEIR_REDIS_URL=%s\nWEIR_HTTP_URL=http://%s\n", cn.url, ln.Addr())
	if generated {
		fmt.Fprintf(stdout, "WEIR_TOKEN=%s\n", token)
		if af.readGenerated {
			fmt.Fprintf(stdout, "WEIR_READ_TOKEN=%s\n", af.readTokens[0])
		}
	}
	fmt.Fprintf(stderr, "weir dev: dashboard at %s\n", dashboardURL(ln.Addr().String(), token, generated))
	fmt.Fprintf(stderr, "weir dev: workers for queues %s, concurrency %d; Ctrl-C stops\n", strings.Join(qs, ","), concurrency)
	serveErr := serveAPI(ctx, ln, tr.handler(h))
	// Running commands get shutdownTimeout to finish; then they are killed
	// and their jobs handed back.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	stopErr := w.Stop(sctx)
	if serveErr != nil {
		return command.Fail(serveErr)
	}
	if stopErr != nil {
		return command.Fail(fmt.Errorf("stop the workers: %w", stopErr))
	}
	fmt.Fprintln(stderr, "weir dev: stopped")
	return nil
}

// parseQueues parses the --queues list: valid names, duplicates dropped.
func parseQueues(list string) ([]string, error) {
	var qs []string
	for _, q := range strings.Split(list, ",") {
		q = strings.TrimSpace(q)
		if !engine.ValidName(q) {
			return nil, command.Usage(fmt.Errorf("--queues: queue name %q must "+engine.NameRule, q))
		}
		if !slices.Contains(qs, q) {
			qs = append(qs, q)
		}
	}
	return qs, nil
}

// dashboardURL is the dashboard's address on the API's listener addr. A
// token dev generated rides in the fragment (#token=), which the browser
// keeps to itself and the page moves to the tab's sessionStorage; a token
// the user gave is not printed.
func dashboardURL(addr, token string, generated bool) string {
	u := "http://" + addr + "/"
	if generated {
		u += "#token=" + token
	}
	return u
}
