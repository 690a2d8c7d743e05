package redisstore

import (
	"context"

	"github.com/weirflow/weir/engine"
)

// Heartbeat implements engine.Store.
func (pt *part) Heartbeat(ctx context.Context, p engine.HeartbeatParams) ([]engine.LeaseStatus, error) {
	if err := pt.validateBatch("leases", len(p.Leases)); err != nil {
		return nil, err
	}
	if err := pt.validateLease(p.Extend); err != nil {
		return nil, err
	}
	out := make([]engine.LeaseStatus, len(p.Leases))
	args := pt.argv(scripts["heartbeat"], 1+2*len(p.Leases))
	args = append(args, p.Extend.Milliseconds())
	var sent []int
	for i, l := range p.Leases {
		out[i] = engine.LeaseStatus{JobID: l.JobID, Lost: true}
		if validJobID(l.JobID) {
			sent = append(sent, i)
			args = append(args, l.JobID, l.Token)
		}
	}
	if len(sent) == 0 {
		return out, nil
	}
	v, err := pt.call(ctx, scripts["heartbeat"], args)
	if err != nil {
		return nil, err
	}
	r := newReader(v)
	for _, i := range sent {
		lost, cancel, dl := r.flag(), r.flag(), r.time()
		if !lost {
			out[i] = engine.LeaseStatus{JobID: p.Leases[i].JobID, Cancel: cancel, Deadline: dl}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// ExpireLeases implements engine.Store.
func (pt *part) ExpireLeases(ctx context.Context, p engine.ExpireParams) (engine.ExpireResult, error) {
	n := p.Max
	if n == 0 {
		n = pt.cfg.Limits.MaxBatch
	}
	if err := pt.validateBatch("max", n); err != nil {
		return engine.ExpireResult{}, err
	}
	// a sweep that stops on its budget (drain.go) goes on in another call
	// once the cascade is drained
	var res engine.ExpireResult
	from := ""
	for {
		args := append(pt.argv(scripts["expire"], 2), n)
		if from != "" {
			args = append(args, from)
		}
		v, err := pt.call(ctx, scripts["expire"], args)
		if err != nil {
			return engine.ExpireResult{}, err
		}
		r := newReader(v)
		for k := r.count(); k > 0 && r.err == nil; k-- {
			res.Expired = append(res.Expired, r.settled())
		}
		res.Due = append(res.Due, r.pushed()...)
		mark, stopped := r.mark()
		if err := r.done(); err != nil {
			return engine.ExpireResult{}, err
		}
		if !stopped {
			return res, nil
		}
		from = mark
		var d drained
		if err := pt.drain(ctx, &d); err != nil {
			return engine.ExpireResult{}, err
		}
		if k := len(res.Expired); k > 0 {
			d.addTo(&res.Expired[k-1])
		}
	}
}
