package weir

import "strings"

// The names of a chain's or batch's callback tasks end with these, after
// the group's name and a dot: group "emails" has "emails.then",
// "emails.catch" and "emails.finally" (client.Chain, client.Batch).
const (
	GroupThen    = "then"
	GroupCatch   = "catch"
	GroupFinally = "finally"
)

// GroupSummary is what a chain's or batch's callback knows of the group's
// steps, from its dependencies' outcomes.
type GroupSummary struct {
	// Total counts the steps, with the tasks a step added at run time
	// with GateDependents (they are the callbacks' dependencies too);
	// Completed, Failed and Cancelled count them by how they ended (a
	// chain's steps after a failed one are cancelled).
	Total, Completed, Failed, Cancelled int
	// FirstFailure is the first step, in the group's order, that failed,
	// or if none failed the first that was cancelled; nil when every step
	// completed.
	FirstFailure *DepOutcome
}

// SummarizeGroup returns the summary that the task named task (a group's
// callback) sees in its dependencies' outcomes deps: every dependency
// counts as a step, except the group's own callbacks (a Finally waits for
// Then and Catch too), so tasks a step added with GateDependents count.
// For a task that is no group's callback, every dependency counts.
func SummarizeGroup(task string, deps []DepOutcome) GroupSummary {
	prefix := ""
	if i := strings.LastIndexByte(task, '.'); i >= 0 {
		switch task[i+1:] {
		case GroupThen, GroupCatch, GroupFinally:
			prefix = task[:i+1]
		}
	}
	var s GroupSummary
	var firstCancelled *DepOutcome
	for k := range deps {
		d := &deps[k]
		if prefix != "" && strings.HasPrefix(d.Task, prefix) {
			switch d.Task[len(prefix):] {
			case GroupThen, GroupCatch, GroupFinally:
				continue
			}
		}
		s.Total++
		switch d.State {
		case Completed:
			s.Completed++
		case Failed:
			s.Failed++
			if s.FirstFailure == nil {
				s.FirstFailure = d
			}
		default:
			s.Cancelled++
			if firstCancelled == nil {
				firstCancelled = d
			}
		}
	}
	if s.FirstFailure == nil {
		s.FirstFailure = firstCancelled
	}
	return s
}
