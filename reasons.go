package weir

// The Error of a job that did not end by its own attempt: what a
// JobError's Message and a dependency's DepOutcome.Error say when weir,
// not the handler, ended or requeued the job (spec/states.md, Reason strings).
const (
	// ReasonTextWorkflowCancelled: the job's workflow was cancelled
	// before the job started.
	ReasonTextWorkflowCancelled = "workflow cancelled"
	// ReasonTextFailFast: a FailFast workflow's failure cancelled the job
	// before it started.
	ReasonTextFailFast = "fail_fast"
	// ReasonTextJobCancelled: a cancel of the job itself ended it before
	// it ran, or a job that a cancel reached while it ran was handed back.
	ReasonTextJobCancelled = "cancelled"
	// ReasonTextPurged: its queue was purged while it waited.
	ReasonTextPurged = "purged"
	// ReasonTextLeaseExpired: its worker's lease ran out (the worker died
	// or lost the store for a lease's length).
	ReasonTextLeaseExpired = "lease_expired"
	// ReasonTextSignalTimeout: a signal task's timeout passed before its
	// signal came.
	ReasonTextSignalTimeout = "timeout"
	// ReasonTextDeadline: the workflow's deadline passed before the job
	// started (the workflow was cancelled by it).
	ReasonTextDeadline = "deadline"
	// ReasonTextNoFailure: an OnFailure task (a catch callback) did not
	// run, because every one of its dependencies completed.
	ReasonTextNoFailure = "no_failure"
)

// DependencyReason is the Error of a task cancelled because its dependency
// dep ended in state s (failed or cancelled) and the task is not Always.
func DependencyReason(dep string, s State) string { return "dependency " + dep + " " + string(s) }
