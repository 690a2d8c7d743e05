package memstore

import (
	"context"
	"time"

	"github.com/weirflow/weir/engine"
)

var _ engine.Signaller = (*Store)(nil)

// Signal completes or fails an open signal task (engine.Signaller).
func (s *Store) Signal(ctx context.Context, p engine.SignalParams) (res engine.SignalResult, err error) {
	err = s.write(ctx, func(now time.Time) (err error) {
		res, err = s.m.Signal(now, p)
		return err
	})
	return res, err
}
