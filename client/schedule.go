package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// ScheduleParams defines a schedule for PutSchedule: when it ticks (Cron,
// or Every) and what each tick starts (Job or Workflow: exactly one). The
// job or workflow of a tick has the ID "<Name>.<unix seconds of the
// tick>" (TickID), or "<Name>@<unix seconds>" in a namespace of several
// partitions (TickIDIn), so a tick starts it once however many workers
// fire the schedule.
type ScheduleParams struct {
	// Name identifies the schedule, a name (engine.ValidName). Putting a
	// name that exists replaces its spec.
	Name string
	// Cron is a cron expression: five fields (minute, hour, day of month,
	// month, day of week), six with seconds first, or a descriptor
	// (@hourly, @daily, @every 90m, ...; @every in whole seconds). TZ is
	// the IANA zone it is read in; empty is UTC, and "Local" (each
	// worker's own zone) is refused.
	Cron string
	TZ   string
	// Every ticks at each multiple of Every since the Unix epoch (whole
	// seconds).
	Every time.Duration
	// Job is the job each tick enqueues (ScheduledJob builds one); its ID
	// is the tick's.
	Job *TickJob
	// Workflow is the workflow each tick submits, built with NewWorkflow
	// (without WorkflowID: its ID is the tick's) and AddTask; the builder
	// is only read. Its options (FailFast, UndoOnCancel, StartAt, Deadline,
	// DeadlineIn, Webhook) are each tick's.
	Workflow *Workflow
	// Missed says what a fire late by more than one tick does:
	// weir.MissedSkip (the default) starts nothing, weir.MissedOnce starts
	// the latest missed tick's; both go on with the first tick after now.
	Missed weir.MissedPolicy
	// Overlap says what a tick does while the last tick's job or workflow
	// has not ended: weir.OverlapAllow (the default) starts it anyway,
	// weir.OverlapSkip starts nothing.
	Overlap weir.OverlapPolicy
	// Start: the first tick is the first after Start; zero means now.
	Start time.Time
}

// TickJob is the job a schedule enqueues at each tick (ScheduledJob
// builds one).
type TickJob struct{ spec engine.JobSpec }

// ScheduledJob builds the job a schedule enqueues at each tick: payload
// encoded for queue q, with opts (ID, RunAt and Delay do not apply: the
// ID is the tick's and the job runs at its tick).
func ScheduledJob[P, R any](q Queue[P, R], payload P, opts ...JobOption) (*TickJob, error) {
	b, err := q.EncodePayload(payload)
	if err != nil {
		return nil, err
	}
	spec := engine.JobSpec{Queue: q.name, Payload: b}
	for _, o := range opts {
		if o.job != nil {
			o.job(&spec)
		}
	}
	if spec.ID != "" || !spec.RunAt.IsZero() || spec.Delay != 0 {
		return nil, &weir.BuildError{Problem: "a scheduled job takes its ID and its run time from its tick: leave out ID, RunAt and Delay", Err: weir.ErrInvalid}
	}
	return &TickJob{spec: spec}, nil
}

// scheduler is the store's engine.Scheduler, or an error saying it has none.
func (c *Client) scheduler() (engine.Scheduler, error) {
	sc, ok := c.store.(engine.Scheduler)
	if !ok {
		return nil, fmt.Errorf("weir: the store (%T) keeps no schedules", c.store)
	}
	return sc, nil
}

// PutSchedule creates a schedule, or replaces the spec of the one of that
// name (which keeps its paused flag), and returns it: the verb of the
// store (engine.Scheduler), of REST (PUT /v1/schedules/{name}) and of the
// CLI (weir schedule put). Its first tick is the first after p.Start (now
// when zero). Workers with worker.Config.Schedules fire it.
func (c *Client) PutSchedule(ctx context.Context, p ScheduleParams) (weir.Schedule, error) {
	sc, err := c.scheduler()
	if err != nil {
		return weir.Schedule{}, err
	}
	spec := engine.ScheduleSpec{Name: p.Name, Cron: p.Cron, TZ: p.TZ, Every: p.Every, Missed: p.Missed, Overlap: p.Overlap}
	if p.Job != nil {
		job := p.Job.spec
		spec.Job = &job
	}
	if p.Workflow != nil {
		plan, err := p.Workflow.schedulePlan()
		if err != nil {
			return weir.Schedule{}, err
		}
		spec.Plan = &plan
	}
	start := p.Start
	if start.IsZero() {
		start = time.Now()
	}
	s, err := engine.PutSchedule(ctx, sc, spec, start)
	if err != nil {
		return weir.Schedule{}, err
	}
	return s.Snapshot(), nil
}

// schedulePlan returns the workflow's plan, without fixing it.
func (w *Workflow) schedulePlan() (engine.Plan, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.opened {
		return engine.Plan{}, &weir.BuildError{Problem: "a workflow opened by ID has no plan to schedule", Err: weir.ErrInvalid}
	}
	if w.err != nil {
		return engine.Plan{}, w.err
	}
	if w.idGiven {
		return engine.Plan{}, &weir.BuildError{Problem: "a scheduled workflow takes its ID from its tick: leave out WorkflowID", Err: weir.ErrInvalid}
	}
	p := engine.Plan{ID: w.id, FailFast: w.failFast, UndoOnCancel: w.undoOnCancel, Tasks: make([]engine.TaskSpec, len(w.nodes)),
		StartAt: w.startAt, Deadline: w.deadline, DeadlineIn: w.deadlineIn, Webhook: cloneWebhook(w.webhook)}
	for i, n := range w.nodes {
		p.Tasks[i] = n.spec
	}
	return p, nil
}

// DeleteSchedule removes a schedule (not the jobs and workflows it
// started); weir.ErrNotFound when there is none of that name.
func (c *Client) DeleteSchedule(ctx context.Context, name string) error {
	sc, err := c.scheduler()
	if err != nil {
		return err
	}
	return sc.DeleteSchedule(ctx, name)
}

// PauseSchedule stops a schedule's ticks until ResumeSchedule.
func (c *Client) PauseSchedule(ctx context.Context, name string) error {
	sc, err := c.scheduler()
	if err != nil {
		return err
	}
	return sc.PauseSchedule(ctx, name)
}

// ResumeSchedule lets a paused schedule tick again; the ticks it missed
// meanwhile follow its missed-tick policy.
func (c *Client) ResumeSchedule(ctx context.Context, name string) error {
	sc, err := c.scheduler()
	if err != nil {
		return err
	}
	return sc.ResumeSchedule(ctx, name)
}

// GetSchedule returns one schedule, or weir.ErrNotFound.
func (c *Client) GetSchedule(ctx context.Context, name string) (weir.Schedule, error) {
	sc, err := c.scheduler()
	if err != nil {
		return weir.Schedule{}, err
	}
	s, err := sc.GetSchedule(ctx, name)
	if err != nil {
		return weir.Schedule{}, err
	}
	return s.Snapshot(), nil
}

// Schedules lists every schedule, by name.
func (c *Client) Schedules(ctx context.Context) ([]weir.Schedule, error) {
	sc, err := c.scheduler()
	if err != nil {
		return nil, err
	}
	l, err := sc.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]weir.Schedule, len(l.Schedules))
	for i, s := range l.Schedules {
		out[i] = s.Snapshot()
	}
	return out, nil
}

// TickID is the ID of the job or workflow that schedule name starts for
// its tick t in a namespace of one partition: "<name>.<unix seconds of
// t>". Open it with OpenJob or OpenWorkflow.
func TickID(name string, t time.Time) string { return engine.TickID(name, t) }

// TickIDIn is the ID of the job or workflow that schedule name starts for
// its tick t in a namespace of partitions partitions: TickID with one,
// "<name>@<unix seconds of t>" with more (which places it in the
// schedule's partition; spec/partitions.md, Schedules). A Schedule's
// LastID is the last one a fire started.
func TickIDIn(name string, t time.Time, partitions int) string {
	return engine.TickIDIn(name, t, partitions)
}

// JSONPayload encodes a JSON value the way weir stores payloads (as
// Queue.EncodePayload does), so that the handler of a queue whose payload
// type the value fits decodes it: for producers that hold JSON, such as
// the CLI and the REST API. Integers stay integers.
func JSONPayload(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &weir.ValidationError{Field: "payload", Problem: fmt.Sprintf("not JSON: %v", err)}
	}
	if dec.More() {
		return nil, &weir.ValidationError{Field: "payload", Problem: "more than one JSON value"}
	}
	return encode(numbers(v))
}

// numbers replaces json.Numbers by int64 (when whole) or float64.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	}
	return v
}
