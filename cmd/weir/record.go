package main

import (
	"time"

	"github.com/weirflow/weir/engine"
)

// record is the workflow record of issue 6: the JSON that `--json` prints
// (and the body of the REST API's GET /v1/workflows/{id}).
type record struct {
	ID              string     `json:"id"`
	State           string     `json:"state"`
	Reason          *string    `json:"reason"`
	FailFast        bool       `json:"fail_fast"`
	UndoOnCancel    bool       `json:"undo_on_cancel"`
	CancelRequested bool       `json:"cancel_requested"`
	CreatedAt       *time.Time `json:"created_at"`
	EndedAt         *time.Time `json:"ended_at"`
	Tasks           []taskRec  `json:"tasks"`
}

type taskRec struct {
	Name     string   `json:"name"`
	Queue    string   `json:"queue"`
	State    string   `json:"state"`
	Attempts int      `json:"attempts"`
	After    []string `json:"after"`
	Always   bool     `json:"always"`
	Result   any      `json:"result"`
	Error    *string  `json:"error"`
	Undo     *undoRec `json:"undo"`
}

type undoRec struct {
	Queue    string  `json:"queue"`
	State    *string `json:"state"`
	Attempts int     `json:"attempts"`
	Error    *string `json:"error"`
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// toRecord converts a workflow snapshot into its record.
func toRecord(w engine.Workflow) record {
	r := record{
		ID: w.ID, State: string(w.State), Reason: optString(string(w.Reason)),
		FailFast: w.FailFast, UndoOnCancel: w.UndoOnCancel, CancelRequested: w.CancelRequested,
		CreatedAt: optTime(w.CreatedAt), EndedAt: optTime(w.EndedAt),
		Tasks: make([]taskRec, len(w.Tasks)),
	}
	for i, t := range w.Tasks {
		after := t.After
		if after == nil {
			after = []string{}
		}
		tr := taskRec{
			Name: t.Name, Queue: t.Queue, State: string(t.State), Attempts: t.Attempt,
			After: after, Always: t.Always, Error: optString(t.Error),
		}
		if t.State == engine.Completed {
			tr.Result = decodeResult(t.Result)
		}
		if t.Undo != nil {
			tr.Undo = &undoRec{Queue: t.Undo.Queue, State: optString(string(t.Undo.State)), Attempts: t.Undo.Attempt, Error: optString(t.Undo.Error)}
		}
		r.Tasks[i] = tr
	}
	return r
}
