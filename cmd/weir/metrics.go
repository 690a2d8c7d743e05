package main

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weirflow/weir/metrics"
)

// metricsHandler is the GET /metrics of serve and dev: the store's queues,
// the workers of wm when it is not nil (dev), and this process's Go and
// process metrics, in a registry of its own.
func metricsHandler(src metrics.QueueSource, wm *metrics.WorkerMetrics) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		metrics.NewQueueCollector(src, metrics.QueueCollectorOpts{}),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if wm != nil {
		reg.MustRegister(wm)
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
