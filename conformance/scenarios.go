package conformance

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/scenario"
	"github.com/weirflow/weir/spec"
)

// loadScenarios parses the golden scenarios: the *.txt files of dir when
// given, else those embedded in package spec.
func loadScenarios(dir string) ([]*scenario.Scenario, error) {
	if dir != "" {
		return scenario.ParseFS(os.DirFS(dir), "*.txt")
	}
	return scenario.ParseFS(spec.Scenarios(), "*.txt")
}

func runScenarios(t suiteT, newStore NewStore, o options) {
	all, err := loadScenarios(o.scenarios)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatalf("no golden scenarios (dir %q)", o.scenarios)
	}
	for _, sc := range all {
		t.Run(sc.Name, func(t suiteT) {
			t.Parallel()
			clk := newClock()
			s := newStore(t, sc.Config, clk.Now)
			defer closeStore(s)
			res, err := scenario.Run(context.Background(), sc, &target{s: s, clk: clk})
			if err != nil {
				t.Fatal(err)
			}
			for _, sk := range res.Skipped {
				t.Logf("skipped (no QueueInspector): %s", sk)
			}
		})
	}
}

// target adapts a store to scenario.Target: each call first sets the
// suite's clock to the scenario's time.
type target struct {
	s   engine.Store
	clk *Clock
}

var _ scenario.Target = (*target)(nil)

func (t *target) Submit(ctx context.Context, now time.Time, p engine.SubmitParams) (engine.SubmitResult, error) {
	t.clk.Set(now)
	return t.s.Submit(ctx, p)
}
func (t *target) Enqueue(ctx context.Context, now time.Time, p engine.EnqueueParams) (engine.EnqueueResult, error) {
	t.clk.Set(now)
	return t.s.Enqueue(ctx, p)
}
func (t *target) Claim(ctx context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, error) {
	t.clk.Set(now)
	return t.s.Claim(ctx, p)
}
func (t *target) Finish(ctx context.Context, now time.Time, p engine.FinishParams) (engine.FinishResult, error) {
	t.clk.Set(now)
	return t.s.Finish(ctx, p)
}
func (t *target) Heartbeat(ctx context.Context, now time.Time, p engine.HeartbeatParams) ([]engine.LeaseStatus, error) {
	t.clk.Set(now)
	return t.s.Heartbeat(ctx, p)
}
func (t *target) ExpireLeases(ctx context.Context, now time.Time, p engine.ExpireParams) (engine.ExpireResult, error) {
	t.clk.Set(now)
	return t.s.ExpireLeases(ctx, p)
}
func (t *target) CancelWorkflow(ctx context.Context, now time.Time, p engine.CancelWorkflowParams) (engine.CancelResult, error) {
	t.clk.Set(now)
	return t.s.CancelWorkflow(ctx, p)
}
func (t *target) CancelJob(ctx context.Context, now time.Time, p engine.CancelJobParams) (engine.CancelResult, error) {
	t.clk.Set(now)
	return t.s.CancelJob(ctx, p)
}
func (t *target) GetWorkflow(ctx context.Context, now time.Time, id string) (engine.Workflow, error) {
	t.clk.Set(now)
	return t.s.GetWorkflow(ctx, id)
}
func (t *target) GetJob(ctx context.Context, now time.Time, id string) (engine.Job, error) {
	t.clk.Set(now)
	return t.s.GetJob(ctx, id)
}
func (t *target) ListWorkflows(ctx context.Context, now time.Time, p engine.ListParams) (engine.WorkflowPage, error) {
	t.clk.Set(now)
	return t.s.ListWorkflows(ctx, p)
}
func (t *target) PauseQueue(ctx context.Context, now time.Time, q string) error {
	t.clk.Set(now)
	return t.s.PauseQueue(ctx, q)
}
func (t *target) ResumeQueue(ctx context.Context, now time.Time, q string) error {
	t.clk.Set(now)
	return t.s.ResumeQueue(ctx, q)
}
func (t *target) PurgeQueue(ctx context.Context, now time.Time, q string) (engine.PurgeResult, error) {
	t.clk.Set(now)
	return t.s.PurgeQueue(ctx, q)
}
func (t *target) Queues(ctx context.Context, now time.Time) ([]engine.QueueInfo, error) {
	t.clk.Set(now)
	return t.s.Queues(ctx)
}
func (t *target) QueueContents(ctx context.Context, now time.Time, q string) (engine.QueueContents, error) {
	t.clk.Set(now)
	qi, ok := t.s.(QueueInspector)
	if !ok {
		return engine.QueueContents{}, errors.ErrUnsupported
	}
	return qi.QueueContents(ctx, q)
}
