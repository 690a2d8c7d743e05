package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirflow/weir"
)

// StatsReader is a store that reads weir.Stats: the Redis and the
// in-process stores are.
type StatsReader interface {
	Stats(ctx context.Context) (weir.Stats, error)
}

// Stats reads what a metrics scrape reads of the namespace (weir.Stats):
// its queues with their failed and cancelled counts and the ready-at of
// the job each hands out next, and its workflows by state, with work
// bounded by the number of queues. A store without Stats is an error
// wrapping errors.ErrUnsupported.
func (c *Client) Stats(ctx context.Context) (weir.Stats, error) {
	s, ok := c.store.(StatsReader)
	if !ok {
		return weir.Stats{}, fmt.Errorf("%w: the store (%T) does not read stats", errors.ErrUnsupported, c.store)
	}
	return s.Stats(ctx)
}
