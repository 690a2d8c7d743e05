package engine

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"time"
)

// PlanFire computes how schedule s fires at time now, from its spec and
// its next tick T (spec/states.md, Schedules): due is false while now is
// before T, or when s is paused. On time (the tick after T is still to
// come) it fires T. Otherwise ticks were missed: MissedSkip fires nothing
// and MissedOnce fires the latest tick at or before now; both move the
// schedule to the first tick after now.
func PlanFire(s Schedule, now time.Time) (p FireScheduleParams, due bool, err error) {
	t, err := scheduleTicker(s.ScheduleSpec)
	if err != nil {
		return p, false, err
	}
	if s.Paused || s.Next.IsZero() || now.Before(s.Next) {
		return p, false, nil
	}
	p = FireScheduleParams{Name: s.Name, Rev: s.Rev, Tick: s.Next, Fire: s.Next, Next: t.Next(s.Next)}
	if !p.Next.IsZero() && !p.Next.After(now) {
		p.Next = t.Next(now)
		p.Fire = time.Time{}
		if s.Missed == weir.MissedOnce {
			p.Fire = latestTick(t, s.Next, now)
		}
	}
	if s.Job != nil && !p.Fire.IsZero() {
		j := *s.Job
		j.ID = s.TickID(p.Fire)
		p.Job = &j
	}
	return p, true, nil
}

// latestTick is the latest tick of t at or before now, given a tick
// first at or before now. It looks back over windows that double in
// length, so a long downtime costs a few dozen computations, not one per
// missed tick.
func latestTick(t Ticker, first, now time.Time) time.Time {
	for w := time.Second; ; w *= 2 {
		from := now.Add(-w)
		x := first
		if from.After(first) {
			if x = t.Next(from); x.IsZero() || x.After(now) {
				continue
			}
		}
		for {
			y := t.Next(x)
			if y.IsZero() || y.After(now) {
				return x
			}
			x = y
		}
	}
}

// FireDue fires schedule s, as read from st, if it is due at now (see
// PlanFire), and returns what the fire did (a zero result when it was not
// due). A job schedule's fire is one call, FireSchedule, which enqueues
// the tick's job. A workflow schedule's fire reads the schedule again (to
// drop a fire that another worker made meanwhile), applies OverlapSkip by
// reading the last fired workflow, submits the tick's workflow under the
// tick's ID (a repeat finds it there: Created false), then makes the
// fenced FireSchedule call that records it and moves the schedule on.
func FireDue(ctx context.Context, st Store, sc Scheduler, s Schedule, now time.Time) (FireScheduleResult, error) {
	p, due, err := PlanFire(s, now)
	if err != nil || !due {
		return FireScheduleResult{}, err
	}
	if s.Plan != nil && !p.Fire.IsZero() {
		cur, err := sc.GetSchedule(ctx, s.Name)
		if err != nil {
			return FireScheduleResult{}, err
		}
		if cur.Rev != s.Rev || cur.Paused || !cur.Next.Equal(s.Next) {
			return FireScheduleResult{Outcome: FireStale}, nil
		}
		if s.Overlap == weir.OverlapSkip && s.LastID != "" {
			w, err := st.GetWorkflow(ctx, s.LastID)
			switch {
			case err == nil && !w.State.Ended():
				p.Fire, p.Overlap = time.Time{}, true
				return sc.FireSchedule(ctx, p)
			case err != nil && !errors.Is(err, weir.ErrNotFound):
				return FireScheduleResult{}, err
			}
		}
		plan := *s.Plan
		plan.ID = s.TickID(p.Fire)
		// another plan under the tick's ID (the schedule was replaced
		// meanwhile) is the tick's workflow all the same
		if _, err := st.Submit(ctx, SubmitParams{Plan: plan}); err != nil && !errors.Is(err, weir.ErrWorkflowExists) {
			return FireScheduleResult{}, err
		}
		p.Submitted = plan.ID
	}
	return sc.FireSchedule(ctx, p)
}
