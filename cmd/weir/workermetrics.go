package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/metrics"
)

// metricsEnv is the environment variable of weir worker's --metrics.
const metricsEnv = "WEIR_METRICS_ADDR"

// workerMetricsFlag is weir worker's --metrics: the address on which it
// serves GET /metrics (spec/metrics.md, weir worker), else
// $WEIR_METRICS_ADDR; empty: none.
type workerMetricsFlag struct{ addr string }

func (f *workerMetricsFlag) register(c *cobra.Command) {
	c.Flags().StringVar(&f.addr, "metrics", "", "serve Prometheus metrics (GET /metrics, no token) on this host:port: its workers' counts, the namespace's queues and workflows; default $"+metricsEnv+", else none")
}

// start listens on the address of --metrics, else $WEIR_METRICS_ADDR, and
// serves GET /metrics of wm, src's queues and workflows and this process
// until the returned function is called, which shuts that server down
// (a scrape in flight finishes) and returns once it has: the worker's
// counts stay readable while it drains. With neither set it serves
// nothing, wm is nil and the function returns nil at once. It prints
// WEIR_METRICS_URL=<url> on stdout once listening.
func (f *workerMetricsFlag) start(c *cobra.Command, src metrics.QueueSource, stdout io.Writer) (*metrics.WorkerMetrics, func() error, error) {
	addr, from := f.addr, "--metrics"
	if !c.Flags().Changed("metrics") {
		addr, from = os.Getenv(metricsEnv), metricsEnv
	}
	if addr == "" {
		return nil, func() error { return nil }, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, nil, command.Usage(fmt.Errorf("%s %q: want host:port (e.g. 127.0.0.1:9464; port 0 picks a free one): %w", from, addr, err))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, command.Fail(fmt.Errorf("%s: %w", from, err))
	}
	wm := metrics.NewWorkerMetrics(metrics.WorkerMetricsOpts{})
	h := metricsHandler(src, wm)
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "GET /metrics only", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveAPI(ctx, ln, mux) }()
	fmt.Fprintf(stdout, "WEIR_METRICS_URL=http://%s/metrics\n", ln.Addr())
	return wm, func() error {
		cancel()
		return <-done
	}, nil
}
