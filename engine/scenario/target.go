package scenario

import (
	"context"
	"time"

	"github.com/weirflow/weir/engine"
)

// Target is what a scenario runs against: the transitions of engine.Store,
// each given the scenario's clock. A store whose clock the caller controls
// (a test-only clock argument, or a fake clock) adapts to it directly; the
// Model is the reference (NewModelTarget).
//
// Time never goes backwards within a scenario. Errors are compared by their
// result code (engine.Error.Code; an *engine.ValidationError is INVALID, or
// TOOLARGE when it says so), so a target may wrap them.
type Target interface {
	Submit(ctx context.Context, now time.Time, p engine.SubmitParams) (engine.SubmitResult, error)
	Enqueue(ctx context.Context, now time.Time, p engine.EnqueueParams) (engine.EnqueueResult, error)
	// Claim never blocks: a scenario's claim has Wait 0.
	Claim(ctx context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, error)
	Finish(ctx context.Context, now time.Time, p engine.FinishParams) (engine.FinishResult, error)
	Heartbeat(ctx context.Context, now time.Time, p engine.HeartbeatParams) ([]engine.LeaseStatus, error)
	ExpireLeases(ctx context.Context, now time.Time, p engine.ExpireParams) (engine.ExpireResult, error)
	CancelWorkflow(ctx context.Context, now time.Time, p engine.CancelWorkflowParams) (engine.CancelResult, error)
	CancelJob(ctx context.Context, now time.Time, p engine.CancelJobParams) (engine.CancelResult, error)
	GetWorkflow(ctx context.Context, now time.Time, id string) (engine.Workflow, error)
	GetJob(ctx context.Context, now time.Time, id string) (engine.Job, error)
	ListWorkflows(ctx context.Context, now time.Time, p engine.ListParams) (engine.WorkflowPage, error)
	PauseQueue(ctx context.Context, now time.Time, queue string) error
	ResumeQueue(ctx context.Context, now time.Time, queue string) error
	PurgeQueue(ctx context.Context, now time.Time, queue string) (engine.PurgeResult, error)
	Queues(ctx context.Context, now time.Time) ([]engine.QueueInfo, error)
	// QueueContents returns the job IDs a queue holds, in claim order, due
	// order and deadline order (engine.Model.QueueContents). A target that
	// cannot list them returns an error matching errors.ErrUnsupported; the
	// runner then skips "expect queue" lines and says so in Result.Skipped.
	QueueContents(ctx context.Context, now time.Time, queue string) (engine.QueueContents, error)
}

// ModelTarget runs scenarios against an engine.Model.
type ModelTarget struct {
	M *engine.Model
}

// NewModelTarget returns a target over a new Model with cfg (a Scenario's
// Config).
func NewModelTarget(cfg engine.Config) *ModelTarget {
	return &ModelTarget{M: engine.NewModel(cfg)}
}

var _ Target = (*ModelTarget)(nil)

// Submit calls Model.Submit.
func (t *ModelTarget) Submit(_ context.Context, now time.Time, p engine.SubmitParams) (engine.SubmitResult, error) {
	return t.M.Submit(now, p)
}

// Enqueue calls Model.Enqueue.
func (t *ModelTarget) Enqueue(_ context.Context, now time.Time, p engine.EnqueueParams) (engine.EnqueueResult, error) {
	return t.M.Enqueue(now, p)
}

// Claim calls Model.Claim.
func (t *ModelTarget) Claim(_ context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, error) {
	return t.M.Claim(now, p)
}

// Finish calls Model.Finish.
func (t *ModelTarget) Finish(_ context.Context, now time.Time, p engine.FinishParams) (engine.FinishResult, error) {
	return t.M.Finish(now, p)
}

// Heartbeat calls Model.Heartbeat.
func (t *ModelTarget) Heartbeat(_ context.Context, now time.Time, p engine.HeartbeatParams) ([]engine.LeaseStatus, error) {
	return t.M.Heartbeat(now, p)
}

// ExpireLeases calls Model.ExpireLeases.
func (t *ModelTarget) ExpireLeases(_ context.Context, now time.Time, p engine.ExpireParams) (engine.ExpireResult, error) {
	return t.M.ExpireLeases(now, p)
}

// CancelWorkflow calls Model.CancelWorkflow.
func (t *ModelTarget) CancelWorkflow(_ context.Context, now time.Time, p engine.CancelWorkflowParams) (engine.CancelResult, error) {
	return t.M.CancelWorkflow(now, p)
}

// CancelJob calls Model.CancelJob.
func (t *ModelTarget) CancelJob(_ context.Context, now time.Time, p engine.CancelJobParams) (engine.CancelResult, error) {
	return t.M.CancelJob(now, p)
}

// GetWorkflow calls Model.GetWorkflow.
func (t *ModelTarget) GetWorkflow(_ context.Context, now time.Time, id string) (engine.Workflow, error) {
	return t.M.GetWorkflow(now, id)
}

// GetJob calls Model.GetJob.
func (t *ModelTarget) GetJob(_ context.Context, now time.Time, id string) (engine.Job, error) {
	return t.M.GetJob(now, id)
}

// ListWorkflows calls Model.ListWorkflows.
func (t *ModelTarget) ListWorkflows(_ context.Context, now time.Time, p engine.ListParams) (engine.WorkflowPage, error) {
	return t.M.ListWorkflows(now, p)
}

// PauseQueue calls Model.PauseQueue.
func (t *ModelTarget) PauseQueue(_ context.Context, now time.Time, queue string) error {
	return t.M.PauseQueue(now, queue)
}

// ResumeQueue calls Model.ResumeQueue.
func (t *ModelTarget) ResumeQueue(_ context.Context, now time.Time, queue string) error {
	return t.M.ResumeQueue(now, queue)
}

// PurgeQueue calls Model.PurgeQueue.
func (t *ModelTarget) PurgeQueue(_ context.Context, now time.Time, queue string) (engine.PurgeResult, error) {
	return t.M.PurgeQueue(now, queue)
}

// Queues calls Model.Queues.
func (t *ModelTarget) Queues(_ context.Context, now time.Time) ([]engine.QueueInfo, error) {
	return t.M.Queues(now), nil
}

// QueueContents calls Model.QueueContents.
func (t *ModelTarget) QueueContents(_ context.Context, now time.Time, queue string) (engine.QueueContents, error) {
	return t.M.QueueContents(now, queue), nil
}
