package lua

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// EnqueueResult is what EnqueueBatch did with one job: Enqueue's result,
// or Enqueue's error for that job.
type EnqueueResult struct {
	engine.EnqueueResult
	Err error
}

// EnqueueBatch enqueues each of ps exactly as Enqueue would (the same
// script call, the same validation, results and errors), but sends the
// calls together in one pipeline: one round trip for the whole batch
// instead of one per job (two right after a SCRIPT FLUSH). Each job is
// still its own atomic script call, so one job's error does not affect
// the others. It returns one EnqueueResult per job, in order (a job whose
// reply was lost, for example to a broken connection, has an
// ErrUnavailable or context error: like Enqueue, it is safe to repeat,
// since a job's ID makes its enqueue idempotent). The error is ctx's when
// it is done before the batch is sent.
func (s *Store) EnqueueBatch(ctx context.Context, ps []engine.EnqueueParams) ([]EnqueueResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]EnqueueResult, len(ps))
	cmds := make([]*redis.StringSliceCmd, len(ps))
	pipe := s.rdb.Pipeline()
	for i, p := range ps {
		argv, err := s.enqueueArgv(p.Job)
		if err != nil {
			out[i].Err = err
			continue
		}
		cmds[i] = redis.NewStringSliceCmd(ctx, argv...)
		_ = pipe.Process(ctx, cmds[i])
	}
	if pipe.Len() == 0 {
		return out, nil
	}
	_, _ = pipe.Exec(ctx) // each command's error is read below
	// Scripts missing from the server's cache (a flush, a restart): run
	// those calls again with EVAL, in one more round trip.
	var again []int
	for i, c := range cmds {
		if c != nil && redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		pipe := s.rdb.Pipeline()
		for _, i := range again {
			argv := cmds[i].Args()
			argv[0], argv[1] = "eval", scripts["enqueue"].src
			cmds[i] = redis.NewStringSliceCmd(ctx, argv...)
			_ = pipe.Process(ctx, cmds[i])
		}
		_, _ = pipe.Exec(ctx)
	}
	for i, c := range cmds {
		if c == nil {
			continue
		}
		if err := c.Err(); err != nil {
			out[i].Err = mapErr(err)
			continue
		}
		out[i].EnqueueResult, out[i].Err = enqueueReply(c.Val())
	}
	return out, nil
}
