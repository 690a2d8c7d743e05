package redisstore

import (
	"context"
	"github.com/weirflow/weir"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// PauseQueue implements engine.Store.
func (pt *part) PauseQueue(ctx context.Context, queue string) error { return pt.pause(ctx, queue, "1") }

// ResumeQueue implements engine.Store.
func (pt *part) ResumeQueue(ctx context.Context, queue string) error {
	return pt.pause(ctx, queue, "0")
}

func (pt *part) pause(ctx context.Context, queue, v string) error {
	if !engine.ValidName(queue) {
		return invalidQueue(queue)
	}
	_, err := pt.run(ctx, "pause", queue, v)
	return err
}

// LimitQueue implements engine.Store.
func (pt *part) LimitQueue(ctx context.Context, p engine.LimitQueueParams) error {
	if err := engine.ValidateLimitQueue(p); err != nil {
		return err
	}
	_, err := pt.run(ctx, "limit_queue", p.Queue, p.Concurrency)
	return err
}

// RateLimitQueue implements engine.Store.
func (pt *part) RateLimitQueue(ctx context.Context, p engine.RateLimitQueueParams) error {
	if err := engine.ValidateRateLimitQueue(p); err != nil {
		return err
	}
	var per int64
	if p.Limit > 0 {
		per = p.Period.Milliseconds()
	}
	_, err := pt.run(ctx, "rate_limit_queue", p.Queue, p.Limit, per)
	return err
}

// LimitKeys implements engine.Store.
func (pt *part) LimitKeys(ctx context.Context, p engine.LimitKeysParams) error {
	if err := engine.ValidateLimitKeys(p); err != nil {
		return err
	}
	_, err := pt.run(ctx, "limit_keys", p.Queue, p.Concurrency)
	return err
}

// PurgeQueue implements engine.Store.
func (pt *part) PurgeQueue(ctx context.Context, queue string) (engine.PurgeResult, error) {
	if !engine.ValidName(queue) {
		return engine.PurgeResult{}, invalidQueue(queue)
	}
	// a call goes through at most its budget of jobs (drain.go): those of
	// the queue it did not reach go in more calls, 1,000 at most a call
	var res engine.PurgeResult
	var rest []string
	for first := true; ; first = false {
		var sent []string
		args := []any{queue}
		if !first {
			sent = rest[:min(len(rest), 1000)]
			for _, id := range sent {
				args = append(args, id)
			}
		}
		v, err := pt.run(ctx, "purge", args...)
		if err != nil {
			return engine.PurgeResult{}, err
		}
		r := newReader(v)
		res.Purged = append(res.Purged, r.strings()...)
		res.Pushed = append(res.Pushed, r.pushed()...)
		// done is a number of jobs, not the length of what follows
		done, left := int(r.int()), r.strings()
		_, stopped := r.stopped()
		if err := r.done(); err != nil {
			return engine.PurgeResult{}, err
		}
		if first {
			rest = left
		} else if done <= len(sent) {
			rest = rest[done:]
		}
		if stopped {
			var d drained
			if err := pt.drain(ctx, &d); err != nil {
				return engine.PurgeResult{}, err
			}
			res.Pushed = append(res.Pushed, d.Pushed...)
		}
		if len(rest) == 0 {
			return res, nil
		}
	}
}

// Queues implements engine.Store.
func (pt *part) Queues(ctx context.Context) ([]weir.QueueInfo, error) {
	v, err := pt.run(ctx, "queues")
	if err != nil {
		return nil, err
	}
	r := newReader(v)
	out := queuesReply(r)
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// queuesReply reads the queues reply (reply.lua queues_reply).
func queuesReply(r *reader) []weir.QueueInfo {
	out := make([]weir.QueueInfo, r.count())
	for i := range out {
		out[i] = weir.QueueInfo{Name: r.str(), Paused: r.flag(), Ready: int(r.int()), Delayed: int(r.int()), Running: int(r.int()), Concurrency: int(r.int())}
		out[i].RateLimit, out[i].RatePeriod = rateLimit(r.str())
		out[i].KeyConcurrency = int(r.int())
	}
	return out
}

// rateLimit reads a queue's rate limit as queues_reply gives it:
// "<n>:<period ms>" (then ":<ms>" while held), or "" for none.
func rateLimit(v string) (int, time.Duration) {
	n, per, ok := strings.Cut(v, ":")
	if !ok {
		return 0, 0
	}
	per, _, _ = strings.Cut(per, ":")
	l, _ := strconv.Atoi(n)
	ms, _ := strconv.ParseInt(per, 10, 64)
	return l, time.Duration(ms) * time.Millisecond
}
