package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/weirflow/weir"
)

// Plan is a workflow as submitted: its ID, its tasks in plan order and its
// options. Dependencies name tasks listed earlier, so a plan is acyclic.
type Plan struct {
	ID    string
	Tasks []TaskSpec
	// FailFast: the first unabsorbed failure cancels every task that has not
	// started, except Always tasks.
	FailFast bool
	// UndoOnCancel is what Cancel does when the caller does not say: run the
	// undos of completed tasks (true) or not. Fixed at submit. The client
	// package defaults it to true.
	UndoOnCancel bool
	// StartAt, when set and later than the submit, holds the workflow's
	// roots in their queues' delayed sets until then (plus each root's
	// Delay): the workflow is running, and nothing of it runs before.
	StartAt time.Time
	// Deadline, when set, cancels the workflow as Cancel does (undo per
	// UndoOnCancel; unstarted tasks end with reason "deadline") once the
	// store's clock passes it, at the first sweep of its first task's
	// queue after then (spec/states.md, Deadline). It must be after the
	// submit's now. DeadlineIn is the same relative to the submit, by the
	// store's clock (whole ms in (0, 100 years]); at most one of the two.
	Deadline   time.Time
	DeadlineIn time.Duration
	// Webhook, when set, enqueues a delivery job as the workflow ends
	// (spec/states.md, Webhooks).
	Webhook *weir.Webhook
}

// TaskSpec is one node of a plan.
type TaskSpec struct {
	Name    string
	Queue   string
	Payload []byte
	// After names the tasks this one depends on; each must be listed earlier.
	After []string
	// Always: run once all dependencies ended, whether they completed,
	// failed or were cancelled.
	Always bool
	// OnFailure (with Always, and at least one dependency) runs the task
	// only when some dependency did not complete (failed or was
	// cancelled): a catch callback. When every dependency completed it
	// ends cancelled with error ReasonTextNoFailure, without running.
	OnFailure bool
	// NoAbsorb (with Always) keeps the task from absorbing its
	// dependencies' failures: it runs after them as any Always task does,
	// but a dependency whose dependents are all Always still fails the
	// workflow when one of them is NoAbsorb. A group's Catch and Finally
	// are NoAbsorb unless the group allows failures (spec/states.md,
	// Absorption).
	NoAbsorb bool
	// Undo is the compensation job run if the workflow compensates after this
	// task completed. It runs with the task's priority and retry policy.
	Undo     *UndoSpec
	Priority int
	// MaxAttempts counts every attempt, the first included; 0 means 1.
	MaxAttempts int
	// Backoff is the base retry delay: attempt n waits Backoff·2^(n-1),
	// capped at MaxBackoff. 0 means DefaultBackoff.
	Backoff time.Duration
	// Timeout bounds one attempt; 0 means none (the lease still applies).
	Timeout time.Duration
	// MaxExpiries is how many times the job's lease may expire (its worker
	// was killed, or lost Redis for a lease's length) without that costing
	// an attempt: the job is queued again at once, reason lease_expired.
	// Past it, an expiry is a failed attempt, retried while attempts
	// remain. 0 means DefaultMaxExpiries; NoExpiries (-1) means none.
	MaxExpiries int
	// Key is the task's concurrency key (a tenant, a customer): empty for
	// none, else a name (ValidName; spec/states.md, Concurrency keys).
	// The task's undo job runs without one.
	Key string
	// Signal makes the task a signal task: no worker runs it; once its
	// dependencies ended it is Open until a Signal completes or fails it
	// (spec/states.md, Signal). Queue still names a queue: an open task
	// with a timeout waits in its delayed set.
	Signal bool
	// SignalTimeout, for a signal task, fails it with reason "timeout"
	// when no signal came this long after it opened (whole ms; 0: never).
	SignalTimeout time.Duration
	// Delay holds the task in its queue's delayed set this long after its
	// dependencies ended (a root: after the submit, or StartAt) before it
	// is ready (whole ms; 0: none). Not on a signal task.
	Delay time.Duration
}

// UndoSpec is a task's compensation job.
type UndoSpec struct {
	Queue   string
	Payload []byte
}

// JobSpec is a plain job (one outside any workflow).
type JobSpec struct {
	// ID is given by the caller (the client generates a random one when the
	// user gives none); a second enqueue with the same ID and spec is a
	// success with no effect.
	ID       string
	Queue    string
	Payload  []byte
	Priority int
	// RunAt delays the first attempt; zero means now.
	RunAt time.Time
	// Delay delays the first attempt by this long after the store's now
	// when the job is written (rounded up to whole milliseconds), so that
	// the producer's clock does not matter; a repeated enqueue changes
	// nothing. At most one of RunAt and Delay is set.
	Delay       time.Duration
	MaxAttempts int
	Backoff     time.Duration
	Timeout     time.Duration
	// MaxExpiries is how many times the job's lease may expire (its worker
	// was killed, or lost Redis for a lease's length) without that costing
	// an attempt: the job is queued again at once, reason lease_expired.
	// Past it, an expiry is a failed attempt, retried while attempts
	// remain. 0 means DefaultMaxExpiries; NoExpiries (-1) means none.
	MaxExpiries int
	// Unique, when set, makes the job unique in its queue: an enqueue whose
	// key is held by another job writes nothing and names that job
	// (EnqueueResult.Existing).
	Unique *Unique
	// Key is the job's concurrency key (a tenant, a customer): empty for
	// none, else a name (ValidName). Claims rotate across a queue's
	// keys and hold each to the queue's per-key limit (LimitKeys;
	// spec/states.md, Concurrency keys).
	Key string
}

// Unique is a plain job's uniqueness (spec/states.md, Unique jobs).
type Unique struct {
	// Key identifies the job among its queue's jobs (any string of at most
	// MaxUniqueKey bytes); empty means its payload.
	Key string
	// For, when > 0, holds the key for that long after the enqueue that
	// took it (rounded up to whole milliseconds), whether or not the job
	// has ended meanwhile; 0 holds it until the job ends. Either way the
	// key is free once the job's record is gone (retention).
	For time.Duration
}

// MaxUniqueKey bounds Unique.Key in bytes.
const MaxUniqueKey = 1024

// UniqueDigest names a unique job's key in every store: hex SHA-256 of its
// queue and its Unique.Key, or of its queue and payload when the key is
// empty (the two never collide). It is "" for a job that is not unique.
func UniqueDigest(s JobSpec) string {
	if s.Unique == nil {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(s.Queue))
	if s.Unique.Key != "" {
		h.Write([]byte{0, 'k'})
		h.Write([]byte(s.Unique.Key))
	} else {
		h.Write([]byte{0, 'p'})
		h.Write(s.Payload)
	}
	return hex.EncodeToString(h.Sum(nil))
}
