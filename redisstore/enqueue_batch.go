package redisstore

import (
	"context"

	"github.com/weirflow/weir/engine"
)

// EnqueueResult is what EnqueueBatch did with one job: Enqueue's result,
// or Enqueue's error for that job.
type EnqueueResult struct {
	engine.EnqueueResult
	Err error
}

// enqueuePerCall bounds the jobs of one enqueue call of EnqueueBatch.
const enqueuePerCall = 100

// EnqueueBatch enqueues each of ps exactly as Enqueue would (the same
// validation, results and errors), up to 100 jobs in one call of the
// enqueue transition and every call in one pipeline: one round trip for
// the whole batch. A job that fails validation gets its error and is not
// sent; a job whose ID exists with another spec gets ErrJobExists; the
// others are unaffected. A call whose reply was lost (a broken connection)
// gives ErrUnavailable or the context's error to its jobs: like Enqueue it
// is safe to repeat, since a job's ID makes its enqueue idempotent. The
// error is ctx's when it is done before the batch is sent.
func (pt *part) EnqueueBatch(ctx context.Context, ps []engine.EnqueueParams) ([]EnqueueResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]EnqueueResult, len(ps))
	sc := scripts["enqueue"]
	var argvs [][]any
	var jobs [][]int // per call, the indices of its jobs
	for i, p := range ps {
		if len(jobs) == 0 || len(jobs[len(jobs)-1]) == enqueuePerCall {
			argvs = append(argvs, append(pt.argv(sc, 1+enqueuePerCall*enqueueArgs), 0))
			jobs = append(jobs, nil)
		}
		k := len(argvs) - 1
		args, err := pt.appendEnqueueTraced(argvs[k], p)
		if err != nil {
			out[i].Err = err
			continue
		}
		argvs[k] = args
		jobs[k] = append(jobs[k], i)
	}
	for k := len(argvs) - 1; k >= 0; k-- {
		if len(jobs[k]) == 0 {
			argvs = append(argvs[:k], argvs[k+1:]...)
			jobs = append(jobs[:k], jobs[k+1:]...)
			continue
		}
		argvs[k][7] = len(jobs[k]) // the job count, after the common ARGV
	}
	if len(argvs) == 0 {
		return out, nil
	}
	for k, r := range pt.callMany(ctx, sc, argvs) {
		rd := newReader(r.v)
		for _, i := range jobs[k] {
			if r.err != nil {
				out[i].Err = r.err
				continue
			}
			out[i].EnqueueResult, out[i].Err = enqueueReply(rd, ps[i].Job.ID)
		}
		if rd.err != nil {
			for _, i := range jobs[k] {
				out[i] = EnqueueResult{Err: rd.err}
			}
		}
	}
	return out, nil
}
