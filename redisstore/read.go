package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

func (pt *part) getWorkflow(ctx context.Context, id string, evenExpired bool) (weir.Workflow, error) {
	if !engine.ValidID(id) {
		if err := ctx.Err(); err != nil {
			return weir.Workflow{}, err
		}
		return weir.Workflow{}, fmt.Errorf("%w: workflow %q", weir.ErrNotFound, id)
	}
	v, err := pt.run(ctx, "get_workflow", id, flag(evenExpired))
	if err != nil {
		return weir.Workflow{}, err
	}
	if len(v) == 1 && v[0] == "L" {
		if v, err = pt.readWorkflowHash(ctx, id); err != nil {
			return weir.Workflow{}, err
		}
	}
	return workflowFromHash(v)
}

// readWorkflowHash reads a large workflow's record, which get_workflow
// found live, as get_workflow's reply: the fields a snapshot shows
// (workflowFromHash), tasksPerPage tasks an HMGET, and the task-state
// string after them, all in one round trip. Each command is short
// whatever the workflow's size (spec/scripts.md, get_workflow). The pages
// agree with each other when the state string and the workflow's state
// fields read before and after them are the same (a task's attempt,
// result and error change only with its state byte, an undo's with urem
// or its own state); otherwise it reads again, and after three changes in
// a row it reads the whole record in one MULTI. A record removed in
// between (its TTL fired) is not found.
func (pt *part) readWorkflowHash(ctx context.Context, id string) ([]string, error) {
	key := pt.keys.workflow(id)
	for range 3 {
		pipe := pt.rdb.Pipeline()
		before := pipe.HMGet(ctx, key, wfHeaderFields...)
		st0 := pipe.Get(ctx, pt.keys.taskStates(id))
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, mapErr(err)
		}
		hv := before.Val()
		n, _ := strconv.Atoi(str(hv[len(hv)-1]))
		if hv[0] == nil || n <= 0 {
			return nil, &codeErr{code: weir.ErrNotFound, detail: "workflow " + strconv.Quote(id)}
		}
		pipe = pt.rdb.Pipeline()
		var pages []*redis.SliceCmd
		var names [][]string
		for first := 1; first <= n; first += tasksPerPage {
			fs := make([]string, 0, 8*tasksPerPage)
			for i := first; i <= min(first+tasksPerPage-1, n); i++ {
				// what workflowFromHash reads of task i and of its undo
				t, u := "t"+strconv.Itoa(i), "u"+strconv.Itoa(i)
				fs = append(fs, t, t+".a", t+".e", t+".r", t+".dp", u+".s", u+".a", u+".e", t+".pg")
			}
			names = append(names, fs)
			pages = append(pages, pipe.HMGet(ctx, key, fs...))
		}
		after := pipe.HMGet(ctx, key, wfHeaderFields...)
		st1 := pipe.Get(ctx, pt.keys.taskStates(id))
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, mapErr(err)
		}
		if st0.Val() != st1.Val() || !slices.Equal(hv, after.Val()) {
			continue // it changed while being read
		}
		out := make([]string, 0, 2*len(hv)+16*n+2)
		for k, f := range wfHeaderFields {
			if v, ok := hv[k].(string); ok {
				out = append(out, f, v)
			}
		}
		for p, page := range pages {
			for k, v := range page.Val() {
				if v, ok := v.(string); ok {
					out = append(out, names[p][k], v)
				}
			}
		}
		return append(out, "S", st1.Val()), nil
	}
	return pt.readWorkflowAtOnce(ctx, id)
}

// tasksPerPage is how many tasks one HMGET of readWorkflowHash reads.
const tasksPerPage = 500

// wfHeaderFields are the workflow fields a snapshot shows, and those that
// change when an undo does (urem), its task count last.
var wfHeaderFields = []string{"id", "st", "rs", "ff", "uoc", "cr", "cu", "h", "c", "en", "x", "wdl", "wdh", "hk", "hk.b", "run", nameField, labelsField, "urem", "rem", "n"}

// str is a reply value as a string ("" for nil).
func str(v any) string { s, _ := v.(string); return s }

// readWorkflowAtOnce reads a large workflow's hash and its task states in
// one MULTI (a workflow that kept changing while read in pages).
func (pt *part) readWorkflowAtOnce(ctx context.Context, id string) ([]string, error) {
	var h *redis.MapStringStringCmd
	var st *redis.StringCmd
	_, err := pt.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		h = p.HGetAll(ctx, pt.keys.workflow(id))
		st = p.Get(ctx, pt.keys.taskStates(id))
		return nil
	})
	if errors.Is(err, redis.Nil) || (err == nil && len(h.Val()) == 0) {
		return nil, &codeErr{code: weir.ErrNotFound, detail: "workflow " + strconv.Quote(id)}
	}
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]string, 0, 2*len(h.Val())+2)
	for f, v := range h.Val() {
		out = append(out, f, v)
	}
	return append(out, "S", st.Val()), nil
}

func (pt *part) getJob(ctx context.Context, id string, evenExpired bool) (weir.Job, error) {
	if !validJobID(id) {
		if err := ctx.Err(); err != nil {
			return weir.Job{}, err
		}
		return weir.Job{}, fmt.Errorf("%w: job %q", weir.ErrNotFound, id)
	}
	v, err := pt.run(ctx, "get_job", id, flag(evenExpired))
	if err != nil {
		return weir.Job{}, err
	}
	r := newReader(v)
	j := r.job()
	return j, r.err
}

// GetWorkflow implements engine.Store.
func (pt *part) GetWorkflow(ctx context.Context, id string) (weir.Workflow, error) {
	return pt.getWorkflow(ctx, id, false)
}

// GetJob implements engine.Store.
func (pt *part) GetJob(ctx context.Context, id string) (weir.Job, error) {
	return pt.getJob(ctx, id, false)
}
