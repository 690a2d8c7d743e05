package conformance

import "github.com/weirflow/weir"
import "github.com/weirflow/weir/engine"

// progress reports progress and/or writes a checkpoint for one of the
// leases seen (mostly a recent one, so mostly a live lease), with input
// that is sometimes refused (a percent over 100, nothing to report).
func (d *differ) progress() {
	if len(d.leases) == 0 {
		return
	}
	l := d.leases[len(d.leases)-1-d.intRange(0, min(len(d.leases)-1, 4), "lease")]
	var p engine.ProgressParams
	if d.intRange(0, 3, "report") > 0 {
		p.Report = &weir.Progress{
			Percent: sampled(d, []float64{0, 33.5, 100, 150}, "pct"),
			Message: sampled(d, []string{"", "half way"}, "msg"),
		}
	}
	switch d.intRange(0, 3, "checkpoint") {
	case 1:
		p.Checkpoint = []byte{}
	case 2:
		p.Checkpoint = []byte("c1")
	case 3:
		p.Checkpoint = []byte("c2")
	}
	mp, sp := p, p
	mp.JobID, mp.Token = l.job, l.mtok
	sp.JobID, sp.Token = l.job, l.stok
	merr := d.m.Progress(d.clock(), mp)
	serr := d.s.Progress(d.ctx, sp)
	d.sameErr("progress", merr, serr)
}
