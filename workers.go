package weir

import "time"

// WorkerInfo is one live worker process as it registered itself in the
// store (spec/keys.md, Keys of the worker registry): what it is, what it
// serves and what it runs now. A worker writes it at its start and at every
// heartbeat, and removes it when it stops; one that dies leaves the list
// once Expires passes (its lease, from its last heartbeat).
type WorkerInfo struct {
	// ID names the worker: unique per start of a worker.Worker,
	// "<host>-<pid>-<random>" unless its Config.ID sets it.
	ID      string
	Host    string
	PID     int
	Version string // of the weir module the process was built with
	// Queues are the queues it claims from, by weight, highest first.
	Queues         []WorkerQueue
	StrictPriority bool
	Concurrency    int
	// Started is when the worker started (its own clock).
	Started time.Time
	// LastHeartbeat is when the store last heard from it, and Expires when
	// it leaves the list unless it sends another (both by the store's
	// clock).
	LastHeartbeat time.Time
	Expires       time.Time
	// Running is how many jobs it runs now; RunningJobs the IDs of the
	// first of them, by ID, at most engine.MaxWorkerJobs.
	Running     int
	RunningJobs []string
}

// WorkerQueue is one queue of a worker, with its weight.
type WorkerQueue struct {
	Name   string
	Weight int
}
