package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirflow/weir/engine"
)

// WorkerSource lists a namespace's live workers in one call: the stores of
// this module (engine.WorkerRegistry) have this method.
type WorkerSource interface {
	Workers(ctx context.Context) (engine.WorkerList, error)
}

// WorkerCollectorOpts configures a WorkerCollector. The zero value is
// ready to use.
type WorkerCollectorOpts struct {
	// Timeout bounds the store call of one scrape; 0 means 5 seconds.
	Timeout time.Duration
	// ConstLabels are added to every metric.
	ConstLabels prometheus.Labels
}

// WorkerCollector is a prometheus.Collector of a namespace's live worker
// processes (the worker registry: weir workers), read from the store at
// each scrape with one call, bounded (engine.MaxWorkers listed):
//
//	weir_workers                     live worker processes (all of them)
//	weir_workers_by_queue{queue}     live workers that claim from the queue
//	weir_workers_concurrency         their slots: jobs they may run at once
//	weir_workers_running_jobs        jobs they run now
//
// The last three sum over the listed workers (all but past
// engine.MaxWorkers). A scrape whose store call fails reports the error
// to Prometheus (the scrape fails) rather than stale or zero values.
type WorkerCollector struct {
	src                                    WorkerSource
	timeout                                time.Duration
	workers, byQueue, concurrency, running *prometheus.Desc
}

// NewWorkerCollector returns a collector of src's workers, to be
// registered in a prometheus.Registerer.
func NewWorkerCollector(src WorkerSource, opts WorkerCollectorOpts) *WorkerCollector {
	t := opts.Timeout
	if t <= 0 {
		t = 5 * time.Second
	}
	return &WorkerCollector{
		src:     src,
		timeout: t,
		workers: prometheus.NewDesc("weir_workers",
			"Live worker processes of the namespace (registered, their lease from their last heartbeat not passed), at the scrape.",
			nil, opts.ConstLabels),
		byQueue: prometheus.NewDesc("weir_workers_by_queue",
			"Live worker processes that claim from the queue.",
			[]string{"queue"}, opts.ConstLabels),
		concurrency: prometheus.NewDesc("weir_workers_concurrency",
			"Jobs the live workers may run at once, summed (their Concurrency).",
			nil, opts.ConstLabels),
		running: prometheus.NewDesc("weir_workers_running_jobs",
			"Jobs the live workers run, summed, as of their last heartbeat.",
			nil, opts.ConstLabels),
	}
}

// Describe sends the collector's metric descriptions.
func (c *WorkerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.workers
	ch <- c.byQueue
	ch <- c.concurrency
	ch <- c.running
}

// Collect reads the workers from the store and sends their metrics.
func (c *WorkerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	l, err := c.src.Workers(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.workers, err)
		return
	}
	queues := map[string]int{}
	var conc, running int
	for _, w := range l.Workers {
		conc += w.Concurrency
		running += w.Running
		for _, q := range w.Queues {
			queues[q.Name]++
		}
	}
	ch <- prometheus.MustNewConstMetric(c.workers, prometheus.GaugeValue, float64(l.Total))
	for q, n := range queues {
		ch <- prometheus.MustNewConstMetric(c.byQueue, prometheus.GaugeValue, float64(n), q)
	}
	ch <- prometheus.MustNewConstMetric(c.concurrency, prometheus.GaugeValue, float64(conc))
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(running))
}
