package engine

import "time"

// NextDue returns the earliest time something in the named, unpaused queues
// becomes claimable without another transition: a delayed job's RunAt or a
// lease deadline (after which a claim expires it). It returns the zero time
// when nothing is pending. A blocking claim sleeps until then at most. For
// a queue whose rate limit refuses its ready jobs now, it is also the time
// its next start is allowed.
func (m *Model) NextDue(queues []string) time.Time {
	var next int64
	for _, name := range queues {
		q := m.queues[name]
		if q == nil || q.paused {
			continue
		}
		for _, s := range []*orderedSet{&q.delayed, &q.active} {
			if it, ok := s.min(); ok && (next == 0 || it.a < next) {
				next = it.a
			}
		}
		if at := q.rate.next(m.now); at > 0 && q.ready.Len()+q.keyedReady() > 0 && (next == 0 || at < next) {
			next = at
		}
	}
	return toTime(next)
}
