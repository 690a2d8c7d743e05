package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// The worker registry (engine.WorkerRegistry, spec/keys.md): a worker on a
// store that keeps one writes its record when it starts and at every
// heartbeat tick (one call per HeartbeatInterval, running jobs or not, off
// the claim and finish path), and removes it when it stops. A worker that
// dies leaves the list when its record's TTL (its lease) passes.

// ID returns the worker's ID: Config.ID, or "<host>-<pid>-<8 hex>" drawn
// by New. Its registry record (client.Client.Workers, weir workers) bears
// it.
func (w *Worker) ID() string { return w.id }

// newWorkerID draws a worker's default ID.
func newWorkerID() string {
	host, _ := os.Hostname()
	var b strings.Builder
	for _, c := range []byte(host) {
		if b.Len() == 64 {
			break
		}
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		b.WriteString("worker")
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return b.String() + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:])
}

// moduleVersion is the version of the weir module this binary was built
// with, "(devel)" when built from its own source tree, else "unknown".
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	const mod = "github.com/weirflow/weir"
	if bi.Main.Path == mod {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == mod {
			if d.Replace != nil && d.Replace.Version != "" {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "unknown"
}

// registerTimeout bounds the registry write of Start.
const registerTimeout = 5 * time.Second

// registrar keeps one run's registry record.
type registrar struct {
	reg  engine.WorkerRegistry
	info weir.WorkerInfo // all but the running jobs
	ttl  time.Duration
}

// newRegistrar returns the registrar of r, or nil when the store keeps no
// registry.
func newRegistrar(r *run, id string, started time.Time) *registrar {
	reg, ok := r.store.(engine.WorkerRegistry)
	if !ok {
		return nil
	}
	host, _ := os.Hostname()
	info := weir.WorkerInfo{ID: id, Host: host, PID: os.Getpid(), Version: moduleVersion(),
		StrictPriority: r.cfg.StrictPriority, Concurrency: r.cfg.Concurrency, Started: started}
	for _, q := range r.queues {
		info.Queues = append(info.Queues, weir.WorkerQueue{Name: q.name, Weight: q.weight})
	}
	// the record outlives two missed beats at the default interval (Lease/3)
	ttl := min(max(r.cfg.Lease, 2*r.cfg.HeartbeatInterval), max(r.cfg.Limits.MaxLease, time.Millisecond))
	return &registrar{reg: reg, info: info, ttl: ttl.Truncate(time.Millisecond)}
}

// beatWorker writes the worker's record with the jobs it runs now.
func (r *run) beatWorker(ctx context.Context) {
	g := r.registrar
	if g == nil {
		return
	}
	info := g.info
	r.mu.Lock()
	info.Running = len(r.active)
	ids := slices.Sorted(maps.Keys(r.active))
	r.mu.Unlock()
	info.RunningJobs = ids[:min(len(ids), engine.MaxWorkerJobs)]
	if err := g.reg.BeatWorker(ctx, engine.BeatWorkerParams{Info: info, TTL: g.ttl}); err != nil && ctx.Err() == nil {
		r.log.Warn("weir: writing the worker's registry record failed", "worker", info.ID, "error", err)
	}
}

// deregister removes the worker's record; ctx may be done already (a stop
// past its deadline), so the call gets a few seconds of its own.
func (r *run) deregister(ctx context.Context) {
	g := r.registrar
	if g == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := g.reg.RemoveWorker(ctx, g.info.ID); err != nil {
		r.log.Warn("weir: removing the worker's registry record failed; it leaves the list when its TTL passes", "worker", g.info.ID, "ttl", g.ttl, "error", err)
	}
}

// validWorkerID checks Config.ID.
func validWorkerID(id string) error {
	if !engine.ValidID(id) {
		return fmt.Errorf("%w: worker Config.ID %q must match ^[A-Za-z0-9_.-]{1,128}$", weir.ErrInvalid, id)
	}
	return nil
}
