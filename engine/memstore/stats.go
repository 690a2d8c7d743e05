package memstore

import (
	"context"
	"time"

	"github.com/weirflow/weir"
)

// Stats reads what a metrics scrape reads (weir.Stats) at one instant.
func (s *Store) Stats(ctx context.Context) (st weir.Stats, err error) {
	err = s.read(ctx, func(now time.Time) error {
		st = s.m.Stats(now)
		return nil
	})
	return st, err
}
