package scenario

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"time"

	"github.com/weirflow/weir/engine"
)

// ScheduleTarget is a Target that keeps schedules (engine.Scheduler at the
// scenario's clock). A target without it answers errors.ErrUnsupported,
// and the runner skips its schedule steps.
type ScheduleTarget interface {
	PutSchedule(ctx context.Context, now time.Time, p engine.PutScheduleParams) (engine.PutScheduleResult, error)
	DeleteSchedule(ctx context.Context, now time.Time, name string) error
	PauseSchedule(ctx context.Context, now time.Time, name string, pause bool) error
	GetSchedule(ctx context.Context, now time.Time, name string) (engine.Schedule, error)
	FireSchedule(ctx context.Context, now time.Time, p engine.FireScheduleParams) (engine.FireScheduleResult, error)
}

var (
	_ ScheduleTarget = (*ModelTarget)(nil)
	_ ScheduleTarget = (*StoreTarget)(nil)
)

// PutSchedule calls Model.PutSchedule.
func (t *ModelTarget) PutSchedule(_ context.Context, now time.Time, p engine.PutScheduleParams) (engine.PutScheduleResult, error) {
	return t.M.PutSchedule(now, p)
}

// DeleteSchedule calls Model.DeleteSchedule.
func (t *ModelTarget) DeleteSchedule(_ context.Context, now time.Time, name string) error {
	return t.M.DeleteSchedule(now, name)
}

// PauseSchedule calls Model.PauseSchedule.
func (t *ModelTarget) PauseSchedule(_ context.Context, now time.Time, name string, pause bool) error {
	return t.M.PauseSchedule(now, name, pause)
}

// GetSchedule calls Model.GetSchedule.
func (t *ModelTarget) GetSchedule(_ context.Context, now time.Time, name string) (engine.Schedule, error) {
	return t.M.GetSchedule(now, name)
}

// FireSchedule calls Model.FireSchedule.
func (t *ModelTarget) FireSchedule(_ context.Context, now time.Time, p engine.FireScheduleParams) (engine.FireScheduleResult, error) {
	return t.M.FireSchedule(now, p)
}

// scheduler is the store's engine.Scheduler, or errors.ErrUnsupported.
func (t *StoreTarget) scheduler(now time.Time) (engine.Scheduler, error) {
	sc, ok := t.Store.(engine.Scheduler)
	if !ok {
		return nil, fmt.Errorf("the store keeps no schedules: %w", errors.ErrUnsupported)
	}
	t.SetClock(now)
	return sc, nil
}

// PutSchedule calls the store's PutSchedule at now.
func (t *StoreTarget) PutSchedule(ctx context.Context, now time.Time, p engine.PutScheduleParams) (engine.PutScheduleResult, error) {
	sc, err := t.scheduler(now)
	if err != nil {
		return engine.PutScheduleResult{}, err
	}
	return sc.PutSchedule(ctx, p)
}

// DeleteSchedule calls the store's DeleteSchedule at now.
func (t *StoreTarget) DeleteSchedule(ctx context.Context, now time.Time, name string) error {
	sc, err := t.scheduler(now)
	if err != nil {
		return err
	}
	return sc.DeleteSchedule(ctx, name)
}

// PauseSchedule calls the store's PauseSchedule or ResumeSchedule at now.
func (t *StoreTarget) PauseSchedule(ctx context.Context, now time.Time, name string, pause bool) error {
	sc, err := t.scheduler(now)
	if err != nil {
		return err
	}
	if pause {
		return sc.PauseSchedule(ctx, name)
	}
	return sc.ResumeSchedule(ctx, name)
}

// GetSchedule calls the store's GetSchedule at now.
func (t *StoreTarget) GetSchedule(ctx context.Context, now time.Time, name string) (engine.Schedule, error) {
	sc, err := t.scheduler(now)
	if err != nil {
		return engine.Schedule{}, err
	}
	return sc.GetSchedule(ctx, name)
}

// FireSchedule calls the store's FireSchedule at now.
func (t *StoreTarget) FireSchedule(ctx context.Context, now time.Time, p engine.FireScheduleParams) (engine.FireScheduleResult, error) {
	sc, err := t.scheduler(now)
	if err != nil {
		return engine.FireScheduleResult{}, err
	}
	return sc.FireSchedule(ctx, p)
}

// opSchedule is one "schedule" step (spec/testdata/README.md).
type opSchedule struct {
	verb string // put, fire, pause, resume, delete, show
	name string
	put  engine.PutScheduleParams
	// fire: the fence to use instead of the schedule's own (a fire planned
	// from an earlier read); 0 when not given
	tick int64
	rev  int64
}

func (*opSchedule) needsReply() bool { return true }

// more takes a put's task lines: a put with tasks is a workflow
// schedule, whose ticks submit those tasks (and it takes no q=).
func (op *opSchedule) more(ws []word) error {
	if op.verb != "put" || ws[0].val != "task" || ws[0].key != "" {
		return fmt.Errorf("only a schedule put continues, with 'task <name> q=<queue> ...' lines")
	}
	if op.put.Spec.Plan == nil {
		if op.put.Spec.Job.Queue != "" || op.put.Spec.Job.Payload != nil {
			return fmt.Errorf("a schedule put with tasks submits a workflow: leave out q= and payload=")
		}
		op.put.Spec.Job, op.put.Spec.Plan = nil, &engine.Plan{}
	}
	t, err := parseTask(ws[1:])
	if err != nil {
		return err
	}
	op.put.Spec.Plan.Tasks = append(op.put.Spec.Plan.Tasks, t)
	return nil
}

const scheduleUsage = "schedule put <name> (every=<duration> | cron=<expr> [tz=<zone>]) q=<queue> [payload=] [missed=skip|once] [overlap=allow|skip] next=<time>" +
	" (or, for a workflow schedule, no q= and indented task lines) | schedule fire <name> [tick=<time>] [rev=<n>] | schedule pause|resume|delete|show <name>"

func parseSchedule(args []word, now int64) (operation, error) {
	pos, rest, err := positional(args, 2, scheduleUsage)
	if err != nil {
		return nil, err
	}
	op := &opSchedule{verb: pos[0], name: pos[1]}
	switch op.verb {
	case "put":
		o, err := parseOpts(rest, map[string]kind{"every": kDur, "cron": kStr, "tz": kStr, "q": kStr, "payload": kStr,
			"missed": kStr, "overlap": kStr, "next": kTime})
		if err != nil {
			return nil, err
		}
		op.put = engine.PutScheduleParams{Spec: engine.ScheduleSpec{Name: pos[1], Every: o.dur("every", 0), Cron: o.str("cron"), TZ: o.str("tz"),
			Job: &engine.JobSpec{Queue: o.str("q"), Payload: o.bytes("payload")}, Missed: weir.MissedPolicy(o.str("missed")), Overlap: weir.OverlapPolicy(o.str("overlap"))}}
		if v := o.str("next"); v != "" && v != "-" {
			op.put.Next = time.UnixMilli(timeValue(v, now)).UTC()
		}
	case "fire":
		o, err := parseOpts(rest, map[string]kind{"tick": kTime, "rev": kInt})
		if err != nil {
			return nil, err
		}
		if v := o.str("tick"); v != "" {
			op.tick = timeValue(v, now)
		}
		op.rev = int64(o.int("rev", 0))
	case "pause", "resume", "delete", "show":
		if len(rest) != 0 {
			return nil, fmt.Errorf("usage: %s", scheduleUsage)
		}
	default:
		return nil, fmt.Errorf("unknown schedule step %q; usage: %s", op.verb, scheduleUsage)
	}
	return op, nil
}

func (op *opSchedule) exec(r *runner, st *Step) error {
	st2, ok := r.t.(ScheduleTarget)
	if !ok {
		r.res.Skipped = append(r.res.Skipped, fmt.Sprintf("%s:%d: %s", r.s.Name, st.Line, st.Text))
		return nil
	}
	got, err := op.run(r.ctx, st2, st.Now)
	if errors.Is(err, errors.ErrUnsupported) {
		r.res.Skipped = append(r.res.Skipped, fmt.Sprintf("%s:%d: %s", r.s.Name, st.Line, st.Text))
		return nil
	}
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{got})
}

func (op *opSchedule) run(ctx context.Context, t ScheduleTarget, now time.Time) (line, error) {
	ok := line{{"", "ok"}}
	switch op.verb {
	case "put":
		res, err := t.PutSchedule(ctx, now, op.put)
		if err != nil {
			return nil, err
		}
		verb := "created"
		if !res.Created {
			verb = "replaced"
		}
		return line{{"", verb}, {"rev", strconv.FormatInt(res.Rev, 10)}}, nil
	case "pause", "resume":
		return ok, t.PauseSchedule(ctx, now, op.name, op.verb == "pause")
	case "delete":
		return ok, t.DeleteSchedule(ctx, now, op.name)
	case "show":
		s, err := t.GetSchedule(ctx, now, op.name)
		if err != nil {
			return nil, err
		}
		l := line{{"rev", strconv.FormatInt(s.Rev, 10)}, {"next", msOrDash(s.Next)}, {"last", msOrDash(s.LastTick)}, {"id", orDash(s.LastID)}}
		if s.Paused {
			l = append(l, field{"", "paused"})
		}
		return l, nil
	}
	// fire: planned at now from the schedule as read (with the fence
	// given instead, when given)
	s, err := t.GetSchedule(ctx, now, op.name)
	if err != nil {
		return nil, err
	}
	if op.tick != 0 {
		s.Next = time.UnixMilli(op.tick).UTC()
	}
	if op.rev != 0 {
		s.Rev = op.rev
	}
	s.Paused = false // a paused schedule's fire is planned all the same: the store refuses it
	p, due, err := engine.PlanFire(s, now)
	if err != nil {
		return nil, err
	}
	if !due {
		return line{{"", "notdue"}, {"next", msOrDash(s.Next)}}, nil
	}
	created, err := submitTick(ctx, t, now, s, &p)
	if err != nil {
		return nil, err
	}
	res, err := t.FireSchedule(ctx, now, p)
	if err != nil {
		return nil, err
	}
	l := line{{"", string(res.Outcome)}}
	switch res.Outcome {
	case engine.FireFired:
		l = append(l, field{"id", res.ID})
		if res.Created || created {
			l = append(l, field{"", "created"})
		} else {
			l = append(l, field{"", "unchanged"})
		}
	case engine.FireSkipped, engine.FireOverlap:
		l = append(l, field{"next", msOrDash(p.Next)})
	}
	return l, nil
}

// submitTick does, for a workflow schedule s, what engine.FireDue does
// before its FireSchedule: under overlap=skip it starts nothing while
// the last fired workflow has not ended (p becomes an overlap fire), else
// it submits the tick's workflow under the tick's ID (one already there
// is the tick's) and names it in p. created says the submit wrote it.
func submitTick(ctx context.Context, t ScheduleTarget, now time.Time, s engine.Schedule, p *engine.FireScheduleParams) (created bool, err error) {
	if s.Plan == nil || p.Fire.IsZero() {
		return false, nil
	}
	tt, ok := t.(Target)
	if !ok {
		return false, fmt.Errorf("the target cannot submit a tick's workflow: %w", errors.ErrUnsupported)
	}
	if s.Overlap == weir.OverlapSkip && s.LastID != "" {
		w, err := tt.GetWorkflow(ctx, now, s.LastID)
		switch {
		case err == nil && !w.State.Ended():
			p.Fire, p.Overlap = time.Time{}, true
			return false, nil
		case err != nil && !errors.Is(err, weir.ErrNotFound):
			return false, err
		}
	}
	plan := *s.Plan
	plan.ID = s.TickID(p.Fire)
	res, err := tt.Submit(ctx, now, engine.SubmitParams{Plan: plan})
	if err != nil && !errors.Is(err, weir.ErrWorkflowExists) {
		return false, err
	}
	p.Submitted = plan.ID
	return err == nil && res.Created, nil
}

func msOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
