package engine

// traceContext is the trace context a claim of j hands back: its
// workflow's for a task or undo job, its own for a plain job.
func (j *job) traceContext() string {
	if j.wf != nil {
		return j.wf.traceParent
	}
	return j.traceParent
}
