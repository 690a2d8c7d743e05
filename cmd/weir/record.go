package main

import (
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/shell"
)

// record is a workflow's JSON record (spec/workflow-file.md, "The workflow record"):
// what `--json` prints and the body of the REST API's GET
// /v1/workflows/{id}.
type record struct {
	ID              string    `json:"id"`
	State           string    `json:"state"`
	Reason          *string   `json:"reason"`
	FailFast        bool      `json:"fail_fast"`
	UndoOnCancel    bool      `json:"undo_on_cancel"`
	CancelRequested bool      `json:"cancel_requested"`
	CreatedAt       *stamp    `json:"created_at"`
	EndedAt         *stamp    `json:"ended_at"`
	Tasks           []taskRec `json:"tasks"`
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

// stamp is a time as the records show it: RFC 3339 in UTC with exactly
// three fraction digits (the store keeps milliseconds), so that stamps of
// one length sort as strings in time order. spec/openapi.yaml's Timestamp
// has the pattern.
type stamp struct{ time.Time }

// stampLayout is the layout of a stamp.
const stampLayout = "2006-01-02T15:04:05.000Z"

func (s stamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + s.UTC().Format(stampLayout) + `"`), nil
}

func optTime(t time.Time) *stamp {
	if t.IsZero() {
		return nil
	}
	return &stamp{t.UTC()}
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
			tr.Result = shell.DecodeResult(t.Result)
		}
		if t.Undo != nil {
			tr.Undo = &undoRec{Queue: t.Undo.Queue, State: optString(string(t.Undo.State)), Attempts: t.Undo.Attempt, Error: optString(t.Undo.Error)}
		}
		r.Tasks[i] = tr
	}
	return r
}
