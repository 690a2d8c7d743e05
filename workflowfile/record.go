package workflowfile

import (
	"maps"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/shell"
)

// Record is a workflow's JSON record (spec/workflow-file.md, "The
// workflow record"): what `weir run --json` prints and the body of the
// REST API's GET /v1/workflows/{id}. Marshalled by encoding/json it has
// every field the spec lists, null where there is no value; NewRecord makes
// one.
type Record struct {
	ID string `json:"id"`
	// Name is the workflow's name (null: none); Labels its labels ({}:
	// none).
	Name            *string           `json:"name"`
	Labels          map[string]string `json:"labels"`
	State           string            `json:"state"`
	Reason          *string           `json:"reason"`
	FailFast        bool              `json:"fail_fast"`
	UndoOnCancel    bool              `json:"undo_on_cancel"`
	CancelRequested bool              `json:"cancel_requested"`
	CreatedAt       *Stamp            `json:"created_at"`
	EndedAt         *Stamp            `json:"ended_at"`
	// Deadline is when the workflow is cancelled if it has not ended (null:
	// none); DeadlineHit is set once its deadline cancelled it.
	Deadline    *Stamp `json:"deadline"`
	DeadlineHit bool   `json:"deadline_hit"`
	// Run is the workflow's run: 1 from its submit, one more each time
	// its failed part was re-run (RerunWorkflow).
	Run int `json:"run"`
	// Webhook is the workflow's webhook (null: none); its delivery's state
	// is its job's (Job).
	Webhook *WebhookRecord `json:"webhook"`
	Tasks   []TaskRecord   `json:"tasks"`
}

// WebhookRecord is a workflow's webhook in its Record.
type WebhookRecord struct {
	URL    string  `json:"url"`
	Secret *string `json:"secret"`
	Queue  string  `json:"queue"`
	Job    string  `json:"job"`
}

// TaskRecord is one task of a Record, in plan order.
type TaskRecord struct {
	Name     string   `json:"name"`
	Queue    string   `json:"queue"`
	State    string   `json:"state"`
	Attempts int      `json:"attempts"`
	After    []string `json:"after"`
	Always   bool     `json:"always"`
	// OnFailure is set for a catch task (spec/states.md, OnFailure tasks).
	OnFailure bool        `json:"on_failure"`
	Result    any         `json:"result"`
	Error     *string     `json:"error"`
	Undo      *UndoRecord `json:"undo"`
	// Progress is the task's last progress report, null when none.
	Progress *ProgressRecord `json:"progress"`
	// Signal is set for a signal task, which a signal ends (state "open"
	// while it waits for it).
	Signal bool `json:"signal"`
	// AddedBy names the task whose finish added this one at run time
	// (spec/states.md, Dynamic tasks); null for a task of the submitted
	// plan.
	AddedBy *string `json:"added_by"`
}

// UndoRecord is a task's undo: its state is null until the undo job
// exists.
type UndoRecord struct {
	Queue    string  `json:"queue"`
	State    *string `json:"state"`
	Attempts int     `json:"attempts"`
	Error    *string `json:"error"`
}

// optString is s, or nil (JSON null) when s is empty.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Stamp is a time as the records show it: RFC 3339 in UTC with exactly
// three fraction digits (the store keeps milliseconds), so that stamps of
// one length sort as strings in time order. spec/openapi.yaml's Timestamp
// has the pattern. It reads back (UnmarshalJSON) as time.Time does.
type Stamp struct{ time.Time }

// stampLayout is the layout of a stamp.
const stampLayout = weir.TimeLayout

// MarshalJSON writes the time as "2006-01-02T15:04:05.000Z".
func (s Stamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + s.UTC().Format(stampLayout) + `"`), nil
}

// optTime is t as a Stamp, or nil (JSON null) for the zero time.
func optTime(t time.Time) *Stamp {
	if t.IsZero() {
		return nil
	}
	return &Stamp{t.UTC()}
}

// NewRecord returns the record of a workflow snapshot. Results of
// completed tasks are decoded by shell.DecodeResult (a shell task's is a
// string).
func NewRecord(w weir.Workflow) Record {
	r := Record{
		ID: w.ID, Name: optString(w.Name), Labels: maps.Clone(w.Labels), State: string(w.State), Reason: optString(string(w.Reason)),
		FailFast: w.FailFast, UndoOnCancel: w.UndoOnCancel, CancelRequested: w.CancelRequested,
		CreatedAt: optTime(w.CreatedAt), EndedAt: optTime(w.EndedAt),
		Deadline: optTime(w.Deadline), DeadlineHit: w.DeadlineHit, Run: max(w.Run, 1),
		Tasks: make([]TaskRecord, len(w.Tasks)),
	}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	if h := w.Webhook; h != nil {
		r.Webhook = &WebhookRecord{URL: h.URL, Secret: optString(h.Secret), Queue: h.Queue, Job: h.Job}
	}
	for i, t := range w.Tasks {
		after := t.After
		if after == nil {
			after = []string{}
		}
		tr := TaskRecord{
			Name: t.Name, Queue: t.Queue, State: string(t.State), Attempts: t.Attempt,
			After: after, Always: t.Always, OnFailure: t.OnFailure, Error: optString(t.Error), Signal: t.Signal,
			Progress: NewProgressRecord(t.Progress), AddedBy: optString(t.AddedBy),
		}
		if t.State == weir.Completed {
			tr.Result = shell.DecodeResult(t.Result)
		}
		if t.Undo != nil {
			tr.Undo = &UndoRecord{Queue: t.Undo.Queue, State: optString(string(t.Undo.State)), Attempts: t.Undo.Attempt, Error: optString(t.Undo.Error)}
		}
		r.Tasks[i] = tr
	}
	return r
}
