package rest

import (
	"fmt"
	"github.com/weirflow/weir"
	"net/http"
	"strconv"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/workflowfile"
)

// The inspector's routes (spec/rest.md, Jobs of a queue): list a queue's
// jobs by state, cancel, retry or delete a job, delete or re-run a
// workflow, purge a queue.
var inspectRoutes = []route{
	{"GET", "/v1/queues/{name}/jobs", (*api).listJobs, false, []string{"state", "limit", "cursor"}},
	{"POST", "/v1/queues/{name}/purge", (*api).purgeQueue, false, nil},
	{"POST", "/v1/jobs/{id}/cancel", (*api).cancelJob, false, nil},
	{"POST", "/v1/jobs/{id}/retry", (*api).retryJob, false, []string{"at"}},
	{"DELETE", "/v1/jobs/{id...}", (*api).deleteJob, false, nil},
	{"DELETE", "/v1/workflows/{id}", (*api).deleteWorkflow, false, nil},
	{"POST", "/v1/workflows/{id}/rerun", (*api).rerunWorkflow, false, nil},
}

func init() { routes = append(routes, inspectRoutes...) }

// jobPage is the body of GET /v1/queues/{name}/jobs.
type jobPage struct {
	Jobs []jobRec `json:"jobs"`
	// NextCursor is null on the last page.
	NextCursor *string `json:"next_cursor"`
}

// jobCancelRec is the body of POST /v1/jobs/{id}/cancel.
type jobCancelRec struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// WorkflowState is the workflow's state after the cancel, for a task or
	// undo job; null for a plain job.
	WorkflowState *string  `json:"workflow_state"`
	Cancelled     []string `json:"cancelled"`
	Stopping      []string `json:"stopping"`
}

// purgeRec is the body of POST /v1/queues/{name}/purge.
type purgeRec struct {
	Name   string   `json:"name"`
	Purged []string `json:"purged"`
}

// queueName returns the request's queue name, or answers 400 and false.
func queueName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	if !engine.ValidName(name) {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "name", Message: fmt.Sprintf("queue name %q must "+engine.NameRule, name)})
		return "", false
	}
	return name, true
}

func (a *api) listJobs(w http.ResponseWriter, r *http.Request) {
	name, ok := queueName(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	if !q.Has("state") {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "state", Message: "state is required: ready, delayed, running, failed, cancelled or completed"})
		return
	}
	p := weir.ListJobsParams{Queue: name, State: weir.JobList(q.Get("state")), Cursor: q.Get("cursor")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || !decimal.MatchString(s) {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "limit", Message: fmt.Sprintf("limit %q is not an integer from 1 to 1000", s)})
			return
		}
		p.Limit = n
	}
	pg, err := a.store.ListJobs(r.Context(), p)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	body := jobPage{Jobs: make([]jobRec, len(pg.Jobs)), NextCursor: optString(pg.NextCursor)}
	for i, j := range pg.Jobs {
		body.Jobs[i] = toJobRec(j)
	}
	writeJSON(w, http.StatusOK, body)
}

func (a *api) cancelJob(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := a.store.CancelJob(r.Context(), engine.CancelJobParams{ID: id})
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	body := jobCancelRec{ID: id, State: string(res.State), WorkflowState: optString(string(res.WorkflowState)),
		Cancelled: res.Cancelled, Stopping: res.Stopping}
	if body.Cancelled == nil {
		body.Cancelled = []string{}
	}
	if body.Stopping == nil {
		body.Stopping = []string{}
	}
	writeJSON(w, http.StatusOK, body)
}

func (a *api) purgeQueue(w http.ResponseWriter, r *http.Request) {
	name, ok := queueName(w, r)
	if !ok {
		return
	}
	res, err := a.store.PurgeQueue(r.Context(), name)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	body := purgeRec{Name: name, Purged: res.Purged}
	if body.Purged == nil {
		body.Purged = []string{}
	}
	writeJSON(w, http.StatusOK, body)
}

// jobRetryRec is the body of POST /v1/jobs/{id}/retry.
type jobRetryRec struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// RunAt is when a delayed job becomes ready; null when ready now.
	RunAt *workflowfile.Stamp `json:"run_at"`
}

func (a *api) retryJob(w http.ResponseWriter, r *http.Request) {
	p := engine.RetryJobParams{ID: r.PathValue("id")}
	if s := r.URL.Query().Get("at"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "at", Message: fmt.Sprintf("at %q is not an RFC 3339 time", s)})
			return
		}
		p.RunAt = t
	}
	res, err := a.store.RetryJob(r.Context(), p)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jobRetryRec{ID: p.ID, State: string(res.State), RunAt: optTime(res.RunAt)})
}

// rerunRec is the body of POST /v1/workflows/{id}/rerun.
type rerunRec struct {
	ID    string   `json:"id"`
	State string   `json:"state"`
	Run   int      `json:"run"`
	Reset []string `json:"reset"`
}

func (a *api) rerunWorkflow(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := a.store.RerunWorkflow(r.Context(), engine.RerunWorkflowParams{ID: id})
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	body := rerunRec{ID: id, State: string(res.WorkflowState), Run: res.Run, Reset: res.Reset}
	if body.Reset == nil {
		body.Reset = []string{}
	}
	writeJSON(w, http.StatusOK, body)
}

// deletedRec is the body of DELETE /v1/jobs/{id} and /v1/workflows/{id}.
type deletedRec struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func (a *api) deleteJob(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := a.store.DeleteJob(r.Context(), id); err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deletedRec{ID: id, Deleted: true})
}

func (a *api) deleteWorkflow(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := a.store.DeleteWorkflow(r.Context(), id); err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deletedRec{ID: id, Deleted: true})
}
