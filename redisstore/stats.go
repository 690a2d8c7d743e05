package redisstore

import (
	"context"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// Stats reads what a metrics scrape reads (weir.Stats): in one read-only
// script per partition (stats.lua), bounded by the number of queues and
// not of jobs. With several partitions it merges them as Queues does
// (engine.MergeStats), each partition read at its own instant.
func (s *Store) Stats(ctx context.Context) (weir.Stats, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return weir.Stats{}, err
	}
	if len(ps) == 1 {
		return ps[0].Stats(ctx)
	}
	parts := make([]weir.Stats, len(ps))
	for q, p := range ps {
		if parts[q], err = p.Stats(ctx); err != nil {
			return weir.Stats{}, partErr(ps, q, err)
		}
	}
	return engine.MergeStats(parts), nil
}

// Stats reads one partition's stats.
func (pt *part) Stats(ctx context.Context) (weir.Stats, error) {
	states := weir.WorkflowStates()
	args := make([]any, len(states))
	for i, st := range states {
		args[i] = string(st)
	}
	v, err := pt.run(ctx, "stats", args...)
	if err != nil {
		return weir.Stats{}, err
	}
	r := newReader(v)
	qs := queuesReply(r)
	st := weir.Stats{Queues: make([]weir.QueueStats, len(qs)), Workflows: make(map[weir.WorkflowState]int, len(states))}
	for i, q := range qs {
		st.Queues[i] = weir.QueueStats{QueueInfo: q, Failed: int(r.int()), Cancelled: int(r.int()), HeadReadyAt: r.time()}
	}
	for _, state := range states {
		st.Workflows[state] = int(r.int())
	}
	st.Time = r.time()
	if err := r.done(); err != nil {
		return weir.Stats{}, err
	}
	return st, nil
}
