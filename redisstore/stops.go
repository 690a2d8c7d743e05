package redisstore

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

var _ engine.StopWatcher = (*Store)(nil)

// WatchStops implements engine.StopWatcher. The cancel scripts publish the
// IDs of the running jobs they ask to stop on the partition's channel
// weir:{<ns>:<p>}:stop (spec/keys.md); WatchStops subscribes to it and
// calls fn with each message's IDs. Redis keeps no message for a
// subscriber that is away, so fn(nil) comes after every (re)subscription:
// the caller then checks all its jobs (a worker heartbeats them).
func (pt *part) WatchStops(ctx context.Context, fn func(jobIDs []string)) error {
	return pt.watchStops(ctx, []string{pt.keys.chanStop()}, fn)
}

// watchStops is WatchStops on channels, the stop channels of a
// namespace's partitions.
func (pt *part) watchStops(ctx context.Context, channels []string, fn func(jobIDs []string)) error {
	return pt.watch(ctx, channels, func(payload string, subscribed bool) {
		if subscribed {
			fn(nil)
		} else if ids := strings.Fields(payload); len(ids) > 0 {
			fn(ids)
		}
	})
}

// watch subscribes to channels until ctx is done, and then returns ctx's
// error: it calls fn(payload, false) for each message and fn("", true)
// after every (re)subscription to all of them, since Redis keeps no message for a
// subscriber that is away. A lost connection is subscribed again after a
// pause that grows while the server cannot be reached.
func (pt *part) watch(ctx context.Context, channels []string, fn func(payload string, subscribed bool)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sub := pt.rdb.Subscribe(ctx, channels...)
	defer func() { _ = sub.Close() }()
	// A blocked read does not watch ctx: closing the subscription ends it.
	stop := context.AfterFunc(ctx, func() { _ = sub.Close() })
	defer stop()
	pause := time.Duration(0)
	for {
		msg, err := sub.Receive(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			// The next read reconnects and subscribes again; wait a little
			// first so that a server that cannot be reached is not spun on.
			if err := backOff(ctx, &pause); err != nil {
				return err
			}
			continue
		}
		pause = 0
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" && m.Count == len(channels) {
				fn("", true)
			}
		case *redis.Message:
			fn(m.Payload, false)
		}
	}
}
