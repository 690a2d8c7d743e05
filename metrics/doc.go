// Package metrics exposes weir to Prometheus: a QueueCollector of a
// namespace's queues (jobs ready, delayed and running; paused; failed and
// cancelled; the age of the next ready job) and workflows by state, and a
// WorkerCollector of its live worker processes, read from the store at
// each scrape, and WorkerMetrics, which a worker feeds with
// its events (attempts by queue and outcome, their durations, promotions,
// workflows ended, queue wait and promotion latency by the store's clock).
// Both are prometheus.Collectors that a program registers in its own
// registry:
//
//	wm := metrics.NewWorkerMetrics(metrics.WorkerMetricsOpts{})
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(metrics.NewQueueCollector(c, metrics.QueueCollectorOpts{}), wm)
//	w := worker.New(store, worker.Config{Observer: wm.Observe})
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// The metric names and labels are listed on each type; spec/metrics.md
// says what each counts.
package metrics
