package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// Submit implements engine.Store.
func (pt *part) Submit(ctx context.Context, p engine.SubmitParams) (engine.SubmitResult, error) {
	if err := engine.ValidatePlan(p.Plan, pt.cfg.Limits); err != nil {
		return engine.SubmitResult{}, err
	}
	if err := engine.ValidateTraceParent(p.TraceParent); err != nil {
		return engine.SubmitResult{}, err
	}
	if err := engine.ValidateNameLabels(p.Name, p.Labels); err != nil {
		return engine.SubmitResult{}, err
	}
	hash := engine.PlanHash(p.Plan)
	fields, payloads, index, roots := planArgs(p.Plan, hash)
	fields = appendTraceField(fields, p.TraceParent)
	fields = appendNameLabels(fields, p.Name, p.Labels)
	staged := len(fields)+len(payloads)+len(index) > stageAbove
	dl := deadlineArg(p.Plan)
	var v []string
	var err error
	for try := 0; ; try++ {
		if staged {
			if err := pt.stage(ctx, p.Plan.ID, hash, fields, payloads, index); err != nil {
				return engine.SubmitResult{}, err
			}
		}
		args := pt.argv(scripts["submit"], 8+len(fields)+len(payloads)+len(index)+len(roots))
		args = append(args, p.Plan.ID, hash, len(p.Plan.Tasks))
		if staged {
			args = append(args, "s"+dl, 0, 0, 0)
		} else {
			args = append(args, "i"+dl, len(fields))
			args = append(args, fields...)
			args = append(args, len(payloads))
			args = append(args, payloads...)
			args = append(args, len(index))
			args = append(args, index...)
		}
		args = append(args, roots...)
		v, err = pt.call(ctx, scripts["submit"], args)
		if err != nil {
			var ce *codeErr
			if errors.As(err, &ce) && errors.Is(err, weir.ErrInvalid) {
				// the one check the script makes: a deadline not after now
				return engine.SubmitResult{}, deadlineError(ce.detail)
			}
			return engine.SubmitResult{}, err
		}
		if len(v) != 1 || v[0] != "R" || try > 0 {
			break
		}
	}
	r := newReader(v)
	res := engine.SubmitResult{Created: r.flag(), Pushed: r.pushed()}
	// more roots than a call's budget: drain calls push the rest
	d, err := pt.drainRest(ctx, r)
	if err != nil {
		return engine.SubmitResult{}, err
	}
	res.Pushed = append(res.Pushed, d.Pushed...)
	return res, nil
}

// stageAbove is the number of field and value strings above which a plan
// is staged before its submit, so that no script call stores a large plan
// at once.
const stageAbove = 2000

// stage writes a plan's workflow-hash, payload-hash and index-hash fields
// into the staging keys stage:<id>:<hash>[:p|:i], 1,000 strings a command,
// with a TTL;
// submit.lua renames them into place.
func (pt *part) stage(ctx context.Context, id, hash string, fields, payloads, index []any) error {
	key := pt.keys.stage(id, hash)
	pipe := pt.rdb.Pipeline()
	for _, kv := range []struct {
		key string
		v   []any
	}{{key, fields}, {key + ":p", payloads}, {key + ":i", index}} {
		for i := 0; i < len(kv.v); i += 1000 {
			pipe.HSet(ctx, kv.key, kv.v[i:min(i+1000, len(kv.v))]...)
		}
		pipe.PExpire(ctx, kv.key, stageTTL)
	}
	_, err := pipe.Exec(ctx)
	return mapErr(err)
}

// stageTTL bounds how long an abandoned staging key lives.
const stageTTL = time.Hour

// deadlineArg is what the submit script's mode argument ends with for plan
// p's deadline (lua/scripts/submit.lua): "a<unix ms>", "i<ms>", or "".
func deadlineArg(p engine.Plan) string {
	switch {
	case !p.Deadline.IsZero():
		return "a" + strconv.FormatInt(p.Deadline.UnixMilli(), 10)
	case p.DeadlineIn > 0:
		return "i" + strconv.FormatInt(p.DeadlineIn.Milliseconds(), 10)
	}
	return ""
}

// deadlineError is the error of submit.lua's one refusal, "deadline <ms>
// is not after the store's now <ms>": engine.DeadlinePassed, which names
// both times as RFC 3339 times, as the model's submit does.
func deadlineError(detail string) error {
	var dl, now int64
	if _, err := fmt.Sscanf(detail, "deadline %d is not after the store's now %d", &dl, &now); err == nil {
		return engine.DeadlinePassed(dl, now)
	}
	return &weir.ValidationError{Field: "deadline", Problem: strings.TrimPrefix(detail, "deadline ")}
}
