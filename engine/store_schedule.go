package engine

import (
	"context"
	"time"
)

// Scheduler is implemented by stores that keep schedules (both stores of
// this module do): named cron or interval schedules whose ticks enqueue a
// job or submit a workflow, fired by whichever worker is up, exactly once
// per tick (spec/states.md, Schedules). Every method is one atomic step.
type Scheduler interface {
	// PutSchedule creates a schedule or replaces the spec of one, whose
	// next tick becomes p.Next; a replaced schedule keeps its paused flag
	// and its last tick. A namespace holds at most MaxSchedules schedules:
	// one more is a *ValidationError.
	PutSchedule(ctx context.Context, p PutScheduleParams) (PutScheduleResult, error)
	// DeleteSchedule removes a schedule (not the jobs or workflows it
	// started), or returns ErrNotFound.
	DeleteSchedule(ctx context.Context, name string) error
	// PauseSchedule stops a schedule's fires until ResumeSchedule, or
	// returns ErrNotFound. Pausing a paused schedule changes nothing.
	PauseSchedule(ctx context.Context, name string) error
	// ResumeSchedule lets a paused schedule fire again, or returns
	// ErrNotFound; ticks missed meanwhile follow its missed-tick policy.
	ResumeSchedule(ctx context.Context, name string) error
	// GetSchedule returns one schedule, or ErrNotFound.
	GetSchedule(ctx context.Context, name string) (Schedule, error)
	// Schedules lists every schedule, by name, with the store's time at
	// the read (the time its transitions run at), by which a worker plans
	// its fires.
	Schedules(ctx context.Context) (ScheduleList, error)
	// FireSchedule fires one tick of a schedule (FireScheduleParams); use
	// FireDue, which computes the params.
	FireSchedule(ctx context.Context, p FireScheduleParams) (FireScheduleResult, error)
}

// ScheduleWatcher is implemented by stores that tell workers at once when a
// schedule was put or resumed, so that a worker sleeping until its
// earliest known tick reads the schedules again (both stores of this
// module implement it). A notice is a hint: a worker also reads them at
// least every worker.Config.ScheduleRefresh.
type ScheduleWatcher interface {
	// WatchSchedules calls fn once it listens, after every reconnection (a
	// notice sent while it was not listening is lost) and after each put or
	// resume of a schedule, until ctx is done; then it returns ctx's error.
	// fn runs on WatchSchedules's goroutine, one call at a time.
	WatchSchedules(ctx context.Context, fn func()) error
}

// ScheduleList is every schedule of a store, by name, and the store's
// time when it read them.
type ScheduleList struct {
	Schedules []Schedule
	Now       time.Time
}

// PutScheduleParams puts one schedule.
type PutScheduleParams struct {
	Spec ScheduleSpec
	// Next is the first tick to fire, whole milliseconds (FirstTick
	// computes it).
	Next time.Time
}

// PutScheduleResult says what a put did.
type PutScheduleResult struct {
	// Created is false when a schedule of that name was replaced.
	Created bool
	// Rev is the schedule's revision after the put (1 when created).
	Rev int64
}

// FireScheduleParams fires one tick. The call is fenced: it changes
// nothing unless the schedule is at revision Rev, not paused, and its next
// tick is still Tick, so that of several workers firing the same tick one
// does it and the others learn they are late (FireStale).
type FireScheduleParams struct {
	Name string
	Rev  int64
	// Tick is the schedule's next tick as the caller read it (the fence).
	Tick time.Time
	// Fire is the tick whose job or workflow this call starts: Tick on
	// time, the latest missed tick under MissedOnce, zero to start nothing
	// (MissedSkip).
	Fire time.Time
	// Next is the schedule's next tick after this call, computed from its
	// spec; zero when it never ticks again.
	Next time.Time
	// Job is the job a job schedule enqueues for Fire: its spec's Job with
	// the ID TickID(Name, Fire). The store enqueues it in the same step,
	// unless OverlapSkip finds the last fired job not ended.
	Job *JobSpec
	// Submitted is, for a workflow schedule, the ID of the workflow the
	// caller submitted for Fire before this call (TickID(Name, Fire)); the
	// store records it as the last fired.
	Submitted string
	// Overlap, with Fire zero, says the caller found a workflow schedule's
	// last fired workflow not ended under OverlapSkip: the call starts
	// nothing and reports FireOverlap.
	Overlap bool
}

// FireOutcome is what a fire did.
type FireOutcome string

// Fire outcomes.
const (
	// FireFired: the tick's job was enqueued (or its workflow recorded) and
	// the schedule moved to Next.
	FireFired FireOutcome = "fired"
	// FireSkipped: nothing was started (missed ticks under MissedSkip); the
	// schedule moved to Next.
	FireSkipped FireOutcome = "skipped"
	// FireOverlap: nothing was started because the last fired job or
	// workflow had not ended (OverlapSkip); the schedule moved to Next.
	FireOverlap FireOutcome = "overlap"
	// FireStale: the fence did not hold (another fire came first, or the
	// schedule was replaced or paused): nothing changed.
	FireStale FireOutcome = "stale"
)

// FireScheduleResult says what a fire did.
type FireScheduleResult struct {
	Outcome FireOutcome
	// ID is the job or workflow ID of a fired tick.
	ID string
	// Created is false when a job already existed under the tick's ID
	// (nothing was written), and for a workflow schedule.
	Created bool
}
