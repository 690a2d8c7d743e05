package memstore

import (
	"context"
	"time"

	"github.com/weirflow/weir/engine"
)

var (
	_ engine.Scheduler       = (*Store)(nil)
	_ engine.ScheduleWatcher = (*Store)(nil)
)

// PutSchedule creates or replaces a schedule (see engine.Scheduler).
func (s *Store) PutSchedule(ctx context.Context, p engine.PutScheduleParams) (res engine.PutScheduleResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		if res, err = s.m.PutSchedule(now, p); err == nil {
			s.noteScheduleLocked()
		}
		return err
	})
	return res, err
}

// DeleteSchedule removes a schedule (see engine.Scheduler).
func (s *Store) DeleteSchedule(ctx context.Context, name string) error {
	return s.write(ctx, func(now time.Time) error { return s.m.DeleteSchedule(now, name) })
}

// PauseSchedule pauses a schedule (see engine.Scheduler).
func (s *Store) PauseSchedule(ctx context.Context, name string) error {
	return s.write(ctx, func(now time.Time) error { return s.m.PauseSchedule(now, name, true) })
}

// ResumeSchedule resumes a paused schedule (see engine.Scheduler).
func (s *Store) ResumeSchedule(ctx context.Context, name string) error {
	return s.write(ctx, func(now time.Time) error {
		err := s.m.PauseSchedule(now, name, false)
		if err == nil {
			s.noteScheduleLocked()
		}
		return err
	})
}

// GetSchedule returns one schedule (see engine.Scheduler).
func (s *Store) GetSchedule(ctx context.Context, name string) (sc engine.Schedule, err error) {
	err = s.read(ctx, func(now time.Time) (err error) {
		sc, err = s.m.GetSchedule(now, name)
		return err
	})
	return sc, err
}

// Schedules lists every schedule, by name, with the store's time (see
// engine.Scheduler).
func (s *Store) Schedules(ctx context.Context) (out engine.ScheduleList, err error) {
	err = s.read(ctx, func(now time.Time) error {
		out = s.m.Schedules(now)
		return nil
	})
	return out, err
}

// FireSchedule fires one tick of a schedule (see engine.Scheduler).
func (s *Store) FireSchedule(ctx context.Context, p engine.FireScheduleParams) (res engine.FireScheduleResult, err error) {
	if p.Job != nil {
		j := *p.Job
		p.Job = &j
	}
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.FireSchedule(now, p)
		return err
	})
	return res, err
}

// noteScheduleLocked wakes WatchSchedules. s.mu must be held.
func (s *Store) noteScheduleLocked() {
	s.schedSeq++
	if s.schedCh != nil {
		close(s.schedCh)
		s.schedCh = nil
	}
}

// WatchSchedules implements engine.ScheduleWatcher: it calls fn at once,
// then after each later put or resume of a schedule (several between two
// calls of fn make one), until ctx is done.
func (s *Store) WatchSchedules(ctx context.Context, fn func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	seen := s.schedSeq
	s.mu.Unlock()
	fn()
	for {
		s.mu.Lock()
		changed := s.schedSeq != seen
		seen = s.schedSeq
		if s.schedCh == nil {
			s.schedCh = make(chan struct{})
		}
		ch := s.schedCh
		s.mu.Unlock()
		if changed {
			fn()
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}
