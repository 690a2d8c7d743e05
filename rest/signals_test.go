package rest

import (
	"github.com/weirflow/weir"
	"net/http"
	"testing"

	"github.com/weirflow/weir/workflowfile"
)

// A signal task over the API: open in the record, NOTOPEN before, a
// value that becomes its result, the same signal again unchanged,
// another one SIGNALLED, and bad documents refused with their field.
func TestAPISignal(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	f := wfFile{"id": "s1", "tasks": []map[string]any{
		{"name": "approve", "signal": true, "timeout": "1h"},
		{"name": "note", "signal": true, "after": []string{"approve"}},
	}}
	a.want(http.StatusCreated, "POST", "/v1/workflows", f)
	rec := strict[workflowfile.Record](t, a.want(http.StatusOK, "GET", "/v1/workflows/s1", nil).body)
	if rec.Tasks[0].State != "open" || !rec.Tasks[0].Signal || rec.Tasks[1].State != "waiting" {
		t.Fatalf("record before: %+v", rec.Tasks)
	}
	wantErr(t, a.want(http.StatusConflict, "POST", "/v1/workflows/s1/signals/note", map[string]any{"value": 1}), weir.ErrNotOpen.Code, "")
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows/s1/signals/approve", map[string]any{"value": 1, "fail": "x"}), weir.ErrInvalid.Code, "fail")
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows/s1/signals/approve", map[string]any{"colour": 1}), weir.ErrInvalid.Code, "colour")
	wantErr(t, a.want(http.StatusNotFound, "POST", "/v1/workflows/s1/signals/nope", map[string]any{}), weir.ErrNotFound.Code, "")

	r := strict[SignalRecord](t, a.want(http.StatusOK, "POST", "/v1/workflows/s1/signals/approve", map[string]any{"value": map[string]any{"by": "ana"}}).body)
	if !r.Signalled || r.State != "completed" || r.WorkflowState != "running" || r.ID != "s1" || r.Task != "approve" {
		t.Errorf("signal: %+v", r)
	}
	r = strict[SignalRecord](t, a.want(http.StatusOK, "POST", "/v1/workflows/s1/signals/approve", map[string]any{"value": map[string]any{"by": "ana"}}).body)
	if r.Signalled {
		t.Errorf("the same signal again: %+v", r)
	}
	wantErr(t, a.want(http.StatusConflict, "POST", "/v1/workflows/s1/signals/approve", map[string]any{"value": "bob"}), weir.ErrSignalled.Code, "")
	r = strict[SignalRecord](t, a.want(http.StatusOK, "POST", "/v1/workflows/s1/signals/note", map[string]any{"fail": "no"}).body)
	if r.State != "failed" || r.WorkflowState != "failed" {
		t.Errorf("fail: %+v", r)
	}
	rec = strict[workflowfile.Record](t, a.want(http.StatusOK, "GET", "/v1/workflows/s1", nil).body)
	if m, ok := rec.Tasks[0].Result.(map[string]any); !ok || m["by"] != "ana" || deref(rec.Tasks[1].Error) != "no" {
		t.Errorf("record after: %+v", rec.Tasks)
	}
}
