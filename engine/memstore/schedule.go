package memstore

import (
	"context"
	"time"

	"github.com/weirflow/weir/engine"
)

var _ engine.Scheduler = (*Store)(nil)

// PutSchedule creates or replaces a schedule (see engine.Scheduler).
func (s *Store) PutSchedule(ctx context.Context, p engine.PutScheduleParams) (res engine.PutScheduleResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.PutSchedule(now, p)
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
	return s.write(ctx, func(now time.Time) error { return s.m.PauseSchedule(now, name, false) })
}

// GetSchedule returns one schedule (see engine.Scheduler).
func (s *Store) GetSchedule(ctx context.Context, name string) (sc engine.Schedule, err error) {
	err = s.read(ctx, func(now time.Time) (err error) {
		sc, err = s.m.GetSchedule(now, name)
		return err
	})
	return sc, err
}

// Schedules lists every schedule, by name (see engine.Scheduler).
func (s *Store) Schedules(ctx context.Context) (out []engine.Schedule, err error) {
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
