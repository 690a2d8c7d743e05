package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// Acting on many jobs of a queue at once (spec/rest.md, "Many jobs of a
// queue"): retry, cancel or delete the jobs of one of its lists, or the
// jobs named, a bounded number a call.

// MaxBulkJobs is the most jobs one RetryJobs, CancelJobs or DeleteJobs
// call looks at: the Limit of its JobsParams is 1 to MaxBulkJobs (0 means
// DefaultBulkJobs), and it takes at most MaxBulkJobs IDs.
const MaxBulkJobs = 1000

// DefaultBulkJobs is the Limit of a JobsParams when 0.
const DefaultBulkJobs = 100

// JobsParams chooses the jobs of a queue that RetryJobs, CancelJobs or
// DeleteJobs act on: those named by IDs, or else the first Limit of the
// queue's list State from Cursor.
type JobsParams struct {
	// Queue is the queue's name; a job named in IDs that is not in it is
	// skipped.
	Queue string
	// State is the list (weir.ListFailed, ...) whose jobs are acted on,
	// in the list's order, when IDs is empty. Retry takes failed or
	// cancelled, Delete the ended lists (failed, cancelled, completed),
	// Cancel the waiting and running ones (ready, delayed, running).
	State weir.JobList
	// IDs names the jobs to act on, at most MaxBulkJobs; State, Limit and
	// Cursor are then not given.
	IDs []string
	// Limit is how many jobs of the list the call looks at, 1 to
	// MaxBulkJobs; 0 means DefaultBulkJobs.
	Limit int
	// Cursor is the previous call's NextCursor: the call goes on after
	// the jobs that call looked at (those it skipped stay in the list).
	Cursor string
}

// JobsResult is what RetryJobs, CancelJobs or DeleteJobs did.
type JobsResult struct {
	// Done are the IDs of the jobs acted on, in order: retried, cancelled
	// (a running job told to stop is among them) or deleted.
	Done []string
	// Skipped are the jobs looked at and left as they were, with why.
	Skipped []SkippedJob
	// NextCursor is set when the list has more jobs after those looked
	// at: pass it as the next call's Cursor. Empty with IDs.
	NextCursor string
}

// SkippedJob is a job a bulk action left as it was.
type SkippedJob struct {
	ID string
	// Code is the result code of why (spec/errors.md): NOTRETRYABLE,
	// JOBENDED, NOTENDED, NOTFOUND or INVALID.
	Code    string
	Message string
}

// bulkAction is one of the actions of a bulk call.
type bulkAction struct {
	verb  string         // "retry", "cancel", "delete"
	lists []weir.JobList // the lists it takes
	skip  func(weir.Job) *SkippedJob
	do    func(ctx context.Context, s Store, id string) error
}

var (
	bulkRetry = bulkAction{verb: "retry", lists: []weir.JobList{weir.ListFailed, weir.ListCancelled},
		skip: func(j weir.Job) *SkippedJob {
			switch {
			case j.Workflow != "":
				return &SkippedJob{j.ID, weir.ErrJobNotRetryable.Code, "a workflow's job: re-run its workflow"}
			case j.State != weir.Failed && j.State != weir.Cancelled:
				return &SkippedJob{j.ID, weir.ErrJobNotRetryable.Code, fmt.Sprintf("%s: only a job that ended failed or cancelled is retried", j.State)}
			}
			return nil
		},
		do: func(ctx context.Context, s Store, id string) error {
			_, err := s.RetryJob(ctx, engine.RetryJobParams{ID: id})
			return err
		}}
	bulkCancel = bulkAction{verb: "cancel", lists: []weir.JobList{weir.ListReady, weir.ListDelayed, weir.ListRunning},
		skip: func(j weir.Job) *SkippedJob {
			switch {
			case j.State.Ended():
				return &SkippedJob{j.ID, weir.ErrJobEnded.Code, fmt.Sprintf("%s: it has ended", j.State)}
			case j.CancelRequested:
				return &SkippedJob{j.ID, weir.ErrJobEnded.Code, "its cancel is requested already"}
			}
			return nil
		},
		do: func(ctx context.Context, s Store, id string) error {
			_, err := s.CancelJob(ctx, engine.CancelJobParams{ID: id})
			return err
		}}
	bulkDelete = bulkAction{verb: "delete", lists: []weir.JobList{weir.ListFailed, weir.ListCancelled, weir.ListCompleted},
		skip: func(j weir.Job) *SkippedJob {
			switch {
			case j.Workflow != "":
				return &SkippedJob{j.ID, weir.ErrInvalid.Code, "a workflow's job: delete its workflow"}
			case !j.State.Ended():
				return &SkippedJob{j.ID, weir.ErrNotEnded.Code, fmt.Sprintf("%s: only an ended job is deleted", j.State)}
			}
			return nil
		},
		do: func(ctx context.Context, s Store, id string) error { return s.DeleteJob(ctx, id) }}
)

// RetryJobs runs again the plain jobs chosen by p that ended failed or
// cancelled (as RetryJob, now); a workflow's job, or one in another
// state, is skipped. p.State, when given, is failed or cancelled.
func (c *Client) RetryJobs(ctx context.Context, p JobsParams) (JobsResult, error) {
	return bulk(ctx, c.store, bulkRetry, p)
}

// CancelJobs cancels the jobs chosen by p that have not ended (as
// CancelJob: a running one is told to stop); an ended job, or one whose
// cancel is requested, is skipped. p.State, when given, is ready, delayed
// or running.
func (c *Client) CancelJobs(ctx context.Context, p JobsParams) (JobsResult, error) {
	return bulk(ctx, c.store, bulkCancel, p)
}

// DeleteJobs deletes the plain jobs chosen by p that ended (as
// DeleteJob); a workflow's job, or one that has not ended, is skipped.
// p.State, when given, is failed, cancelled or completed.
func (c *Client) DeleteJobs(ctx context.Context, p JobsParams) (JobsResult, error) {
	return bulk(ctx, c.store, bulkDelete, p)
}

// ValidateJobsParams checks p for the bulk action verb (retry, cancel or
// delete) before anything is read: a bad queue, list, limit, cursor with
// IDs, or too many IDs is a *weir.ValidationError naming the field.
func ValidateJobsParams(verb string, p JobsParams) error {
	var a bulkAction
	switch verb {
	case "retry":
		a = bulkRetry
	case "cancel":
		a = bulkCancel
	case "delete":
		a = bulkDelete
	default:
		return &weir.ValidationError{Field: "action", Problem: fmt.Sprintf("%q is not retry, cancel or delete", verb)}
	}
	return a.validate(p)
}

func (a bulkAction) validate(p JobsParams) error {
	invalid := func(field, format string, args ...any) error {
		return &weir.ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case !engine.ValidName(p.Queue):
		return invalid("queue", "queue name %q must "+engine.NameRule, p.Queue)
	case len(p.IDs) > 0 && (p.State != "" || p.Limit != 0 || p.Cursor != ""):
		return invalid("ids", "give ids, or a state (with a limit and a cursor), not both")
	case len(p.IDs) > MaxBulkJobs:
		return invalid("ids", "%d ids: at most %d a call", len(p.IDs), MaxBulkJobs)
	case len(p.IDs) == 0 && p.State == "":
		return invalid("state", "give the list whose jobs to %s (%s), or ids", a.verb, listNames(a.lists))
	case len(p.IDs) == 0 && !slices.Contains(a.lists, p.State):
		return invalid("state", "%q: %s takes the jobs of %s", p.State, a.verb, listNames(a.lists))
	case p.Limit < 0 || p.Limit > MaxBulkJobs:
		return invalid("limit", "%d is outside [1, %d] (0: %d)", p.Limit, MaxBulkJobs, DefaultBulkJobs)
	}
	for i, id := range p.IDs {
		if id == "" {
			return invalid(fmt.Sprintf("ids[%d]", i), "an empty ID")
		}
	}
	return nil
}

func listNames(ls []weir.JobList) string {
	s := ""
	for i, l := range ls {
		switch {
		case i == 0:
		case i == len(ls)-1:
			s += " or "
		default:
			s += ", "
		}
		s += string(l)
	}
	return s
}

// bulk looks at the jobs p chooses, one store call a job: reads a page
// of the list (or each named job), then acts on each job the action
// takes. A job that changed meanwhile (the store refuses the action for
// its state, or it is gone) is skipped; any other error of the store
// ends the call with what was done so far.
func bulk(ctx context.Context, s Store, a bulkAction, p JobsParams) (JobsResult, error) {
	var res JobsResult
	if err := a.validate(p); err != nil {
		return res, err
	}
	var jobs []weir.Job
	if len(p.IDs) == 0 {
		limit := p.Limit
		if limit == 0 {
			limit = DefaultBulkJobs
		}
		page, err := s.ListJobs(ctx, weir.ListJobsParams{Queue: p.Queue, State: p.State, Limit: limit, Cursor: p.Cursor})
		if err != nil {
			return res, err
		}
		jobs, res.NextCursor = page.Jobs, page.NextCursor
	} else {
		for _, id := range p.IDs {
			j, err := s.GetJob(ctx, id)
			switch {
			case errors.Is(err, weir.ErrNotFound):
				res.Skipped = append(res.Skipped, SkippedJob{id, weir.ErrNotFound.Code, "no such job"})
				continue
			case err != nil:
				return res, err
			case j.Queue != p.Queue:
				res.Skipped = append(res.Skipped, SkippedJob{id, weir.ErrInvalid.Code, "in queue " + j.Queue + ", not " + p.Queue})
				continue
			}
			jobs = append(jobs, j)
		}
	}
	for _, j := range jobs {
		if sk := a.skip(j); sk != nil {
			res.Skipped = append(res.Skipped, *sk)
			continue
		}
		err := a.do(ctx, s, j.ID)
		if err == nil {
			res.Done = append(res.Done, j.ID)
			continue
		}
		switch e := weir.Sentinel(err); {
		case e == weir.ErrJobNotRetryable || e == weir.ErrJobEnded || e == weir.ErrNotEnded || e == weir.ErrNotFound || e == weir.ErrInvalid:
			res.Skipped = append(res.Skipped, SkippedJob{j.ID, e.Code, err.Error()})
		default:
			return res, err
		}
	}
	return res, nil
}
