package lua

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/scenario"
	"github.com/weirflow/weir/spec"
)

// storeTarget runs scenarios against a Store whose test clock the scenario
// sets before each call.
type storeTarget struct {
	s   *Store
	now *atomic.Int64
}

func (t *storeTarget) at(now time.Time) { t.now.Store(now.UnixMilli()) }

func (t *storeTarget) Submit(ctx context.Context, now time.Time, p engine.SubmitParams) (engine.SubmitResult, error) {
	t.at(now)
	return t.s.Submit(ctx, p)
}
func (t *storeTarget) Enqueue(ctx context.Context, now time.Time, p engine.EnqueueParams) (engine.EnqueueResult, error) {
	t.at(now)
	return t.s.Enqueue(ctx, p)
}
func (t *storeTarget) Claim(ctx context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, error) {
	t.at(now)
	return t.s.Claim(ctx, p)
}
func (t *storeTarget) Finish(ctx context.Context, now time.Time, p engine.FinishParams) (engine.FinishResult, error) {
	t.at(now)
	return t.s.Finish(ctx, p)
}
func (t *storeTarget) Heartbeat(ctx context.Context, now time.Time, p engine.HeartbeatParams) ([]engine.LeaseStatus, error) {
	t.at(now)
	return t.s.Heartbeat(ctx, p)
}
func (t *storeTarget) ExpireLeases(ctx context.Context, now time.Time, p engine.ExpireParams) (engine.ExpireResult, error) {
	t.at(now)
	return t.s.ExpireLeases(ctx, p)
}
func (t *storeTarget) CancelWorkflow(ctx context.Context, now time.Time, p engine.CancelWorkflowParams) (engine.CancelResult, error) {
	t.at(now)
	return t.s.CancelWorkflow(ctx, p)
}
func (t *storeTarget) CancelJob(ctx context.Context, now time.Time, p engine.CancelJobParams) (engine.CancelResult, error) {
	t.at(now)
	return t.s.CancelJob(ctx, p)
}
func (t *storeTarget) GetWorkflow(ctx context.Context, now time.Time, id string) (engine.Workflow, error) {
	t.at(now)
	return t.s.GetWorkflow(ctx, id)
}
func (t *storeTarget) GetJob(ctx context.Context, now time.Time, id string) (engine.Job, error) {
	t.at(now)
	return t.s.GetJob(ctx, id)
}
func (t *storeTarget) ListWorkflows(ctx context.Context, now time.Time, p engine.ListParams) (engine.WorkflowPage, error) {
	t.at(now)
	return t.s.ListWorkflows(ctx, p)
}
func (t *storeTarget) PauseQueue(ctx context.Context, now time.Time, q string) error {
	t.at(now)
	return t.s.PauseQueue(ctx, q)
}
func (t *storeTarget) ResumeQueue(ctx context.Context, now time.Time, q string) error {
	t.at(now)
	return t.s.ResumeQueue(ctx, q)
}
func (t *storeTarget) PurgeQueue(ctx context.Context, now time.Time, q string) (engine.PurgeResult, error) {
	t.at(now)
	return t.s.PurgeQueue(ctx, q)
}
func (t *storeTarget) Queues(ctx context.Context, now time.Time) ([]engine.QueueInfo, error) {
	t.at(now)
	return t.s.Queues(ctx)
}

// QueueContents reads the queue's sorted sets (their order is the claim,
// due and deadline order).
func (t *storeTarget) QueueContents(ctx context.Context, now time.Time, q string) (engine.QueueContents, error) {
	t.at(now)
	var out [3][]string
	for i, kind := range []string{"r", "d", "a"} {
		v, err := t.s.rdb.ZRange(ctx, t.s.keys.queue(q, kind), 0, -1).Result()
		if err != nil {
			return engine.QueueContents{}, err
		}
		if len(v) > 0 {
			out[i] = v
		}
	}
	return engine.QueueContents{Ready: out[0], Delayed: out[1], Running: out[2]}, nil
}

// TestGoldenScenarios replays spec/testdata against the store.
func TestGoldenScenarios(t *testing.T) {
	all, err := scenario.ParseFS(spec.Scenarios(), "*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Skip("no scenario files")
	}
	rdb := diffClient(t)
	for i, sc := range all {
		t.Run(sc.Name, func(t *testing.T) {
			ns := fmt.Sprintf("golden%d-%d", time.Now().UnixNano(), i)
			defer cleanNamespace(bg, rdb, ns)
			now := new(atomic.Int64)
			s, err := New(rdb, Options{Namespace: ns, Config: sc.Config, Clock: func() time.Time { return time.UnixMilli(now.Load()) }})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := scenario.Run(bg, sc, &storeTarget{s: s, now: now}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
