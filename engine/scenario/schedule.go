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
	store := r.store(st)
	sc, ok := store.(engine.Scheduler)
	if !ok {
		r.skip(st)
		return nil
	}
	got, err := op.run(r.ctx, store, sc, st.Now)
	if errors.Is(err, errors.ErrUnsupported) {
		r.skip(st)
		return nil
	}
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{got})
}

// run runs the step on store's Scheduler sc, whose clock reads now.
func (op *opSchedule) run(ctx context.Context, store engine.Store, sc engine.Scheduler, now time.Time) (line, error) {
	ok := line{{"", "ok"}}
	switch op.verb {
	case "put":
		res, err := sc.PutSchedule(ctx, op.put)
		if err != nil {
			return nil, err
		}
		verb := "created"
		if !res.Created {
			verb = "replaced"
		}
		return line{{"", verb}, {"rev", strconv.FormatInt(res.Rev, 10)}}, nil
	case "pause":
		return ok, sc.PauseSchedule(ctx, op.name)
	case "resume":
		return ok, sc.ResumeSchedule(ctx, op.name)
	case "delete":
		return ok, sc.DeleteSchedule(ctx, op.name)
	case "show":
		s, err := sc.GetSchedule(ctx, op.name)
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
	s, err := sc.GetSchedule(ctx, op.name)
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
	created, err := submitTick(ctx, store, s, &p)
	if err != nil {
		return nil, err
	}
	res, err := sc.FireSchedule(ctx, p)
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
func submitTick(ctx context.Context, store engine.Store, s engine.Schedule, p *engine.FireScheduleParams) (created bool, err error) {
	if s.Plan == nil || p.Fire.IsZero() {
		return false, nil
	}
	if s.Overlap == weir.OverlapSkip && s.LastID != "" {
		w, err := store.GetWorkflow(ctx, s.LastID)
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
	res, err := store.Submit(ctx, engine.SubmitParams{Plan: plan})
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
