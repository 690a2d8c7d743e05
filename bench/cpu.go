package bench

import (
	"runtime"
	"time"
)

// cpuSpan is this process's CPU time at the start of a measured phase.
type cpuSpan struct {
	at time.Duration
	ok bool
}

// startCPU starts measuring this process's CPU for a phase. It collects
// the garbage of what ran before first, so that the phase is not charged
// for it. On the embedded server (which runs in this process, so its CPU
// would be the server's too) nothing is measured.
func (r *runner) startCPU() cpuSpan {
	if r.srv.embedded != nil {
		return cpuSpan{}
	}
	runtime.GC()
	at, ok := processCPU()
	return cpuSpan{at: at, ok: ok}
}

// usPer returns the CPU this process used since s, in µs, over n jobs;
// nil when s measured nothing.
func (s cpuSpan) usPer(n int) *float64 {
	if !s.ok || n <= 0 {
		return nil
	}
	now, ok := processCPU()
	if !ok {
		return nil
	}
	v := float64(now-s.at) / float64(time.Microsecond) / float64(n)
	return &v
}
