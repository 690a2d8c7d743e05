package redisstore

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"

	"github.com/weirflow/weir/engine"
)

// Enqueue implements engine.Store.
func (pt *part) Enqueue(ctx context.Context, p engine.EnqueueParams) (engine.EnqueueResult, error) {
	args := pt.argv(scripts["enqueue"], 1+enqueueArgs)
	args = append(args, 1)
	args, err := pt.appendEnqueueTraced(args, p)
	if err != nil {
		return engine.EnqueueResult{}, err
	}
	v, err := pt.call(ctx, scripts["enqueue"], args)
	if err != nil {
		return engine.EnqueueResult{}, err
	}
	r := newReader(v)
	res, err := enqueueReply(r, p.Job.ID)
	if r.err != nil {
		return engine.EnqueueResult{}, r.err
	}
	return res, err
}

// enqueueArgs is the number of enqueue.lua arguments per job: the 9 of
// appendEnqueue and the traceparent (appendEnqueueTraced).
const enqueueArgs = 10

// appendEnqueue validates j and appends its enqueue arguments to args.
func (pt *part) appendEnqueue(args []any, j engine.JobSpec) ([]any, error) {
	if err := engine.ValidateJob(j, pt.cfg.Limits); err != nil {
		return nil, err
	}
	attempts := max(j.MaxAttempts, 1)
	backoff := j.Backoff
	if backoff <= 0 {
		backoff = weir.DefaultBackoff
	}
	var runAt int64
	switch {
	case !j.RunAt.IsZero():
		runAt = max(j.RunAt.UnixMilli(), 0) // before 1970 is as past as 0
	case j.Delay > 0:
		// a delay goes as its negative: the call adds it to its now
		runAt = -engine.DelayMillis(j.Delay)
	}
	spec := jobSpec(j.Queue, j.Priority, attempts, backoff, j.Timeout) + expiriesField(j.MaxExpiries)
	if j.Key != "" {
		spec += "|K" + j.Key
	}
	unique := ""
	if dg := engine.UniqueDigest(j); dg != "" {
		fo := engine.DelayMillis(j.Unique.For)
		unique = dg + ":" + strconv.FormatInt(fo, 10)
		if fo == 0 {
			spec += "|u" + dg
		} else {
			spec += "|U" + dg
		}
	}
	return append(args, j.ID, j.Queue, j.Priority, spec,
		flagArg(j.Payload != nil), bytesArg(j.Payload), runAt, engine.JobHash(j), unique), nil
}

// enqueueReply reads one job's part of enqueue's reply: created, state,
// and the holder's ID after "UNIQUE".
func enqueueReply(r *reader, id string) (engine.EnqueueResult, error) {
	created, state := r.str(), r.str()
	switch created {
	case "1", "":
		return engine.EnqueueResult{Created: created == "1", State: weir.State(state)}, nil
	case "UNIQUE":
		return engine.EnqueueResult{State: weir.State(state), Existing: r.str()}, nil
	}
	return engine.EnqueueResult{}, codeError(created, fmt.Sprintf("job %q exists with a different spec", id))
}
