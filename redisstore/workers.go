package redisstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// The worker registry (spec/keys.md, Keys of the worker registry) lives in
// partition 0: one hash and one zset per namespace, written once per
// worker per heartbeat interval and never on the claim or finish path.

var _ engine.WorkerRegistry = (*Store)(nil)

// registry returns the part that holds the worker registry.
func (s *Store) registry(ctx context.Context) (*part, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// BeatWorker implements engine.WorkerRegistry (worker_beat.lua): one call.
func (s *Store) BeatWorker(ctx context.Context, p engine.BeatWorkerParams) error {
	if err := engine.ValidateBeatWorker(p, s.part.cfg.Limits); err != nil {
		return err
	}
	b, err := engine.EncodeWorker(p.Info)
	if err != nil {
		return err
	}
	pt, err := s.registry(ctx)
	if err != nil {
		return err
	}
	_, err = pt.run(ctx, "worker_beat", p.Info.ID, b, p.TTL.Milliseconds(), engine.WorkerSweep)
	return err
}

// RemoveWorker implements engine.WorkerRegistry (worker_remove.lua).
func (s *Store) RemoveWorker(ctx context.Context, id string) error {
	if !engine.ValidID(id) {
		return nil // never registered
	}
	pt, err := s.registry(ctx)
	if err != nil {
		return err
	}
	_, err = pt.run(ctx, "worker_remove", id)
	return err
}

// Workers implements engine.WorkerRegistry (workers.lua, read-only).
func (s *Store) Workers(ctx context.Context) (engine.WorkerList, error) {
	pt, err := s.registry(ctx)
	if err != nil {
		return engine.WorkerList{}, err
	}
	v, err := pt.run(ctx, "workers", engine.MaxWorkers)
	if err != nil {
		return engine.WorkerList{}, err
	}
	r := newReader(v)
	out := engine.WorkerList{Now: r.time(), Total: int(r.int())}
	n := r.count()
	for range n {
		id, rec := r.str(), r.str()
		if r.err != nil {
			break
		}
		beat, rest, ok1 := strings.Cut(rec, ":")
		exp, js, ok2 := strings.Cut(rest, ":")
		bm, err1 := strconv.ParseInt(beat, 10, 64)
		em, err2 := strconv.ParseInt(exp, 10, 64)
		if !ok1 || !ok2 || err1 != nil || err2 != nil {
			r.fail("worker %q's record %.40q", id, rec)
			break
		}
		w, err := engine.DecodeWorker(id, []byte(js))
		if err != nil {
			return engine.WorkerList{}, err
		}
		w.LastHeartbeat, w.Expires = toTime(bm), toTime(em)
		out.Workers = append(out.Workers, w)
	}
	if err := r.done(); err != nil {
		return engine.WorkerList{}, err
	}
	if out.Workers == nil {
		out.Workers = []weir.WorkerInfo{}
	}
	engine.SortWorkers(out.Workers)
	return out, nil
}
