package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirflow/weir/worker"
)

// WorkerMetricsOpts configures WorkerMetrics. The zero value is ready to
// use.
type WorkerMetricsOpts struct {
	// Buckets of the attempt duration histogram, in seconds; nil means
	// 1 ms to about 4.4 minutes, each 4× the one before.
	Buckets []float64
	// ConstLabels are added to every metric (e.g. the worker's name).
	ConstLabels prometheus.Labels
	// QueueWaitBuckets are the buckets of the queue wait and promotion
	// latency histograms, in seconds; nil means 1 ms to about 70 minutes,
	// each 4× the one before.
	QueueWaitBuckets []float64
}

// WorkerMetrics counts what a worker does, fed by its events: pass
// Observe as worker.Config.Observer (or call it from an Observer of your
// own). It is a prometheus.Collector of
//
//	weir_worker_attempts_started_total{queue}
//	weir_worker_attempts_total{queue, outcome}              outcome: succeeded, retried,
//	                                                        failed, cancelled, released, lease_lost
//	weir_worker_attempt_duration_seconds{queue, outcome}    a histogram of the same attempts
//	weir_worker_expired_leases_total{outcome}               leases of other workers this worker's
//	                                                        sweep expired: retried, failed, cancelled
//	weir_worker_promoted_total{queue}                       jobs its finishes pushed (dependents, undos)
//	weir_worker_workflows_ended_total{state}                workflows its finishes ended
//	weir_worker_queue_wait_seconds{queue}                   a histogram of the time from when each job
//	                                                        this worker started became ready (its push,
//	                                                        or its due time) to its claim
//	weir_worker_promotion_latency_seconds{queue}            a histogram of the time from a dependency's end
//	                                                        to the push of the dependent it promoted, for
//	                                                        each promoted task this worker started
//
// One WorkerMetrics may observe several workers of a process; it is safe
// for concurrent use.
type WorkerMetrics struct {
	started  *prometheus.CounterVec
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	expired  *prometheus.CounterVec
	promoted *prometheus.CounterVec
	ended    *prometheus.CounterVec
	wait     *prometheus.HistogramVec
	promo    *prometheus.HistogramVec
}

// NewWorkerMetrics returns worker metrics at zero, to be registered in a
// prometheus.Registerer.
func NewWorkerMetrics(opts WorkerMetricsOpts) *WorkerMetrics {
	b := opts.Buckets
	if b == nil {
		b = prometheus.ExponentialBuckets(0.001, 4, 10)
	}
	wb := opts.QueueWaitBuckets
	if wb == nil {
		wb = prometheus.ExponentialBuckets(0.001, 4, 12)
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: opts.ConstLabels}, labels)
	}
	return &WorkerMetrics{
		started: counter("weir_worker_attempts_started_total",
			"Attempts this worker started, by queue.", "queue"),
		attempts: counter("weir_worker_attempts_total",
			"Attempts of this worker that ended, by queue and outcome (succeeded, retried, failed, cancelled, released, lease_lost).",
			"queue", "outcome"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "weir_worker_attempt_duration_seconds",
			Help:        "How long this worker's attempts ran, by queue and outcome.",
			Buckets:     b,
			ConstLabels: opts.ConstLabels,
		}, []string{"queue", "outcome"}),
		expired: counter("weir_worker_expired_leases_total",
			"Leases of crashed or stalled workers that this worker's sweep expired, by what became of the job (retried, failed, cancelled).",
			"outcome"),
		promoted: counter("weir_worker_promoted_total",
			"Jobs this worker's finishes pushed into their queues (dependents whose dependencies all ended, undo jobs), by queue.",
			"queue"),
		ended: counter("weir_worker_workflows_ended_total",
			"Workflows this worker's finishes ended, by end state.", "state"),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "weir_worker_queue_wait_seconds",
			Help:        "Time from when each job this worker started became ready (enqueued, promoted, retried, or due) to its claim, by queue.",
			Buckets:     wb,
			ConstLabels: opts.ConstLabels,
		}, []string{"queue"}),
		promo: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "weir_worker_promotion_latency_seconds",
			Help:        "Time from a dependency's end to the push of the dependent task it promoted (0 when the same step did both), for the promoted tasks this worker started, by the dependent's queue.",
			Buckets:     wb,
			ConstLabels: opts.ConstLabels,
		}, []string{"queue"}),
	}
}

// Observe counts one worker event. It has worker.Observer's signature.
func (m *WorkerMetrics) Observe(e worker.Event) {
	switch e.Kind {
	case worker.EventStarted:
		m.started.WithLabelValues(e.Queue).Inc()
		if !e.ReadyAt.IsZero() {
			m.wait.WithLabelValues(e.Queue).Observe(e.QueueWait.Seconds())
		}
		if !e.PromotedAfter.IsZero() {
			m.promo.WithLabelValues(e.Queue).Observe(e.PromotionLatency.Seconds())
		}
	case worker.EventPromoted:
		m.promoted.WithLabelValues(e.Queue).Inc()
	case worker.EventWorkflowEnded:
		m.ended.WithLabelValues(string(e.WorkflowState)).Inc()
	case worker.EventSucceeded, worker.EventRetried, worker.EventFailed, worker.EventCancelled,
		worker.EventReleased, worker.EventLeaseLost:
		if e.Queue == "" {
			// the worker's sweep expired a lease of another worker: the
			// event names the job only
			m.expired.WithLabelValues(string(e.Kind)).Inc()
			return
		}
		m.attempts.WithLabelValues(e.Queue, string(e.Kind)).Inc()
		m.duration.WithLabelValues(e.Queue, string(e.Kind)).Observe(e.Duration.Seconds())
	}
}

// Describe sends the descriptions of every metric.
func (m *WorkerMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

// Collect sends every metric's current values.
func (m *WorkerMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

func (m *WorkerMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.started, m.attempts, m.duration, m.expired, m.promoted, m.ended, m.wait, m.promo}
}
