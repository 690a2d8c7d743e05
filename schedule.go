package weir

import "time"

// MissedPolicy says what a schedule's fire does when it comes after the
// schedule's following tick too (the ticks between were missed: every
// worker was down, or the schedule was paused).
type MissedPolicy string

// Missed-tick policies.
const (
	// MissedSkip fires nothing for missed ticks: the schedule moves on to
	// its first tick after now. It is the default.
	MissedSkip MissedPolicy = "skip"
	// MissedOnce fires once, for the latest missed tick, then moves on to
	// the first tick after now.
	MissedOnce MissedPolicy = "once"
)

// OverlapPolicy says what a schedule's tick does while the job or workflow
// of its last fired tick has not ended.
type OverlapPolicy string

// Overlap policies.
const (
	// OverlapAllow fires every tick, whatever the last one is doing. It is
	// the default.
	OverlapAllow OverlapPolicy = "allow"
	// OverlapSkip fires nothing while the last fired job or workflow has not
	// ended; the schedule moves on to its next tick.
	OverlapSkip OverlapPolicy = "skip"
)

// Schedule is a snapshot of a stored schedule: when it ticks, what each
// tick starts, and where its ticks stand.
type Schedule struct {
	Name string
	// Cron and TZ, or Every: when it ticks.
	Cron  string
	TZ    string
	Every time.Duration
	// Queue is the queue of the job a job schedule's ticks enqueue; empty
	// for a workflow schedule.
	Queue string
	// Tasks are the task names of a workflow schedule's plan, in plan
	// order; nil for a job schedule.
	Tasks   []string
	Missed  MissedPolicy
	Overlap OverlapPolicy
	// Paused schedules do not fire; on resume, ticks missed meanwhile follow
	// Missed.
	Paused bool
	// Next is the tick it fires next.
	Next time.Time
	// LastTick is the last tick that fired (zero before the first), and
	// LastID the ID of the job or workflow it started.
	LastTick time.Time
	LastID   string
}
