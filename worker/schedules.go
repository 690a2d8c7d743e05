package worker

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"time"

	"github.com/weirflow/weir/engine"
)

// fireSchedules fires the store's due schedules (Config.Schedules) until
// the worker stops: it reads every schedule, fires those whose next tick
// has come, and sleeps until the earliest next tick or ScheduleRefresh,
// whichever comes first, or until the store tells of a schedule put or
// resumed (engine.ScheduleWatcher). After a fire it reads the schedules
// again at once, since their next ticks moved.
func (r *run) fireSchedules(sc engine.Scheduler) {
	defer r.loops.Done()
	// a store that tells of new and resumed schedules wakes the loop
	kick := make(chan struct{}, 1)
	if sw, ok := r.store.(engine.ScheduleWatcher); ok {
		r.loops.Add(1)
		go func() {
			defer r.loops.Done()
			_ = sw.WatchSchedules(r.loopCtx, func() {
				select {
				case kick <- struct{}{}:
				default:
				}
			})
		}()
	}
	for {
		t := time.NewTimer(r.fireDue(r.loopCtx, sc))
		select {
		case <-r.loopCtx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-kick:
			t.Stop()
		}
	}
}

// fireDue fires every due schedule once and returns how long to sleep.
// With partitions the list is every partition's and each fire runs in its
// schedule's partition (spec/partitions.md, Schedules): the loop is the
// same.
func (r *run) fireDue(ctx context.Context, sc engine.Scheduler) time.Duration {
	refresh := r.cfg.ScheduleRefresh
	list, err := sc.Schedules(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("weir: reading schedules failed", "error", err)
		}
		return refresh
	}
	now := list.Now // the store's time: ticks are due by the store's clock
	wait, fired := refresh, false
	for _, s := range list.Schedules {
		if s.Paused || s.Next.IsZero() {
			continue
		}
		if d := s.Next.Sub(now); d > 0 {
			wait = min(wait, d)
			continue
		}
		res, err := engine.FireDue(ctx, r.store, sc, s, now)
		if errors.Is(err, weir.ErrNotFound) {
			fired = true // removed meanwhile: read the schedules again
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("weir: firing a schedule failed", "schedule", s.Name, "tick", s.Next, "error", err)
			}
			continue
		}
		fired = true
		r.log.Debug("weir: schedule fired", "schedule", s.Name, "tick", s.Next, "outcome", res.Outcome, "id", res.ID, "created", res.Created)
	}
	if fired {
		return 0
	}
	return wait
}
