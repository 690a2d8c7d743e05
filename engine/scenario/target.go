package scenario

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"time"

	"github.com/weirflow/weir/engine"
)

// Target is what a scenario runs against: the transitions of engine.Store,
// each given the scenario's clock. A store whose clock the caller controls
// (a test-only clock argument, or a fake clock) adapts to it directly; the
// Model is the reference (NewModelTarget).
//
// Time never goes backwards within a scenario. Errors are compared by their
// result code (weir.Error.Code; an *weir.ValidationError is INVALID, or
// TOOLARGE when it says so), so a target may wrap them.
type Target interface {
	Submit(ctx context.Context, now time.Time, p engine.SubmitParams) (engine.SubmitResult, error)
	Enqueue(ctx context.Context, now time.Time, p engine.EnqueueParams) (engine.EnqueueResult, error)
	// Claim never blocks: a scenario's claim has Wait 0.
	Claim(ctx context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, error)
	Finish(ctx context.Context, now time.Time, p engine.FinishParams) (engine.FinishResult, error)
	Heartbeat(ctx context.Context, now time.Time, p engine.HeartbeatParams) ([]engine.LeaseStatus, error)
	ExpireLeases(ctx context.Context, now time.Time, p engine.ExpireParams) (engine.ExpireResult, error)
	Progress(ctx context.Context, now time.Time, p engine.ProgressParams) error
	CancelWorkflow(ctx context.Context, now time.Time, p engine.CancelWorkflowParams) (engine.CancelResult, error)
	CancelJob(ctx context.Context, now time.Time, p engine.CancelJobParams) (engine.CancelResult, error)
	GetWorkflow(ctx context.Context, now time.Time, id string) (weir.Workflow, error)
	GetJob(ctx context.Context, now time.Time, id string) (weir.Job, error)
	ListWorkflows(ctx context.Context, now time.Time, p weir.ListParams) (weir.WorkflowPage, error)
	ListJobs(ctx context.Context, now time.Time, p weir.ListJobsParams) (weir.JobPage, error)
	RetryJob(ctx context.Context, now time.Time, p engine.RetryJobParams) (engine.RetryResult, error)
	DeleteJob(ctx context.Context, now time.Time, id string) error
	DeleteWorkflow(ctx context.Context, now time.Time, id string) error
	RerunWorkflow(ctx context.Context, now time.Time, p engine.RerunWorkflowParams) (engine.RerunResult, error)
	PauseQueue(ctx context.Context, now time.Time, queue string) error
	LimitQueue(ctx context.Context, now time.Time, p engine.LimitQueueParams) error
	LimitKeys(ctx context.Context, now time.Time, p engine.LimitKeysParams) error
	ResumeQueue(ctx context.Context, now time.Time, queue string) error
	PurgeQueue(ctx context.Context, now time.Time, queue string) (engine.PurgeResult, error)
	Queues(ctx context.Context, now time.Time) ([]weir.QueueInfo, error)
	// QueueContents returns the job IDs a queue holds, in claim order, due
	// order and deadline order (engine.Model.QueueContents). A target that
	// cannot list them returns an error matching errors.ErrUnsupported; the
	// runner then skips "expect queue" lines and says so in Result.Skipped.
	QueueContents(ctx context.Context, now time.Time, queue string) (engine.QueueContents, error)
	RateLimitQueue(ctx context.Context, now time.Time, p engine.RateLimitQueueParams) error
	// ClaimDue claims as Claim does and, when it claimed nothing, also
	// returns the time a blocking claim would sleep until at most (zero:
	// none). A target that cannot tell returns an error matching
	// errors.ErrUnsupported after a claim that took nothing; the runner
	// then skips the comparison of "due" lines and says so in
	// Result.Skipped.
	ClaimDue(ctx context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, time.Time, error)
}

// ModelTarget runs scenarios against an engine.Model.
type ModelTarget struct {
	M engine.Namespace
}

// NewModelTarget returns a target over a new Model with cfg (a Scenario's
// Config).
func NewModelTarget(cfg engine.Config) *ModelTarget {
	return &ModelTarget{M: engine.NewNamespace(cfg)}
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

// Progress calls Model.Progress.
func (t *ModelTarget) Progress(_ context.Context, now time.Time, p engine.ProgressParams) error {
	return t.M.Progress(now, p)
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
func (t *ModelTarget) GetWorkflow(_ context.Context, now time.Time, id string) (weir.Workflow, error) {
	return t.M.GetWorkflow(now, id)
}

// GetJob calls Model.GetJob.
func (t *ModelTarget) GetJob(_ context.Context, now time.Time, id string) (weir.Job, error) {
	return t.M.GetJob(now, id)
}

// ListWorkflows calls Model.ListWorkflows.
func (t *ModelTarget) ListWorkflows(_ context.Context, now time.Time, p weir.ListParams) (weir.WorkflowPage, error) {
	return t.M.ListWorkflows(now, p)
}

// LimitKeys calls Model.LimitKeys.
func (t *ModelTarget) LimitKeys(_ context.Context, now time.Time, p engine.LimitKeysParams) error {
	return t.M.LimitKeys(now, p)
}

// LimitQueue calls Model.LimitQueue.
func (t *ModelTarget) LimitQueue(_ context.Context, now time.Time, p engine.LimitQueueParams) error {
	return t.M.LimitQueue(now, p)
}

// ListJobs calls Model.ListJobs.
func (t *ModelTarget) ListJobs(_ context.Context, now time.Time, p weir.ListJobsParams) (weir.JobPage, error) {
	return t.M.ListJobs(now, p)
}

// RetryJob calls Model.RetryJob.
func (t *ModelTarget) RetryJob(_ context.Context, now time.Time, p engine.RetryJobParams) (engine.RetryResult, error) {
	return t.M.RetryJob(now, p)
}

// DeleteJob calls Model.DeleteJob.
func (t *ModelTarget) DeleteJob(_ context.Context, now time.Time, id string) error {
	return t.M.DeleteJob(now, id)
}

// DeleteWorkflow calls Model.DeleteWorkflow.
func (t *ModelTarget) DeleteWorkflow(_ context.Context, now time.Time, id string) error {
	return t.M.DeleteWorkflow(now, id)
}

// RerunWorkflow calls Model.RerunWorkflow.
func (t *ModelTarget) RerunWorkflow(_ context.Context, now time.Time, p engine.RerunWorkflowParams) (engine.RerunResult, error) {
	return t.M.RerunWorkflow(now, p)
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
func (t *ModelTarget) Queues(_ context.Context, now time.Time) ([]weir.QueueInfo, error) {
	return t.M.Queues(now), nil
}

// QueueContents calls Model.QueueContents.
func (t *ModelTarget) QueueContents(_ context.Context, now time.Time, queue string) (engine.QueueContents, error) {
	return t.M.QueueContents(now, queue), nil
}

// StoreTarget runs scenarios against an engine.Store made with a clock
// the caller controls (redisstore.Options.Clock, memstore.WithClock): each call
// first sets that clock to the scenario's time with SetClock, then calls
// the store. QueueContents calls the store's own QueueContents method
// (redisstore.Store and the conformance suite's stores have one); a store without
// it answers errors.ErrUnsupported, so the runner skips "expect queue".
type StoreTarget struct {
	Store    engine.Store
	SetClock func(time.Time)
}

var _ Target = (*StoreTarget)(nil)

// Submit calls Store.Submit at now.
func (t *StoreTarget) Submit(ctx context.Context, now time.Time, p engine.SubmitParams) (engine.SubmitResult, error) {
	t.SetClock(now)
	return t.Store.Submit(ctx, p)
}

// Enqueue calls Store.Enqueue at now.
func (t *StoreTarget) Enqueue(ctx context.Context, now time.Time, p engine.EnqueueParams) (engine.EnqueueResult, error) {
	t.SetClock(now)
	return t.Store.Enqueue(ctx, p)
}

// Claim calls Store.Claim at now.
func (t *StoreTarget) Claim(ctx context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, error) {
	t.SetClock(now)
	return t.Store.Claim(ctx, p)
}

// Finish calls Store.Finish at now.
func (t *StoreTarget) Finish(ctx context.Context, now time.Time, p engine.FinishParams) (engine.FinishResult, error) {
	t.SetClock(now)
	return t.Store.Finish(ctx, p)
}

// Heartbeat calls Store.Heartbeat at now.
func (t *StoreTarget) Heartbeat(ctx context.Context, now time.Time, p engine.HeartbeatParams) ([]engine.LeaseStatus, error) {
	t.SetClock(now)
	return t.Store.Heartbeat(ctx, p)
}

// Progress calls Store.Progress at now.
func (t *StoreTarget) Progress(ctx context.Context, now time.Time, p engine.ProgressParams) error {
	t.SetClock(now)
	return t.Store.Progress(ctx, p)
}

// ExpireLeases calls Store.ExpireLeases at now.
func (t *StoreTarget) ExpireLeases(ctx context.Context, now time.Time, p engine.ExpireParams) (engine.ExpireResult, error) {
	t.SetClock(now)
	return t.Store.ExpireLeases(ctx, p)
}

// CancelWorkflow calls Store.CancelWorkflow at now.
func (t *StoreTarget) CancelWorkflow(ctx context.Context, now time.Time, p engine.CancelWorkflowParams) (engine.CancelResult, error) {
	t.SetClock(now)
	return t.Store.CancelWorkflow(ctx, p)
}

// CancelJob calls Store.CancelJob at now.
func (t *StoreTarget) CancelJob(ctx context.Context, now time.Time, p engine.CancelJobParams) (engine.CancelResult, error) {
	t.SetClock(now)
	return t.Store.CancelJob(ctx, p)
}

// GetWorkflow calls Store.GetWorkflow at now.
func (t *StoreTarget) GetWorkflow(ctx context.Context, now time.Time, id string) (weir.Workflow, error) {
	t.SetClock(now)
	return t.Store.GetWorkflow(ctx, id)
}

// GetJob calls Store.GetJob at now.
func (t *StoreTarget) GetJob(ctx context.Context, now time.Time, id string) (weir.Job, error) {
	t.SetClock(now)
	return t.Store.GetJob(ctx, id)
}

// ListWorkflows calls Store.ListWorkflows at now.
func (t *StoreTarget) ListWorkflows(ctx context.Context, now time.Time, p weir.ListParams) (weir.WorkflowPage, error) {
	t.SetClock(now)
	return t.Store.ListWorkflows(ctx, p)
}

// LimitKeys calls Store.LimitKeys at now.
func (t *StoreTarget) LimitKeys(ctx context.Context, now time.Time, p engine.LimitKeysParams) error {
	t.SetClock(now)
	return t.Store.LimitKeys(ctx, p)
}

// LimitQueue calls Store.LimitQueue at now.
func (t *StoreTarget) LimitQueue(ctx context.Context, now time.Time, p engine.LimitQueueParams) error {
	t.SetClock(now)
	return t.Store.LimitQueue(ctx, p)
}

// ListJobs calls Store.ListJobs at now.
func (t *StoreTarget) ListJobs(ctx context.Context, now time.Time, p weir.ListJobsParams) (weir.JobPage, error) {
	t.SetClock(now)
	return t.Store.ListJobs(ctx, p)
}

// RetryJob calls Store.RetryJob at now.
func (t *StoreTarget) RetryJob(ctx context.Context, now time.Time, p engine.RetryJobParams) (engine.RetryResult, error) {
	t.SetClock(now)
	return t.Store.RetryJob(ctx, p)
}

// DeleteJob calls Store.DeleteJob at now.
func (t *StoreTarget) DeleteJob(ctx context.Context, now time.Time, id string) error {
	t.SetClock(now)
	return t.Store.DeleteJob(ctx, id)
}

// DeleteWorkflow calls Store.DeleteWorkflow at now.
func (t *StoreTarget) DeleteWorkflow(ctx context.Context, now time.Time, id string) error {
	t.SetClock(now)
	return t.Store.DeleteWorkflow(ctx, id)
}

// RerunWorkflow calls Store.RerunWorkflow at now.
func (t *StoreTarget) RerunWorkflow(ctx context.Context, now time.Time, p engine.RerunWorkflowParams) (engine.RerunResult, error) {
	t.SetClock(now)
	return t.Store.RerunWorkflow(ctx, p)
}

// PauseQueue calls Store.PauseQueue at now.
func (t *StoreTarget) PauseQueue(ctx context.Context, now time.Time, queue string) error {
	t.SetClock(now)
	return t.Store.PauseQueue(ctx, queue)
}

// ResumeQueue calls Store.ResumeQueue at now.
func (t *StoreTarget) ResumeQueue(ctx context.Context, now time.Time, queue string) error {
	t.SetClock(now)
	return t.Store.ResumeQueue(ctx, queue)
}

// PurgeQueue calls Store.PurgeQueue at now.
func (t *StoreTarget) PurgeQueue(ctx context.Context, now time.Time, queue string) (engine.PurgeResult, error) {
	t.SetClock(now)
	return t.Store.PurgeQueue(ctx, queue)
}

// Queues calls Store.Queues at now.
func (t *StoreTarget) Queues(ctx context.Context, now time.Time) ([]weir.QueueInfo, error) {
	t.SetClock(now)
	return t.Store.Queues(ctx)
}

// QueueContents calls the store's QueueContents at now, or answers
// errors.ErrUnsupported when it has none.
func (t *StoreTarget) QueueContents(ctx context.Context, now time.Time, queue string) (engine.QueueContents, error) {
	t.SetClock(now)
	qi, ok := t.Store.(interface {
		QueueContents(ctx context.Context, queue string) (engine.QueueContents, error)
	})
	if !ok {
		return engine.QueueContents{}, errors.ErrUnsupported
	}
	return qi.QueueContents(ctx, queue)
}
