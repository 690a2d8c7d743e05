package rest

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/spec"
	"github.com/weirflow/weir/workflowfile"
)

// The handlers of the REST API (spec/rest.md) and the JSON bodies they
// answer with.

// page is the body of GET /v1/workflows.
type page struct {
	Workflows []workflowfile.Record `json:"workflows"`
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
	// Concurrency is the queue's limit of jobs running at once; 0: none.
	Concurrency int `json:"concurrency"`
	// RateLimit is the most starts in any window of RatePeriodMS; 0: none.
	RateLimit    int   `json:"rate_limit"`
	RatePeriodMS int64 `json:"rate_period_ms"`
	// KeyConcurrency is the queue's limit of jobs of one concurrency key
	// running at once; 0: none.
	KeyConcurrency int `json:"key_concurrency"`
}

// jobRec is the body of GET /v1/jobs/{id}.
type jobRec struct {
	ID              string              `json:"id"`
	Queue           string              `json:"queue"`
	Workflow        *string             `json:"workflow"`
	Task            *string             `json:"task"`
	Undo            bool                `json:"undo"`
	State           string              `json:"state"`
	Attempts        int                 `json:"attempts"`
	MaxAttempts     int                 `json:"max_attempts"`
	Priority        int                 `json:"priority"`
	BackoffMS       int64               `json:"backoff_ms"`
	TimeoutMS       int64               `json:"timeout_ms"`
	Payload         any                 `json:"payload"`
	Result          any                 `json:"result"`
	Error           *string             `json:"error"`
	CancelRequested bool                `json:"cancel_requested"`
	RunAt           *workflowfile.Stamp `json:"run_at"`
	LeaseDeadline   *workflowfile.Stamp `json:"lease_deadline"`
	CreatedAt       *workflowfile.Stamp `json:"created_at"`
	EndedAt         *workflowfile.Stamp `json:"ended_at"`
	ExpiresAt       *workflowfile.Stamp `json:"expires_at"`
	// Progress is the job's last progress report, null when none.
	Progress *workflowfile.ProgressRecord `json:"progress"`
	Key      *string                      `json:"key"`
	// Worker is the worker of the current or last attempt, null when none
	// was named; AttemptHistory the last attempts, oldest first
	// (spec/states.md, Attempt history), [] before the first.
	Worker         *string      `json:"worker"`
	AttemptHistory []attemptRec `json:"attempt_history"`
}

// attemptRec is one attempt of a job's record.
type attemptRec struct {
	Attempt   int                 `json:"attempt"`
	Worker    *string             `json:"worker"`
	StartedAt *workflowfile.Stamp `json:"started_at"`
	EndedAt   *workflowfile.Stamp `json:"ended_at"`
	// DurationMS is how long it ran (ms), null while it runs.
	DurationMS *int64  `json:"duration_ms"`
	Outcome    *string `json:"outcome"`
	Error      *string `json:"error"`
}

// toAttemptRecs converts a job's attempt history into its records.
func toAttemptRecs(as []weir.AttemptRecord) []attemptRec {
	out := make([]attemptRec, len(as))
	for i, a := range as {
		out[i] = attemptRec{Attempt: a.Attempt, Worker: optString(a.Worker), StartedAt: optTime(a.Started), EndedAt: optTime(a.Ended),
			Outcome: optString(string(a.Outcome)), Error: optString(a.Error)}
		if !a.Ended.IsZero() {
			d := a.Duration().Milliseconds()
			out[i].DurationMS = &d
		}
	}
	return out
}

// optString is s, or nil (JSON null) when s is empty.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optTime is t as a stamp, or nil (JSON null) for the zero time.
func optTime(t time.Time) *workflowfile.Stamp {
	if t.IsZero() {
		return nil
	}
	return &workflowfile.Stamp{Time: t.UTC()}
}

// toJobRec converts a job snapshot into its record. The lease token is left
// out: it lets its holder finish the job.
func toJobRec(j weir.Job) jobRec {
	r := jobRec{
		ID: j.ID, Queue: j.Queue, Workflow: optString(j.Workflow), Task: optString(j.Task), Undo: j.Undo,
		State: string(j.State), Attempts: j.Attempt, MaxAttempts: max(j.MaxAttempts, 1), Priority: j.Priority,
		BackoffMS: j.Backoff.Milliseconds(), TimeoutMS: j.Timeout.Milliseconds(),
		Payload: shell.DecodeResult(j.Payload), Error: optString(j.Error), CancelRequested: j.CancelRequested,
		RunAt: optTime(j.RunAt), CreatedAt: optTime(j.CreatedAt), EndedAt: optTime(j.EndedAt), ExpiresAt: optTime(j.ExpiresAt),
		Progress: workflowfile.NewProgressRecord(j.Progress),
		Key:      optString(j.Key),
		Worker:   optString(j.Worker), AttemptHistory: toAttemptRecs(j.Attempts),
	}
	if j.State == weir.Completed {
		r.Result = shell.DecodeResult(j.Result)
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
		a.logError(r, http.StatusServiceUnavailable, err)
		writeError(w, http.StatusServiceUnavailable, apiError{Code: weir.ErrUnavailable.Code, Message: genericMessage[weir.ErrUnavailable.Code]})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (a *api) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = io.WriteString(w, spec.OpenAPI)
}

func (a *api) listWorkflows(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := weir.ListParams{State: weir.WorkflowState(q.Get("state")), Cursor: q.Get("cursor")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || !decimal.MatchString(s) {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "limit", Message: fmt.Sprintf("limit %q is not an integer from 1 to 1000", s)})
			return
		}
		p.Limit = n
	}
	p.Name = q.Get("name")
	p.IDPrefix = q.Get("id_prefix")
	for _, kv := range q["label"] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "label", Message: fmt.Sprintf("label %q is not <key>=<value>", kv)})
			return
		}
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		if _, dup := p.Labels[k]; dup {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "label", Message: fmt.Sprintf("label key %q is given twice: give each key once", k)})
			return
		}
		p.Labels[k] = v
	}
	pg, err := a.store.ListWorkflows(r.Context(), p)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	body := page{Workflows: make([]workflowfile.Record, len(pg.Workflows)), NextCursor: optString(pg.NextCursor)}
	for i, wf := range pg.Workflows {
		body.Workflows[i] = workflowfile.NewRecord(wf)
	}
	writeJSON(w, http.StatusOK, body)
}

// decimal is the form of an integer query parameter: digits, no sign, no
// leading zero.
var decimal = regexp.MustCompile(`^[1-9][0-9]*$`)

func (a *api) getWorkflow(w http.ResponseWriter, r *http.Request) {
	wf, err := a.store.GetWorkflow(r.Context(), r.PathValue("id"))
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, workflowfile.NewRecord(wf))
}

// submitWorkflow takes a workflow file (spec/workflow-file.md) as JSON, or
// as YAML with a YAML content type. Its commands have no file directory:
// they run in the working directory of the worker that claims them.
func (a *api) submitWorkflow(w http.ResponseWriter, r *http.Request) {
	format := workflowfile.FormatJSON
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/yaml" {
		format = workflowfile.FormatYAML // the route checked it is one of the two
	}
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	lf, err := workflowfile.Parse("workflow", body, workflowfile.Options{Format: format, Limits: a.cfg.Limits})
	if err != nil {
		e := apiError{Code: weir.ErrInvalid.Code, Message: err.Error()}
		var fe *workflowfile.Error
		if errors.As(err, &fe) {
			e.Field, e.Task = fe.Path, fe.TaskName
		}
		writeError(w, http.StatusBadRequest, e)
		return
	}
	if a.refuseShell(w, lf.Shell) {
		return
	}
	res, err := a.store.Submit(r.Context(), engine.SubmitParams{Plan: lf.Plan, TraceParent: traceParent(r), Name: lf.WorkflowName, Labels: lf.Labels})
	if err != nil {
		var ve *weir.ValidationError
		switch {
		case errors.As(err, &ve) && ve.Task != "":
			// Name the field by its path in the body.
			for i, t := range lf.Plan.Tasks {
				if t.Name == ve.Task {
					ve = &weir.ValidationError{Task: ve.Task, Field: fmt.Sprintf("tasks[%d].%s", i, ve.Field), Problem: ve.Problem, TooLarge: ve.TooLarge}
					err = ve
				}
			}
		case errors.Is(err, weir.ErrWorkflowExists):
			writeError(w, http.StatusConflict, apiError{Code: weir.ErrWorkflowExists.Code, Field: "id", Message: fmt.Sprintf("a workflow %q exists with a different plan", lf.Plan.ID)})
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
	writeJSON(w, status, workflowfile.NewRecord(wf))
}

func (a *api) cancelWorkflow(w http.ResponseWriter, r *http.Request) {
	p := engine.CancelWorkflowParams{ID: r.PathValue("id")}
	if s := r.URL.Query().Get("undo"); s != "" {
		if s != "true" && s != "false" {
			writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "undo", Message: fmt.Sprintf("undo %q is not true or false", s)})
			return
		}
		undo := s == "true"
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
		body.Queues[i] = toQueueRec(q)
	}
	writeJSON(w, http.StatusOK, body)
}

// toQueueRec is q as GET /v1/queues lists it.
func toQueueRec(q weir.QueueInfo) queueRec {
	return queueRec{Name: q.Name, Paused: q.Paused, Ready: q.Ready, Delayed: q.Delayed, Running: q.Running, Concurrency: q.Concurrency,
		RateLimit: q.RateLimit, RatePeriodMS: q.RatePeriod.Milliseconds(), KeyConcurrency: q.KeyConcurrency}
}

// limitQueue sets a queue's concurrency limit from the query's
// concurrency (0 removes it).
func (a *api) limitQueue(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !engine.ValidName(name) {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "name", Message: fmt.Sprintf("queue name %q must "+engine.NameRule, name)})
		return
	}
	v := r.URL.Query().Get("concurrency")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > engine.MaxConcurrency {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "concurrency",
			Message: fmt.Sprintf("concurrency %q must be an integer from 0 (no limit) to %d", v, engine.MaxConcurrency)})
		return
	}
	if err := a.store.LimitQueue(r.Context(), engine.LimitQueueParams{Queue: name, Concurrency: n}); err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Name        string `json:"name"`
		Concurrency int    `json:"concurrency"`
	}{name, n})
}

// limitKeys sets a queue's per-key limit from the query's concurrency (0
// removes it).
func (a *api) limitKeys(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !engine.ValidName(name) {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "name", Message: fmt.Sprintf("queue name %q must "+engine.NameRule, name)})
		return
	}
	v := r.URL.Query().Get("concurrency")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > engine.MaxConcurrency {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "concurrency",
			Message: fmt.Sprintf("concurrency %q must be an integer from 0 (no limit) to %d", v, engine.MaxConcurrency)})
		return
	}
	if err := a.store.LimitKeys(r.Context(), engine.LimitKeysParams{Queue: name, Concurrency: n}); err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Name           string `json:"name"`
		KeyConcurrency int    `json:"key_concurrency"`
	}{name, n})
}

func (a *api) pauseQueue(w http.ResponseWriter, r *http.Request)  { a.setPaused(w, r, true) }
func (a *api) resumeQueue(w http.ResponseWriter, r *http.Request) { a.setPaused(w, r, false) }

func (a *api) setPaused(w http.ResponseWriter, r *http.Request, pause bool) {
	name := r.PathValue("name")
	if !engine.ValidName(name) {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "name", Message: fmt.Sprintf("queue name %q must "+engine.NameRule, name)})
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
