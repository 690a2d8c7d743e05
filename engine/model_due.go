package engine

import "time"

// NextDue returns the earliest time something in the named, unpaused queues
// becomes claimable without another transition: a delayed job's RunAt or a
// lease deadline (after which a claim expires it). It returns the zero time
// when nothing is pending. A blocking claim sleeps until then at most.
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
	}
	return toTime(next)
}
