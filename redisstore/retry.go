package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"strings"

	"github.com/weirflow/weir/engine"
)

// RetryJob implements engine.Store.
func (pt *part) RetryJob(ctx context.Context, p engine.RetryJobParams) (engine.RetryResult, error) {
	if !validJobID(p.ID) {
		if err := ctx.Err(); err != nil {
			return engine.RetryResult{}, err
		}
		return engine.RetryResult{}, fmt.Errorf("%w: job %q", weir.ErrNotFound, p.ID)
	}
	var runAt int64
	if !p.RunAt.IsZero() {
		runAt = max(p.RunAt.UnixMilli(), 0)
	}
	v, err := pt.run(ctx, "retry_job", p.ID, runAt)
	if err != nil {
		var ce *codeErr
		if errors.As(err, &ce) && ce.code == weir.ErrJobNotRetryable {
			st, _, _ := strings.Cut(ce.detail, " ")
			return engine.RetryResult{State: weir.State(st)}, err
		}
		return engine.RetryResult{}, err
	}
	r := newReader(v)
	res := engine.RetryResult{State: weir.State(r.str()), RunAt: r.time()}
	res.Pushed = r.pushed()
	return res, r.done()
}
