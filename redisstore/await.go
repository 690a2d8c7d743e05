package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"github.com/weirflow/weir"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// A waiter registers itself as a member of a waiter set (await:w:<id>,
// await:wj:<wf> for any job of a workflow, await:j:<id> for a plain job,
// each a zset scored with when the member's registration lapses) that the
// scripts look at when a record ends: they PUBLISH its outcome on
// o:w:<id> / o:j:<id> only when that set exists. It also adds itself to
// the zset wait:any, so that scripts look up no set at all while nobody
// waits. Both are refreshed while the waiter waits (the set's TTL with
// them), and each refresh drops lapsed members, so a crashed waiter costs
// at most waiterTTL of useless look-ups and publishes. A member per waiter,
// not a counter: an unregistration after the TTL lapsed cannot leave a
// negative count behind, and a set whose last waiter left is gone.
const (
	waiterTTL     = 10 * time.Minute
	waiterRefresh = time.Minute
)

// AwaitWorkflow implements engine.Store: it subscribes to the workflow's
// outcome channel, then reads the stored record, and reads it again after
// every message, resubscription or refresh, until it has ended.
func (pt *part) AwaitWorkflow(ctx context.Context, id string) (weir.Workflow, error) {
	if !engine.ValidID(id) {
		return pt.GetWorkflow(ctx, id)
	}
	var w weir.Workflow
	err := pt.await(ctx, pt.keys.waitWorkflow(id), pt.keys.chanWorkflow(id), func(ctx context.Context) (bool, error) {
		var err error
		w, err = pt.getWorkflow(ctx, id, true)
		return err == nil && w.State.Ended(), err
	})
	return w, err
}

// AwaitJob implements engine.Store, as AwaitWorkflow does.
func (pt *part) AwaitJob(ctx context.Context, id string) (weir.Job, error) {
	if !validJobID(id) {
		return pt.GetJob(ctx, id)
	}
	waitKey := pt.keys.waitJob(id)
	if wf, _, ok := strings.Cut(id, "/"); ok {
		waitKey = pt.keys.waitWorkflowJobs(wf)
	}
	var j weir.Job
	err := pt.await(ctx, waitKey, pt.keys.chanJob(id), func(ctx context.Context) (bool, error) {
		var err error
		j, err = pt.getJob(ctx, id, true)
		return err == nil && j.State.Ended(), err
	})
	return j, err
}

func (pt *part) await(ctx context.Context, waitKey, channel string, check func(context.Context) (bool, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	me := hex.EncodeToString(rnd[:])
	anyKey := pt.keys.waitAny()
	// refresh (re)registers this waiter until now + waiterTTL.
	refresh := func(first bool) error {
		now := time.Now()
		pipe := pt.rdb.Pipeline()
		pipe.ZRemRangeByScore(ctx, anyKey, "-inf", strconv.FormatInt(now.UnixMilli(), 10))
		lapse := redis.Z{Score: float64(now.Add(waiterTTL).UnixMilli()), Member: me}
		pipe.ZAdd(ctx, anyKey, lapse)
		if !first {
			pipe.ZRemRangeByScore(ctx, waitKey, "-inf", strconv.FormatInt(now.UnixMilli(), 10))
		}
		pipe.ZAdd(ctx, waitKey, lapse)
		pipe.PExpire(ctx, waitKey, waiterTTL)
		_, err := pipe.Exec(ctx)
		return err
	}
	if err := refresh(true); err != nil {
		return mapErr(err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		pipe := pt.rdb.Pipeline()
		pipe.ZRem(dctx, waitKey, me)
		pipe.ZRem(dctx, anyKey, me)
		_, _ = pipe.Exec(dctx)
	}()
	sub := pt.rdb.Subscribe(ctx, channel)
	defer func() { _ = sub.Close() }()
	// A blocked read does not watch ctx: closing the subscription ends it.
	stop := context.AfterFunc(ctx, func() { _ = sub.Close() })
	defer stop()
	// The first read confirms the subscription. When it fails (the
	// connection was killed), the loop below goes on: the next read
	// reconnects and resubscribes, and the record is read again after it,
	// so an outcome published meanwhile is not missed.
	_, err := sub.Receive(ctx)
	pause := time.Duration(0)
	for {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil && !isTimeout(err) {
			// Not a refresh timeout: wait a little before reading again, so
			// a subscription that cannot reconnect does not spin.
			if err := backOff(ctx, &pause); err != nil {
				return err
			}
		} else {
			pause = 0
		}
		done, cerr := check(ctx)
		if cerr != nil || done {
			return cerr
		}
		_, err = sub.ReceiveTimeout(ctx, waiterRefresh)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if isTimeout(err) {
			if err := refresh(false); err != nil {
				return mapErr(err)
			}
		}
		// Any other error: the subscription reconnects and resubscribes by
		// itself; the next read shows whether the store is reachable.
	}
}

// backOff waits *pause, first doubled (from 5 ms, at most 1 s), or until
// ctx is done (then it returns ctx's error): the wait of a subscription
// between two failed reads.
func backOff(ctx context.Context, pause *time.Duration) error {
	*pause = min(max(2**pause, 5*time.Millisecond), time.Second)
	t := time.NewTimer(*pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// isTimeout reports whether err is a read that timed out.
func isTimeout(err error) bool {
	var nerr net.Error
	return errors.As(err, &nerr) && nerr.Timeout()
}
