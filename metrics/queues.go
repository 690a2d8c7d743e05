package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/weirflow/weir"
)

// QueueSource lists a namespace's queues with their counts in one call:
// *client.Client and every client.Store have this method.
type QueueSource interface {
	Queues(ctx context.Context) ([]weir.QueueInfo, error)
}

// StatsSource reads a namespace's stats (weir.Stats) in one call:
// *client.Client, *redisstore.Store and *memstore.Store have this method.
// A QueueCollector whose source also has it reports the series that need
// it.
type StatsSource interface {
	Stats(ctx context.Context) (weir.Stats, error)
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

// QueueCollector is a prometheus.Collector of a namespace's queues and
// workflows, read from the store at each scrape with one call (Stats when
// the source has it, else Queues, the same as weir queues):
//
//	weir_queue_jobs{queue, state}                   jobs ready, delayed and running
//	weir_queue_paused{queue}                        1 while the queue is paused, else 0
//	weir_queue_ended_jobs{queue, state}             jobs that ended failed or cancelled
//	                                                within retention (Stats only)
//	weir_queue_oldest_ready_age_seconds{queue}      how long the job a claim takes next
//	                                                has been ready; 0 when none is (Stats only)
//	weir_workflows{state}                           workflows by state (Stats only)
//
// A scrape whose store call fails reports the error to Prometheus (the
// scrape fails) rather than stale or zero counts.
type QueueCollector struct {
	src       QueueSource
	timeout   time.Duration
	jobs      *prometheus.Desc
	paused    *prometheus.Desc
	ended     *prometheus.Desc
	age       *prometheus.Desc
	workflows *prometheus.Desc
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
		ended: prometheus.NewDesc("weir_queue_ended_jobs",
			"Jobs of a queue that ended failed or cancelled (state) within retention, as the queue's ended lists hold them at the scrape.",
			[]string{"queue", "state"}, opts.ConstLabels),
		age: prometheus.NewDesc("weir_queue_oldest_ready_age_seconds",
			"How long the ready job a claim takes next from the queue has been ready, by the store's clock (with one priority, the oldest ready job); 0 when none is ready.",
			[]string{"queue"}, opts.ConstLabels),
		workflows: prometheus.NewDesc("weir_workflows",
			"Workflows the store holds by state at the scrape (ended ones until their retention passed).",
			[]string{"state"}, opts.ConstLabels),
	}
}

// Describe sends the collector's metric descriptions.
func (c *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.paused
	ch <- c.ended
	ch <- c.age
	ch <- c.workflows
}

// Collect reads the queues from the store and sends their metrics.
func (c *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if ss, ok := c.src.(StatsSource); ok {
		st, err := ss.Stats(ctx)
		if err == nil {
			c.collectStats(ch, st)
			return
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			ch <- prometheus.NewInvalidMetric(c.jobs, err)
			return
		}
	}
	qs, err := c.src.Queues(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
		return
	}
	c.collectQueues(ch, qs)
}

// collectStats sends the metrics of st.
func (c *QueueCollector) collectStats(ch chan<- prometheus.Metric, st weir.Stats) {
	qs := make([]weir.QueueInfo, len(st.Queues))
	for i, q := range st.Queues {
		qs[i] = q.QueueInfo
		ch <- prometheus.MustNewConstMetric(c.ended, prometheus.GaugeValue, float64(q.Failed), q.Name, "failed")
		ch <- prometheus.MustNewConstMetric(c.ended, prometheus.GaugeValue, float64(q.Cancelled), q.Name, "cancelled")
		age := 0.0
		if !q.HeadReadyAt.IsZero() {
			age = max(st.Time.Sub(q.HeadReadyAt).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age, q.Name)
	}
	c.collectQueues(ch, qs)
	for _, s := range weir.WorkflowStates() {
		ch <- prometheus.MustNewConstMetric(c.workflows, prometheus.GaugeValue, float64(st.Workflows[s]), string(s))
	}
}

// collectQueues sends the metrics of the queues qs.
func (c *QueueCollector) collectQueues(ch chan<- prometheus.Metric, qs []weir.QueueInfo) {
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
