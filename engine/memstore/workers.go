package memstore

import (
	"context"
	"time"

	"github.com/weirflow/weir/engine"
)

var _ engine.WorkerRegistry = (*Store)(nil)

// BeatWorker registers or refreshes a worker's record (see
// engine.WorkerRegistry).
func (s *Store) BeatWorker(ctx context.Context, p engine.BeatWorkerParams) error {
	return s.read(ctx, func(now time.Time) error {
		if err := engine.ValidateBeatWorker(p, s.m.Config().Limits); err != nil {
			return err
		}
		s.workers.Beat(now, p)
		return nil
	})
}

// RemoveWorker removes a worker's record (see engine.WorkerRegistry).
func (s *Store) RemoveWorker(ctx context.Context, id string) error {
	return s.read(ctx, func(time.Time) error {
		s.workers.Remove(id)
		return nil
	})
}

// Workers lists the live workers, by ID (see engine.WorkerRegistry).
func (s *Store) Workers(ctx context.Context) (out engine.WorkerList, err error) {
	err = s.read(ctx, func(now time.Time) error {
		out = s.workers.List(now)
		return nil
	})
	return out, err
}
