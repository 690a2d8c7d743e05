package main

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weirflow/weir/metrics"
)

// metricsHandler is the GET /metrics of serve and dev: the store's queues
// and live workers, the workers of wm when it is not nil (dev), and this
// process's Go and process metrics, in a registry of its own.
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
	// the namespace's live workers (weir workers), when the store keeps them
	if ws, ok := src.(metrics.WorkerSource); ok {
		reg.MustRegister(metrics.NewWorkerCollector(ws, metrics.WorkerCollectorOpts{}))
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
