package client

import (
	"context"
	"fmt"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// Workers lists the live worker processes, by ID: every worker.Worker
// (weir worker and weir dev run one) registers itself when it starts,
// refreshes its record at every heartbeat, and removes it when it stops;
// one that died leaves the list once its lease from its last heartbeat
// has passed (spec/keys.md, Keys of the worker registry). At most
// engine.MaxWorkers are listed. A store that keeps no registry is an
// error.
func (c *Client) Workers(ctx context.Context) ([]weir.WorkerInfo, error) {
	reg, ok := c.store.(engine.WorkerRegistry)
	if !ok {
		return nil, fmt.Errorf("weir: the store (%T) keeps no worker registry", c.store)
	}
	l, err := reg.Workers(ctx)
	if err != nil {
		return nil, err
	}
	return l.Workers, nil
}
