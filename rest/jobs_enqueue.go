package rest

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"mime"
	"net/http"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/workflowfile"
)

// POST /v1/jobs (spec/rest.md#enqueueing-a-job): a plain job with a JSON
// payload, for a Go handler of its queue.

// bodyFormat is the syntax of the request's body by its content type (the
// route checked it is JSON or YAML).
func bodyFormat(r *http.Request) workflowfile.Format {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/yaml" {
		return workflowfile.FormatYAML
	}
	return workflowfile.FormatJSON
}

// bodyError answers 400 for a body that does not parse or check, naming
// the field.
func bodyError(w http.ResponseWriter, err error) {
	e := apiError{Code: weir.ErrInvalid.Code, Message: err.Error()}
	var fe *workflowfile.Error
	if errors.As(err, &fe) {
		e.Field, e.Task = fe.Path, fe.TaskName
	}
	writeError(w, http.StatusBadRequest, e)
}

// enqueueJob takes a job document (workflowfile.ParseJob) as JSON or
// YAML, enqueues it and answers its record: 201 when new, 200 when the
// same job already existed under that ID, or with the record of the job
// that holds its unique key.
func (a *api) enqueueJob(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	j, err := workflowfile.ParseJob("job", body, workflowfile.Options{Format: bodyFormat(r), Limits: a.cfg.Limits})
	if err != nil {
		bodyError(w, err)
		return
	}
	if j.Shell != "" && a.refuseShell(w, []string{j.Shell}) {
		return
	}
	res, err := a.store.Enqueue(r.Context(), engine.EnqueueParams{Job: j.Spec, TraceParent: traceParent(r)})
	if err != nil {
		if errors.Is(err, weir.ErrJobExists) {
			writeError(w, http.StatusConflict, apiError{Code: weir.ErrJobExists.Code, Field: "id",
				Message: fmt.Sprintf("a job %q exists with a different queue, payload or options", j.Spec.ID)})
			return
		}
		a.storeError(w, r, err)
		return
	}
	id := j.Spec.ID
	if res.Existing != "" {
		id = res.Existing // another job holds the unique key: it is the answer
	}
	job, err := a.store.GetJob(r.Context(), id)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
		w.Header().Set("Location", "/v1/jobs/"+j.Spec.ID)
	}
	writeJSON(w, status, toJobRec(job))
}
