package engine

import (
	"time"

	"github.com/weirflow/weir"
)

// Namespace is the reference state machine of one namespace, whatever its
// partition count: a *Model is a namespace of one partition, a
// *Partitioned one of P > 1 (spec/partitions.md). Every transition and
// read takes the current time and behaves as the Model's method of the
// same name documents; a Partitioned routes each call to its partitions.
// Stores and tests that serve any partition count hold a Namespace made
// by NewNamespace.
type Namespace interface {
	// Config returns the namespace's configuration.
	Config() Config
	// Parts is the number of partitions; Part(i) is the Model of
	// partition i, in [0, Parts()), to read its own clock and events
	// (a Model is its own partition 0). Change a partition only through
	// the Namespace.
	Parts() int
	Part(i int) *Model
	// Now is the time of the last write (with partitions, the latest of
	// theirs).
	Now() time.Time

	Submit(now time.Time, p SubmitParams) (SubmitResult, error)
	Enqueue(now time.Time, p EnqueueParams) (EnqueueResult, error)
	Claim(now time.Time, p ClaimParams) ([]Claimed, error)
	Finish(now time.Time, p FinishParams) (FinishResult, error)
	Heartbeat(now time.Time, p HeartbeatParams) ([]LeaseStatus, error)
	ExpireLeases(now time.Time, p ExpireParams) (ExpireResult, error)
	Progress(now time.Time, p ProgressParams) error
	CancelWorkflow(now time.Time, p CancelWorkflowParams) (CancelResult, error)
	CancelJob(now time.Time, p CancelJobParams) (CancelResult, error)
	RetryJob(now time.Time, p RetryJobParams) (RetryResult, error)
	DeleteJob(now time.Time, id string) error
	DeleteWorkflow(now time.Time, id string) error
	RerunWorkflow(now time.Time, p RerunWorkflowParams) (RerunResult, error)
	Signal(now time.Time, p SignalParams) (SignalResult, error)

	GetJob(now time.Time, id string) (weir.Job, error)
	GetWorkflow(now time.Time, id string) (weir.Workflow, error)
	ListWorkflows(now time.Time, p weir.ListParams) (weir.WorkflowPage, error)
	ListJobs(now time.Time, p weir.ListJobsParams) (weir.JobPage, error)
	Queues(now time.Time) []weir.QueueInfo
	QueueContents(now time.Time, name string) QueueContents
	Stats(now time.Time) weir.Stats
	NextDue(queues []string) time.Time

	PauseQueue(now time.Time, name string) error
	ResumeQueue(now time.Time, name string) error
	LimitQueue(now time.Time, p LimitQueueParams) error
	RateLimitQueue(now time.Time, p RateLimitQueueParams) error
	LimitKeys(now time.Time, p LimitKeysParams) error
	PurgeQueue(now time.Time, name string) (PurgeResult, error)

	PutSchedule(now time.Time, p PutScheduleParams) (PutScheduleResult, error)
	DeleteSchedule(now time.Time, name string) error
	PauseSchedule(now time.Time, name string, paused bool) error
	GetSchedule(now time.Time, name string) (Schedule, error)
	Schedules(now time.Time) ScheduleList
	FireSchedule(now time.Time, p FireScheduleParams) (FireScheduleResult, error)

	TakeEvents() []weir.Event
	SetEventsOff(off bool)
	TakeSweepStops() []string
}

var (
	_ Namespace = (*Model)(nil)
	_ Namespace = (*Partitioned)(nil)
)

// NewNamespace returns an empty namespace of cfg.PartitionCount()
// partitions (at most MaxPartitions: check the count with
// Config.ValidatePartitions): a *Model for one, a *Partitioned for more.
func NewNamespace(cfg Config) Namespace {
	if min(cfg.PartitionCount(), MaxPartitions) > 1 {
		return NewPartitioned(cfg)
	}
	return NewModel(cfg)
}

// Parts is 1: a Model is one partition.
func (m *Model) Parts() int { return 1 }

// Part returns m, its own partition 0.
func (m *Model) Part(int) *Model { return m }
