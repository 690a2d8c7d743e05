package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/weirflow/weir"
)

// QueueSource lists a namespace's queues with their counts in one call:
// *client.Client and every client.Store have this method.
type QueueSource interface {
	Queues(ctx context.Context) ([]weir.QueueInfo, error)
}

// QueueCollectorOpts configures a QueueCollector. The zero value is ready
// to use.
type QueueCollectorOpts struct {
	// Timeout bounds the store call of one scrape; 0 means 5 seconds.
	Timeout time.Duration
	// ConstLabels are added to every metric (e.g. the namespace, when one
	// process collects several).
	ConstLabels prometheus.Labels
}

// QueueCollector is a prometheus.Collector of a namespace's queues, read
// from the store at each scrape with one call (the same as weir queues):
//
//	weir_queue_jobs{queue, state}  jobs ready, delayed and running
//	weir_queue_paused{queue}       1 while the queue is paused, else 0
//
// A scrape whose store call fails reports the error to Prometheus (the
// scrape fails) rather than stale or zero counts.
type QueueCollector struct {
	src     QueueSource
	timeout time.Duration
	jobs    *prometheus.Desc
	paused  *prometheus.Desc
}

// NewQueueCollector returns a collector of src's queues, to be registered
// in a prometheus.Registerer.
func NewQueueCollector(src QueueSource, opts QueueCollectorOpts) *QueueCollector {
	t := opts.Timeout
	if t <= 0 {
		t = 5 * time.Second
	}
	return &QueueCollector{
		src:     src,
		timeout: t,
		jobs: prometheus.NewDesc("weir_queue_jobs",
			"Jobs of a queue by state (ready, delayed, running), as the store holds them at the scrape.",
			[]string{"queue", "state"}, opts.ConstLabels),
		paused: prometheus.NewDesc("weir_queue_paused",
			"1 while the queue is paused, else 0.",
			[]string{"queue"}, opts.ConstLabels),
	}
}

// Describe sends the collector's two metric descriptions.
func (c *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.paused
}

// Collect reads the queues from the store and sends their metrics.
func (c *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	qs, err := c.src.Queues(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
		return
	}
	for _, q := range qs {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(q.Ready), q.Name, "ready")
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(q.Delayed), q.Name, "delayed")
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(q.Running), q.Name, "running")
		paused := 0.0
		if q.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, paused, q.Name)
	}
}
