package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/weirflow/weir/engine"
)

// The handlers of the REST API (spec/rest.md) and the JSON bodies they
// answer with.

// page is the body of GET /v1/workflows.
type page struct {
	Workflows []record `json:"workflows"`
	// NextCursor is null on the last page.
	NextCursor *string `json:"next_cursor"`
}

// cancelRec is the body of POST /v1/workflows/{id}/cancel.
type cancelRec struct {
	ID        string   `json:"id"`
	State     string   `json:"state"`
	Cancelled []string `json:"cancelled"`
	Stopping  []string `json:"stopping"`
}

// queueRec is one queue of GET /v1/queues.
type queueRec struct {
	Name    string `json:"name"`
	Paused  bool   `json:"paused"`
	Ready   int    `json:"ready"`
	Delayed int    `json:"delayed"`
	Running int    `json:"running"`
}

// jobRec is the body of GET /v1/jobs/{id}.
type jobRec struct {
	ID              string     `json:"id"`
	Queue           string     `json:"queue"`
	Workflow        *string    `json:"workflow"`
	Task            *string    `json:"task"`
	Undo            bool       `json:"undo"`
	State           string     `json:"state"`
	Attempts        int        `json:"attempts"`
	MaxAttempts     int        `json:"max_attempts"`
	Priority        int        `json:"priority"`
	BackoffMS       int64      `json:"backoff_ms"`
	TimeoutMS       int64      `json:"timeout_ms"`
	Payload         any        `json:"payload"`
	Result          any        `json:"result"`
	Error           *string    `json:"error"`
	CancelRequested bool       `json:"cancel_requested"`
	RunAt           *time.Time `json:"run_at"`
	LeaseDeadline   *time.Time `json:"lease_deadline"`
	CreatedAt       *time.Time `json:"created_at"`
	EndedAt         *time.Time `json:"ended_at"`
	ExpiresAt       *time.Time `json:"expires_at"`
}

// toJobRec converts a job snapshot into its record. The lease token is left
// out: it lets its holder finish the job.
func toJobRec(j engine.Job) jobRec {
	r := jobRec{
		ID: j.ID, Queue: j.Queue, Workflow: optString(j.Workflow), Task: optString(j.Task), Undo: j.Undo,
		State: string(j.State), Attempts: j.Attempt, MaxAttempts: max(j.MaxAttempts, 1), Priority: j.Priority,
		BackoffMS: j.Backoff.Milliseconds(), TimeoutMS: j.Timeout.Milliseconds(),
		Payload: decodeResult(j.Payload), Error: optString(j.Error), CancelRequested: j.CancelRequested,
		RunAt: optTime(j.RunAt), CreatedAt: optTime(j.CreatedAt), EndedAt: optTime(j.EndedAt), ExpiresAt: optTime(j.ExpiresAt),
	}
	if j.State == engine.Completed {
		r.Result = decodeResult(j.Result)
	}
	if j.Lease != nil {
		r.LeaseDeadline = optTime(j.Lease.Deadline)
	}
	return r
}

func (a *api) healthz(w http.ResponseWriter, r *http.Request) {
	var err error
	if a.cfg.Ping != nil {
		err = a.cfg.Ping(r.Context())
	} else {
		_, err = a.store.Queues(r.Context())
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, apiError{Code: engine.ErrUnavailable.Code, Message: "the store does not answer: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (a *api) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(openAPIDoc)
}

func (a *api) listWorkflows(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := engine.ListParams{State: engine.WorkflowState(q.Get("state")), Cursor: q.Get("cursor")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, apiError{Code: engine.ErrInvalid.Code, Field: "limit", Message: fmt.Sprintf("limit %q is not an integer from 1 to 1000", s)})
			return
		}
		p.Limit = n
	}
	pg, err := a.store.ListWorkflows(r.Context(), p)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	body := page{Workflows: make([]record, len(pg.Workflows)), NextCursor: optString(pg.NextCursor)}
	for i, wf := range pg.Workflows {
		body.Workflows[i] = toRecord(wf)
	}
	writeJSON(w, http.StatusOK, body)
}

func (a *api) getWorkflow(w http.ResponseWriter, r *http.Request) {
	wf, err := a.store.GetWorkflow(r.Context(), r.PathValue("id"))
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toRecord(wf))
}

// submitWorkflow takes a workflow file (spec/workflow-file.md) as JSON, or
// as YAML with a YAML content type. Its commands have no file directory:
// they run in the working directory of the worker that claims them.
func (a *api) submitWorkflow(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	yamlBody := ct == "application/yaml" || ct == "application/x-yaml" || ct == "text/yaml"
	if !yamlBody && !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		writeError(w, http.StatusBadRequest, apiError{Code: engine.ErrInvalid.Code, Message: "the body must be a JSON object: the workflow file as JSON (spec/workflow-file.md)"})
		return
	}
	lf, err := parseFile("workflow", body, "", a.cfg.Limits)
	if err != nil {
		e := apiError{Code: engine.ErrInvalid.Code, Message: err.Error()}
		var fe *FileError
		if errors.As(err, &fe) {
			e.Field, e.Task = fileErrorField(fe, body)
		}
		writeError(w, http.StatusBadRequest, e)
		return
	}
	res, err := a.store.Submit(r.Context(), engine.SubmitParams{Plan: lf.Plan})
	if err != nil {
		var ve *engine.ValidationError
		switch {
		case errors.As(err, &ve) && ve.Task != "":
			// Name the field by its path in the body.
			for i, t := range lf.Plan.Tasks {
				if t.Name == ve.Task {
					ve = &engine.ValidationError{Task: ve.Task, Field: fmt.Sprintf("tasks[%d].%s", i, ve.Field), Problem: ve.Problem, TooLarge: ve.TooLarge}
					err = ve
				}
			}
		case errors.Is(err, engine.ErrWorkflowExists):
			writeError(w, http.StatusConflict, apiError{Code: engine.ErrWorkflowExists.Code, Field: "id", Message: fmt.Sprintf("a workflow %q exists with a different plan", lf.Plan.ID)})
			return
		}
		a.storeError(w, r, err)
		return
	}
	wf, err := a.store.GetWorkflow(r.Context(), lf.Plan.ID)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
		w.Header().Set("Location", "/v1/workflows/"+lf.Plan.ID)
	}
	writeJSON(w, status, toRecord(wf))
}

// readBody reads the request body up to the API's limit; past it, it
// answers 413 and returns false.
func (a *api) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	tooLarge := apiError{Code: engine.ErrTooLarge.Code, Message: fmt.Sprintf("the request body is over the limit of %d bytes", a.cfg.MaxBody)}
	if r.ContentLength > a.cfg.MaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
		} else {
			writeError(w, http.StatusBadRequest, apiError{Code: engine.ErrInvalid.Code, Message: "read the request body: " + err.Error()})
		}
		return nil, false
	}
	return body, true
}

// fileErrorField returns the path in the body of a FileError's field
// (tasks[1].after, id) and the name of its task when it has one.
func fileErrorField(fe *FileError, body []byte) (field, task string) {
	join := func(prefix string) string {
		if fe.Field == "" {
			return prefix
		}
		return prefix + "." + fe.Field
	}
	switch {
	case fe.Task == "":
		return fe.Field, ""
	case strings.HasPrefix(fe.Task, "tasks["):
		return join(fe.Task), ""
	}
	name, err := strconv.Unquote(strings.TrimPrefix(fe.Task, "task "))
	if err != nil {
		return fe.Field, ""
	}
	// YAML reads JSON too: find the task's index by its name.
	var doc struct {
		Tasks []any `yaml:"tasks"`
	}
	// A duplicate name is reported at its second use.
	skip := 0
	if fe.Field == "name" && strings.HasPrefix(fe.Problem, "duplicate") {
		skip = 1
	}
	if yaml.Unmarshal(body, &doc) == nil {
		for i, t := range doc.Tasks {
			if m, ok := t.(map[string]any); ok && m["name"] == name {
				if skip > 0 {
					skip--
					continue
				}
				return join(fmt.Sprintf("tasks[%d]", i)), name
			}
		}
	}
	return fe.Field, name
}

func (a *api) cancelWorkflow(w http.ResponseWriter, r *http.Request) {
	p := engine.CancelWorkflowParams{ID: r.PathValue("id")}
	if s := r.URL.Query().Get("undo"); s != "" {
		undo, err := strconv.ParseBool(s)
		if err != nil {
			writeError(w, http.StatusBadRequest, apiError{Code: engine.ErrInvalid.Code, Field: "undo", Message: fmt.Sprintf("undo %q is not true or false", s)})
			return
		}
		p.Undo = &undo
	}
	res, err := a.store.CancelWorkflow(r.Context(), p)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	body := cancelRec{ID: p.ID, State: string(res.WorkflowState), Cancelled: res.Cancelled, Stopping: res.Stopping}
	if body.Cancelled == nil {
		body.Cancelled = []string{}
	}
	if body.Stopping == nil {
		body.Stopping = []string{}
	}
	writeJSON(w, http.StatusOK, body)
}

func (a *api) getJob(w http.ResponseWriter, r *http.Request) {
	j, err := a.store.GetJob(r.Context(), r.PathValue("id"))
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toJobRec(j))
}

func (a *api) listQueues(w http.ResponseWriter, r *http.Request) {
	qs, err := a.store.Queues(r.Context())
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	body := struct {
		Queues []queueRec `json:"queues"`
	}{Queues: make([]queueRec, len(qs))}
	for i, q := range qs {
		body.Queues[i] = queueRec{Name: q.Name, Paused: q.Paused, Ready: q.Ready, Delayed: q.Delayed, Running: q.Running}
	}
	writeJSON(w, http.StatusOK, body)
}

func (a *api) pauseQueue(w http.ResponseWriter, r *http.Request)  { a.setPaused(w, r, true) }
func (a *api) resumeQueue(w http.ResponseWriter, r *http.Request) { a.setPaused(w, r, false) }

func (a *api) setPaused(w http.ResponseWriter, r *http.Request, pause bool) {
	name := r.PathValue("name")
	if !engine.ValidName(name) {
		writeError(w, http.StatusBadRequest, apiError{Code: engine.ErrInvalid.Code, Field: "name", Message: fmt.Sprintf("queue name %q must match ^[A-Za-z0-9_.-]{1,64}$", name)})
		return
	}
	f := a.store.ResumeQueue
	if pause {
		f = a.store.PauseQueue
	}
	if err := f(r.Context(), name); err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Name   string `json:"name"`
		Paused bool   `json:"paused"`
	}{name, pause})
}
