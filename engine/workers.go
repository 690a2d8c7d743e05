package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir"
)

// WorkerRegistry is implemented by stores that keep the registry of live
// worker processes (both stores of this module do): each worker writes its
// record at its start and at every heartbeat (one call per heartbeat
// interval, not per job), and removes it when it stops; the record of a
// worker that died leaves the list once its time passes. Nothing on the
// claim or finish path reads or writes it (spec/keys.md, Keys of the worker
// registry).
type WorkerRegistry interface {
	// BeatWorker registers a worker or refreshes its record: p.Info
	// replaces what the store held, LastHeartbeat becomes the store's now
	// and Expires now + p.TTL. It also removes up to WorkerSweep records
	// whose time passed, so that dead workers' records do not pile up.
	BeatWorker(ctx context.Context, p BeatWorkerParams) error
	// RemoveWorker removes a worker's record (a clean stop). An unknown ID
	// is no error.
	RemoveWorker(ctx context.Context, id string) error
	// Workers lists the live workers (whose Expires lies ahead of the
	// store's now), by ID: at most MaxWorkers of them (those expiring
	// soonest), with the count of all.
	Workers(ctx context.Context) (WorkerList, error)
}

// Bounds of the worker registry.
const (
	// MaxWorkers is the most workers one Workers call returns.
	MaxWorkers = 1000
	// MaxWorkerJobs is the most running job IDs a worker's record holds
	// (WorkerInfo.Running counts them all).
	MaxWorkerJobs = 100
	// MaxWorkerQueues is the most queues a worker's record lists.
	MaxWorkerQueues = 1000
	// WorkerSweep is the most records of dead workers one BeatWorker
	// removes.
	WorkerSweep = 20
)

// BeatWorkerParams registers or refreshes one worker.
type BeatWorkerParams struct {
	// Info is the worker's record; the store sets its LastHeartbeat and
	// Expires.
	Info weir.WorkerInfo
	// TTL is how long the record lives without another beat: whole
	// milliseconds in [1ms, Limits.MaxLease].
	TTL time.Duration
}

// WorkerList is the live workers of a store and the store's time when it
// read them.
type WorkerList struct {
	Workers []weir.WorkerInfo
	// Total counts every live worker, also those past MaxWorkers.
	Total int
	Now   time.Time
}

// ValidateWorkerID checks a claim's WorkerID: empty (no worker named) or
// a worker ID (ValidID), as the registry's.
func ValidateWorkerID(id string) error {
	if id != "" && !ValidID(id) {
		return invalid("", "worker id", "%q must be empty or match ^[A-Za-z0-9_.-]{1,128}$ (a worker's registry ID)", id)
	}
	return nil
}

// ValidateBeatWorker checks p against l: a valid ID (ValidID), short
// strings, valid queue names, at most MaxWorkerQueues queues and
// MaxWorkerJobs job IDs, and a TTL as a lease's.
func ValidateBeatWorker(p BeatWorkerParams, l weir.Limits) error {
	w := p.Info
	if !ValidID(w.ID) {
		return invalid("", "worker id", "%q must match ^[A-Za-z0-9_.-]{1,128}$", w.ID)
	}
	if len(w.Host) > 255 || len(w.Version) > 128 {
		return invalid("", "worker host", "host (%d bytes) and version (%d bytes) must be at most 255 and 128 bytes", len(w.Host), len(w.Version))
	}
	if len(w.Queues) > MaxWorkerQueues {
		return invalid("", "worker queues", "%d queues, at most %d", len(w.Queues), MaxWorkerQueues)
	}
	for _, q := range w.Queues {
		if !ValidName(q.Name) {
			return invalid("", "worker queues", "queue name %q must "+NameRule, q.Name)
		}
	}
	if len(w.RunningJobs) > MaxWorkerJobs || w.Running < len(w.RunningJobs) || w.Concurrency < 0 || w.PID < 0 {
		return invalid("", "worker running", "%d running, %d job IDs (at most %d), concurrency %d, pid %d: counts are not negative and Running counts every ID listed", w.Running, len(w.RunningJobs), MaxWorkerJobs, w.Concurrency, w.PID)
	}
	for _, id := range w.RunningJobs {
		if len(id) > 512 {
			return invalid("", "worker running", "job ID of %d bytes, at most 512", len(id))
		}
	}
	if p.TTL < time.Millisecond || p.TTL > l.MaxLease || p.TTL%time.Millisecond != 0 {
		return invalid("", "worker ttl", "%v must be whole milliseconds in [1ms, %v]", p.TTL, l.MaxLease)
	}
	return nil
}

// workerJSON is a worker's record as the Redis store keeps it
// (spec/keys.md, P workers).
type workerJSON struct {
	Host        string      `json:"host"`
	PID         int         `json:"pid"`
	Version     string      `json:"version"`
	Queues      []queueJSON `json:"queues"`
	Strict      bool        `json:"strict,omitempty"`
	Concurrency int         `json:"concurrency"`
	Started     int64       `json:"started"`
	Running     int         `json:"running"`
	Jobs        []string    `json:"jobs"`
}

type queueJSON struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
}

// EncodeWorker encodes a worker's record as the Redis store keeps it
// (JSON; ID, LastHeartbeat and Expires are kept beside it).
func EncodeWorker(w weir.WorkerInfo) ([]byte, error) {
	r := workerJSON{Host: w.Host, PID: w.PID, Version: w.Version, Strict: w.StrictPriority,
		Concurrency: w.Concurrency, Running: w.Running, Jobs: w.RunningJobs, Queues: []queueJSON{}}
	if r.Jobs == nil {
		r.Jobs = []string{}
	}
	if !w.Started.IsZero() {
		r.Started = w.Started.UnixMilli()
	}
	for _, q := range w.Queues {
		r.Queues = append(r.Queues, queueJSON(q))
	}
	return json.Marshal(r)
}

// DecodeWorker decodes what EncodeWorker encoded, into a record of ID id.
func DecodeWorker(id string, b []byte) (weir.WorkerInfo, error) {
	var r workerJSON
	if err := json.Unmarshal(b, &r); err != nil {
		return weir.WorkerInfo{}, fmt.Errorf("%w: worker %q's record: %v", weir.ErrProtocol, id, err)
	}
	w := weir.WorkerInfo{ID: id, Host: r.Host, PID: r.PID, Version: r.Version, StrictPriority: r.Strict,
		Concurrency: r.Concurrency, Running: r.Running, RunningJobs: r.Jobs, Queues: []weir.WorkerQueue{}}
	if w.RunningJobs == nil {
		w.RunningJobs = []string{}
	}
	if r.Started != 0 {
		w.Started = time.UnixMilli(r.Started).UTC()
	}
	for _, q := range r.Queues {
		w.Queues = append(w.Queues, weir.WorkerQueue(q))
	}
	return w, nil
}

// SortWorkers orders workers by ID (the order Workers lists them in).
func SortWorkers(ws []weir.WorkerInfo) {
	slices.SortFunc(ws, func(a, b weir.WorkerInfo) int { return strings.Compare(a.ID, b.ID) })
}

// WorkerTable is the worker registry's reference: what a WorkerRegistry
// does, given the store's now at each call. The in-memory store keeps its
// registry in one; the conformance suite holds other stores to it. It is
// safe for concurrent use.
type WorkerTable struct {
	mu sync.Mutex
	ws map[string]weir.WorkerInfo
}

// Beat does BeatWorker at now (after ValidateBeatWorker).
func (t *WorkerTable) Beat(now time.Time, p BeatWorkerParams) {
	now = now.Truncate(time.Millisecond).UTC()
	w := cloneWorker(p.Info)
	w.LastHeartbeat, w.Expires = now, now.Add(p.TTL)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ws == nil {
		t.ws = map[string]weir.WorkerInfo{}
	}
	// the dead records expiring first, as the Redis store's index gives
	// them (ties by ID)
	var dead []weir.WorkerInfo
	for _, o := range t.ws {
		if !o.Expires.After(now) {
			dead = append(dead, o)
		}
	}
	slices.SortFunc(dead, byExpiry)
	for _, o := range dead[:min(len(dead), WorkerSweep)] {
		delete(t.ws, o.ID)
	}
	t.ws[w.ID] = w
}

// Remove does RemoveWorker.
func (t *WorkerTable) Remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.ws, id)
}

// List does Workers at now.
func (t *WorkerTable) List(now time.Time) WorkerList {
	now = now.Truncate(time.Millisecond).UTC()
	t.mu.Lock()
	var live []weir.WorkerInfo
	for _, w := range t.ws {
		if w.Expires.After(now) {
			live = append(live, cloneWorker(w))
		}
	}
	t.mu.Unlock()
	slices.SortFunc(live, byExpiry)
	out := WorkerList{Total: len(live), Now: now, Workers: live[:min(len(live), MaxWorkers)]}
	if out.Workers == nil {
		out.Workers = []weir.WorkerInfo{}
	}
	SortWorkers(out.Workers)
	return out
}

func byExpiry(a, b weir.WorkerInfo) int {
	return cmp.Or(a.Expires.Compare(b.Expires), strings.Compare(a.ID, b.ID))
}

// cloneWorker copies w's slices, with nil made empty (as decoded).
func cloneWorker(w weir.WorkerInfo) weir.WorkerInfo {
	w.Queues = append([]weir.WorkerQueue{}, w.Queues...)
	w.RunningJobs = append([]string{}, w.RunningJobs...)
	if !w.Started.IsZero() {
		w.Started = w.Started.Truncate(time.Millisecond).UTC()
	}
	return w
}
