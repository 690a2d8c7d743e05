package worker

import (
	"log/slog"
	"time"

	"github.com/weirflow/weir"
)

// Config configures a Worker. Zero fields take the defaults below.
type Config struct {
	// Queues maps the queues to claim from to their weights. Every queue
	// listed needs a handler. Nil means every queue with a handler, weight 1.
	// Each claim tries the queues in an order drawn at random by weight
	// (a queue of weight 3 comes first three times as often as one of
	// weight 1), or, with StrictPriority, by weight, highest first (then by
	// name), so a queue is served only when those above it are empty.
	Queues         map[string]int
	StrictPriority bool
	// Concurrency is how many jobs run at once. Default 10.
	Concurrency int
	// Lease is how long the store holds a claimed job for this worker
	// without news from it; heartbeats extend it. A worker that dies loses
	// its jobs to another after at most this long. Default 30s.
	Lease time.Duration
	// HeartbeatInterval is how often the worker extends the leases of all
	// its running jobs, in one store call, and learns which were cancelled.
	// It is also how soon a cancel reaches a running handler. Default
	// Lease/3.
	HeartbeatInterval time.Duration
	// SweepInterval is how often (with ±20% jitter) the worker asks the
	// store to expire overdue leases and ready the delayed jobs that came
	// due, in every queue. Default 1s.
	SweepInterval time.Duration
	// ShutdownTimeout is how long Run lets running jobs finish after its
	// context is done, before cancelling them. Default 30s.
	ShutdownTimeout time.Duration
	// FinishCalls is how many finish calls (each stores a batch of
	// outcomes and claims jobs for the slots it frees) the worker keeps in
	// flight at once; outcomes that come while they run go out together in
	// the next call. Default 2: a call's round trip overlaps with the
	// filling of the next batch. 1 makes fewer, larger calls, which suits a
	// server whose every call costs far more than a job in it, such as the
	// embedded miniredis (a new Lua state a call): weir run, weir dev and
	// weir bench use 1 for their workers on it.
	FinishCalls int
	// Limits are the store's limits (result size, backoff cap, batch size).
	// Zero means the store's own limits when it reports them (both stores of
	// this module do, through their Config method), else
	// weir.DefaultLimits(). Give them only to override what the store says.
	Limits weir.Limits
	// Middleware wraps every handler, the first outermost.
	Middleware []Middleware
	// Observer, when set, receives the worker's events.
	Observer Observer
	// Logger gets the store errors the worker retries. Default
	// slog.Default().
	Logger *slog.Logger
	// Schedules makes the worker fire the store's schedules (both stores
	// of this module keep schedules; Run returns an error at once on a
	// store that does not): it sleeps until the earliest next
	// tick, fires every due schedule (each tick once, however many
	// workers fire), and reads the schedules again at least every
	// ScheduleRefresh, so that a schedule added or resumed elsewhere is
	// seen within that time. Any number of workers may do it.
	Schedules bool
	// ScheduleRefresh bounds how long a worker firing schedules goes
	// without reading them again. Default 10s. Ticks come by the store's
	// clock, not the worker's.
	ScheduleRefresh time.Duration
	// ID names the worker in the store's worker registry (weir workers,
	// client.Client.Workers): ^[A-Za-z0-9_.-]{1,128}$, unique among the
	// live workers of a namespace. Default "<host>-<pid>-<8 hex>", drawn
	// by New.
	ID string
}

// claimWait bounds how long one blocking claim waits for a job before the
// worker claims again (a claim returns as soon as a job comes).
const claimWait = 5 * time.Second
