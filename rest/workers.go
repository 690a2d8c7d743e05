package rest

import (
	"net/http"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/workflowfile"
)

// The worker route of spec/rest.md (Workers): the live worker processes,
// on a store that implements engine.WorkerRegistry.
var workerRoutes = []route{
	{"GET", "/v1/workers", (*api).listWorkers, false, nil},
}

func init() { routes = append(routes, workerRoutes...) }

// WorkerRecord is a live worker as the API and `weir workers --json` show
// it.
type WorkerRecord struct {
	ID             string              `json:"id"`
	Host           string              `json:"host"`
	PID            int                 `json:"pid"`
	Version        string              `json:"version"`
	Queues         []WorkerQueueRecord `json:"queues"`
	StrictPriority bool                `json:"strict_priority"`
	Concurrency    int                 `json:"concurrency"`
	Started        *workflowfile.Stamp `json:"started"`
	LastHeartbeat  *workflowfile.Stamp `json:"last_heartbeat"`
	Expires        *workflowfile.Stamp `json:"expires"`
	// Running counts the jobs it runs; RunningJobs are the first 100 of
	// their IDs, by ID.
	Running     int      `json:"running"`
	RunningJobs []string `json:"running_jobs"`
}

// WorkerQueueRecord is one queue of a WorkerRecord.
type WorkerQueueRecord struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
}

// WorkerList is the body of GET /v1/workers.
type WorkerList struct {
	Workers []WorkerRecord `json:"workers"`
	// Total counts every live worker (Workers lists at most 1,000).
	Total int `json:"total"`
	// Now is the store's time of the read, by which LastHeartbeat and
	// Expires were set.
	Now *workflowfile.Stamp `json:"now"`
}

// NewWorkerRecord is w as the API shows it.
func NewWorkerRecord(w weir.WorkerInfo) WorkerRecord {
	r := WorkerRecord{ID: w.ID, Host: w.Host, PID: w.PID, Version: w.Version, StrictPriority: w.StrictPriority,
		Concurrency: w.Concurrency, Started: optTime(w.Started), LastHeartbeat: optTime(w.LastHeartbeat),
		Expires: optTime(w.Expires), Running: w.Running, RunningJobs: append([]string{}, w.RunningJobs...),
		Queues: []WorkerQueueRecord{}}
	for _, q := range w.Queues {
		r.Queues = append(r.Queues, WorkerQueueRecord(q))
	}
	return r
}

// NewWorkerList is l as GET /v1/workers shows it.
func NewWorkerList(l engine.WorkerList) WorkerList {
	out := WorkerList{Workers: make([]WorkerRecord, len(l.Workers)), Total: l.Total, Now: optTime(l.Now)}
	for i, w := range l.Workers {
		out.Workers[i] = NewWorkerRecord(w)
	}
	return out
}

func (a *api) listWorkers(w http.ResponseWriter, r *http.Request) {
	reg, ok := a.store.(engine.WorkerRegistry)
	if !ok {
		writeError(w, http.StatusNotImplemented, apiError{Code: codeInternal, Message: "the store keeps no worker registry"})
		return
	}
	l, err := reg.Workers(r.Context())
	if err != nil {
		a.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, NewWorkerList(l))
}
