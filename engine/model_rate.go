package engine

import "time"

// rateLimit is a queue's rate limit: at most n starts (leases) in any
// window of period ms. starts holds the times (ms, ascending) of the starts
// that may still count: those after now - period, and older ones until a
// claim trims them.
type rateLimit struct {
	n      int
	period int64
	starts []int64
}

// trim drops the starts that no longer count at now.
func (r *rateLimit) trim(now int64) {
	i := 0
	for i < len(r.starts) && r.starts[i] <= now-r.period {
		i++
	}
	r.starts = r.starts[i:]
}

// room is how many more starts the limit allows, once trimmed; a large
// number without a limit.
func (r *rateLimit) room() int {
	if r.n == 0 {
		return MaxConcurrency
	}
	return max(0, r.n-len(r.starts))
}

// started notes a start at now.
func (r *rateLimit) started(now int64) {
	if r.n > 0 {
		r.starts = append(r.starts, now)
	}
}

// next returns when the limit next allows a start if it allows none at
// now, else 0: the time the oldest start that must leave the window for
// one more to fit leaves it.
func (r *rateLimit) next(now int64) int64 {
	if r.n == 0 {
		return 0
	}
	i := 0
	for i < len(r.starts) && r.starts[i] <= now-r.period {
		i++
	}
	in := r.starts[i:]
	if len(in) < r.n {
		return 0
	}
	return in[len(in)-r.n] + r.period
}

// info returns the limit and its period, for QueueInfo.
func (r *rateLimit) info() (int, time.Duration) {
	return r.n, time.Duration(r.period) * time.Millisecond
}

// RateLimitQueue sets how many jobs of a queue may start in any window of
// a period (spec/states.md, RateLimitQueue).
func (m *Model) RateLimitQueue(now time.Time, p RateLimitQueueParams) error {
	if err := ValidateRateLimitQueue(p); err != nil {
		return err
	}
	m.tick(now)
	q := m.queue(p.Queue)
	period := p.Period.Milliseconds()
	switch {
	case p.Limit == 0:
		q.rate = rateLimit{}
	case period != q.rate.period:
		q.rate = rateLimit{n: p.Limit, period: period}
	default:
		q.rate.n = p.Limit
	}
	return nil
}

// ValidateRateLimitQueue checks RateLimitQueueParams: a valid queue name, a
// limit in [0, MaxRateLimit] and, with a limit, a period of whole
// milliseconds in [MinRatePeriod, MaxRatePeriod].
func ValidateRateLimitQueue(p RateLimitQueueParams) error {
	if !ValidName(p.Queue) {
		return invalid("", "queue", "queue name %q must "+NameRule, p.Queue)
	}
	if p.Limit < 0 || p.Limit > MaxRateLimit {
		return invalid("", "limit", "%d is outside [0, %d]", p.Limit, MaxRateLimit)
	}
	if p.Limit == 0 {
		return nil
	}
	if p.Period < MinRatePeriod || p.Period > MaxRatePeriod || p.Period%time.Millisecond != 0 {
		return invalid("", "period", "%v must be whole milliseconds from %v to %v", p.Period, MinRatePeriod, MaxRatePeriod)
	}
	return nil
}
