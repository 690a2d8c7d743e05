package rest

import (
	"net/http"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/workflowfile"
)

// The signal route of spec/rest.md (Signals): complete or fail an open
// signal task of a workflow.
var signalRoutes = []route{
	{"POST", "/v1/workflows/{id}/signals/{task}", (*api).signalTask, true, nil},
}

func init() { routes = append(routes, signalRoutes...) }

// SignalRecord is the body of a signal's answer.
type SignalRecord struct {
	ID   string `json:"id"`
	Task string `json:"task"`
	// Signalled is false when the same signal had ended the task already.
	Signalled     bool   `json:"signalled"`
	State         string `json:"state"`
	WorkflowState string `json:"workflow_state"`
}

// signalTask takes a signal document (workflowfile.ParseSignal) as JSON
// or YAML and signals the task: 200 with what it did; 409 NOTOPEN before
// the task is open, SIGNALLED once it ended otherwise.
func (a *api) signalTask(w http.ResponseWriter, r *http.Request) {
	s, ok := a.store.(engine.Signaller)
	if !ok {
		writeError(w, http.StatusNotImplemented, apiError{Code: codeInternal, Message: "the store has no signal tasks"})
		return
	}
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	sig, err := workflowfile.ParseSignal("signal", body, workflowfile.Options{Format: bodyFormat(r), Limits: a.cfg.Limits})
	if err != nil {
		bodyError(w, err)
		return
	}
	p := engine.SignalParams{Workflow: r.PathValue("id"), Task: r.PathValue("task"), Kind: sig.Kind, Value: sig.Value, Reason: sig.Reason}
	res, err := s.Signal(r.Context(), p)
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, SignalRecord{ID: p.Workflow, Task: p.Task, Signalled: res.Signalled,
		State: string(res.State), WorkflowState: string(res.WorkflowState)})
}
