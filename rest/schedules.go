package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"net/http"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/workflowfile"
)

// The schedule routes of spec/rest.md (Schedules): list, put, get,
// delete, pause and resume, on a store that implements engine.Scheduler.
var scheduleRoutes = []route{
	{"GET", "/v1/schedules", (*api).listSchedules, false, nil},
	{"PUT", "/v1/schedules/{name}", (*api).putSchedule, true, nil},
	{"GET", "/v1/schedules/{name}", (*api).getSchedule, false, nil},
	{"DELETE", "/v1/schedules/{name}", (*api).deleteSchedule, false, nil},
	{"POST", "/v1/schedules/{name}/pause", (*api).pauseSchedule, false, nil},
	{"POST", "/v1/schedules/{name}/resume", (*api).resumeSchedule, false, nil},
}

func init() { routes = append(routes, scheduleRoutes...) }

// scheduleBody is the body of PUT /v1/schedules/{name}.
type scheduleBody struct {
	Cron    string          `json:"cron"`
	TZ      string          `json:"tz"`
	Every   string          `json:"every"`
	Missed  string          `json:"missed"`
	Overlap string          `json:"overlap"`
	Job     *scheduleJob    `json:"job"`
	Wf      json.RawMessage `json:"workflow"`
}

// scheduleJob is the job a schedule enqueues at each tick.
type scheduleJob struct {
	Queue       string          `json:"queue"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Priority    int             `json:"priority,omitempty"`
	MaxAttempts int             `json:"max_attempts,omitempty"`
}

// ScheduleJob is the job of a ScheduleRecord: its payload decoded (as
// the job routes show payloads).
type ScheduleJob struct {
	Queue       string `json:"queue"`
	Payload     any    `json:"payload"`
	Priority    int    `json:"priority,omitempty"`
	MaxAttempts int    `json:"max_attempts,omitempty"`
}

// ScheduleRecord is a schedule as the API and `weir schedule ls --json`
// show it.
type ScheduleRecord struct {
	Name    string `json:"name"`
	Cron    string `json:"cron,omitempty"`
	TZ      string `json:"tz,omitempty"`
	Every   string `json:"every,omitempty"`
	Missed  string `json:"missed"`
	Overlap string `json:"overlap"`
	// Job is the job each tick enqueues; Tasks name the tasks of the
	// workflow each tick submits.
	Job      *ScheduleJob        `json:"job,omitempty"`
	Tasks    []string            `json:"tasks,omitempty"`
	Paused   bool                `json:"paused"`
	Next     *workflowfile.Stamp `json:"next"`
	LastTick *workflowfile.Stamp `json:"last_tick"`
	LastID   string              `json:"last_id,omitempty"`
	Rev      int64               `json:"rev"`
}

// NewScheduleRecord is s as the API shows it.
func NewScheduleRecord(s engine.Schedule) ScheduleRecord {
	r := ScheduleRecord{Name: s.Name, Cron: s.Cron, TZ: s.TZ, Missed: string(s.Missed), Overlap: string(s.Overlap),
		Paused: s.Paused, LastID: s.LastID, Rev: s.Rev}
	if r.Missed == "" {
		r.Missed = string(weir.MissedSkip)
	}
	if r.Overlap == "" {
		r.Overlap = string(weir.OverlapAllow)
	}
	if s.Every != 0 {
		r.Every = s.Every.String()
	}
	if s.Job != nil {
		r.Job = &ScheduleJob{Queue: s.Job.Queue, Payload: shell.DecodeResult(s.Job.Payload), Priority: s.Job.Priority, MaxAttempts: s.Job.MaxAttempts}
	}
	if s.Plan != nil {
		r.Tasks = []string{}
		for _, t := range s.Plan.Tasks {
			r.Tasks = append(r.Tasks, t.Name)
		}
	}
	if !s.Next.IsZero() {
		r.Next = &workflowfile.Stamp{Time: s.Next}
	}
	if !s.LastTick.IsZero() {
		r.LastTick = &workflowfile.Stamp{Time: s.LastTick}
	}
	return r
}

// scheduler is the store's engine.Scheduler; without one it answers 501.
func (a *api) scheduler(w http.ResponseWriter) engine.Scheduler {
	sc, ok := a.store.(engine.Scheduler)
	if !ok {
		writeError(w, http.StatusNotImplemented, apiError{Code: codeInternal, Message: "the store keeps no schedules"})
		return nil
	}
	return sc
}

// scheduleName checks the {name} of a schedule route.
func scheduleName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("name")
	if !engine.ValidName(name) {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: "name", Message: fmt.Sprintf("schedule name %q must "+engine.NameRule, name)})
		return "", false
	}
	return name, true
}

func (a *api) listSchedules(w http.ResponseWriter, r *http.Request) {
	c := a.scheduler(w)
	if c == nil {
		return
	}
	list, err := c.Schedules(r.Context())
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	out := make([]ScheduleRecord, len(list.Schedules))
	for i, s := range list.Schedules {
		out[i] = NewScheduleRecord(s)
	}
	writeJSON(w, http.StatusOK, struct {
		Schedules []ScheduleRecord `json:"schedules"`
	}{out})
}

func (a *api) getSchedule(w http.ResponseWriter, r *http.Request) {
	name, ok := scheduleName(w, r)
	if !ok {
		return
	}
	c := a.scheduler(w)
	if c == nil {
		return
	}
	s, err := c.GetSchedule(r.Context(), name)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, NewScheduleRecord(s))
}

// putSchedule creates or replaces a schedule from a JSON body: when it
// ticks (cron and tz, or every) and what a tick starts (a job, or a
// workflow file as JSON, spec/workflow-file.md). 201 when created.
func (a *api) putSchedule(w http.ResponseWriter, r *http.Request) {
	name, ok := scheduleName(w, r)
	if !ok {
		return
	}
	c := a.scheduler(w)
	if c == nil {
		return
	}
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	bad := func(field, format string, args ...any) {
		writeError(w, http.StatusBadRequest, apiError{Code: weir.ErrInvalid.Code, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if err := checkScheduleBody(body); err != nil {
		var be *scheduleBodyError
		errors.As(err, &be)
		bad(be.field, "%s", be.msg)
		return
	}
	var b scheduleBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		bad("", "the body is not a schedule (JSON): %v", err)
		return
	}
	p := engine.ScheduleSpec{Name: name, Cron: b.Cron, TZ: b.TZ, Missed: weir.MissedPolicy(b.Missed), Overlap: weir.OverlapPolicy(b.Overlap)}
	if b.Every != "" {
		d, err := time.ParseDuration(b.Every)
		if err != nil {
			bad("every", "%q is not a duration such as 90s or 1h", b.Every)
			return
		}
		if d == 0 {
			// the spec's zero Every means none: say what is wrong here
			bad("every", "%q is no interval: give whole seconds, at least 1s", b.Every)
			return
		}
		p.Every = d
	}
	switch {
	case (b.Job == nil) == (len(b.Wf) == 0):
		bad("job", "give a job or a workflow, exactly one")
		return
	case b.Job != nil:
		p.Job = &engine.JobSpec{Queue: b.Job.Queue, Priority: b.Job.Priority, MaxAttempts: b.Job.MaxAttempts}
		if len(b.Job.Payload) > 0 {
			pl, err := client.JSONPayload(b.Job.Payload)
			if err != nil {
				bad("job.payload", "%v", err)
				return
			}
			p.Job.Payload = pl
		}
	default:
		lf, err := workflowfile.Parse("workflow", b.Wf, workflowfile.Options{Format: workflowfile.FormatJSON, Limits: a.cfg.Limits})
		if err == nil {
			err = lf.CheckSchedule()
		}
		if err != nil {
			e := apiError{Code: weir.ErrInvalid.Code, Field: "workflow", Message: err.Error()}
			var fe *workflowfile.Error
			if errors.As(err, &fe) {
				e.Field, e.Task = "workflow."+fe.Path, fe.TaskName
			}
			writeError(w, http.StatusBadRequest, e)
			return
		}
		p.Plan = &lf.Plan
	}
	s, err := engine.PutSchedule(r.Context(), c, p, time.Now())
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	status := http.StatusOK
	if s.Rev == 1 {
		status = http.StatusCreated
		w.Header().Set("Location", "/v1/schedules/"+name)
	}
	writeJSON(w, status, NewScheduleRecord(s))
}

func (a *api) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	name, ok := scheduleName(w, r)
	if !ok {
		return
	}
	c := a.scheduler(w)
	if c == nil {
		return
	}
	if err := c.DeleteSchedule(r.Context(), name); err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Name    string `json:"name"`
		Deleted bool   `json:"deleted"`
	}{name, true})
}

func (a *api) pauseSchedule(w http.ResponseWriter, r *http.Request) { a.setSchedulePaused(w, r, true) }
func (a *api) resumeSchedule(w http.ResponseWriter, r *http.Request) {
	a.setSchedulePaused(w, r, false)
}

func (a *api) setSchedulePaused(w http.ResponseWriter, r *http.Request, pause bool) {
	name, ok := scheduleName(w, r)
	if !ok {
		return
	}
	c := a.scheduler(w)
	if c == nil {
		return
	}
	f := c.ResumeSchedule
	if pause {
		f = c.PauseSchedule
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
