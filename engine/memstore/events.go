package memstore

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

var _ engine.EventReader = (*Store)(nil)

// maxEvents is how many events the store keeps per partition (the oldest
// go first): redisstore's default cap, counted in events.
const maxEvents = 100_000

// stream is one partition's event stream: its last maxEvents events, and
// the number of every event ever taken (an event's ID in its partition).
type stream struct {
	events []weir.Event
	seq    int64
}

// takeEventsLocked moves the model's new events into the partitions'
// streams, numbering them. An event's ID is its number; in a store of P > 1
// partitions "<p>|<number>". s.mu must be held.
func (s *Store) takeEventsLocked() {
	parts := len(s.streams)
	for p := range s.streams {
		st := &s.streams[p]
		for _, e := range s.m.Part(p).TakeEvents() {
			st.seq++
			e.ID = strconv.FormatInt(st.seq, 10)
			if parts > 1 {
				e.ID = strconv.Itoa(p) + "|" + e.ID
			}
			st.events = append(st.events, e)
		}
		if n := len(st.events) - maxEvents; n > 0 {
			st.events = append(st.events[:0:0], st.events[n:]...)
		}
	}
}

// SetEventsOff switches the store's events off (true) or back on.
func (s *Store) SetEventsOff(ctx context.Context, off bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.SetEventsOff(off)
	return nil
}

// parseCursor reads an events cursor: with one partition an event's
// number; with P > 1 the P partitions' numbers joined by ',' (an empty
// one: from the partition's oldest event). "" is every partition from its
// oldest event.
func (s *Store) parseCursor(c string) ([]int64, error) {
	after := make([]int64, len(s.streams))
	if c == "" {
		return after, nil
	}
	fields := strings.Split(c, ",")
	if len(fields) != len(after) {
		return nil, fmt.Errorf("%w: event cursor %q", weir.ErrInvalid, c)
	}
	for i, f := range fields {
		if f == "" && len(after) > 1 {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: event cursor %q", weir.ErrInvalid, c)
		}
		after[i] = n
	}
	return after, nil
}

// formatCursor is parseCursor's inverse (p.After's own form kept for the
// partitions a page did not move).
func formatCursor(after []int64, given []string) string {
	if len(after) == 1 {
		return strconv.FormatInt(after[0], 10)
	}
	out := make([]string, len(after))
	for i, n := range after {
		if n > 0 {
			out[i] = strconv.FormatInt(n, 10)
		} else if given != nil {
			out[i] = given[i]
		}
	}
	return strings.Join(out, ",")
}

// Events reads the store's event stream (engine.EventReader): with one
// partition an event's ID is its number; with P > 1 partitions
// (spec/partitions.md) it is "<p>|<number in p>", a page reads up to Limit
// events of each partition after its cursor and returns the first Limit in
// the order (time, partition, order in the partition), and Next is the P
// partition cursors joined by ','. A workflow filter reads that workflow's
// partition only.
func (s *Store) Events(ctx context.Context, p engine.EventsParams) (engine.EventPage, error) {
	if err := engine.ValidateEventsParams(p); err != nil {
		return engine.EventPage{}, err
	}
	if s.bad != nil {
		return engine.EventPage{}, s.bad
	}
	after, err := s.parseCursor(p.After)
	if err != nil {
		return engine.EventPage{}, err
	}
	limit := p.Limit
	if limit == 0 {
		limit = engine.DefaultEventsLimit
	}
	var deadline time.Time
	if p.Wait > 0 {
		deadline = time.Now().Add(p.Wait)
	}
	for {
		if err := ctx.Err(); err != nil {
			return engine.EventPage{}, err
		}
		s.mu.Lock()
		page := s.pageLocked(p, after, limit)
		var changed <-chan struct{}
		if len(page.Events) == 0 && p.Wait > 0 {
			changed = s.waitChLocked("Events")
		}
		s.mu.Unlock()
		if changed == nil {
			return page, nil
		}
		if page.Next != p.After {
			p.After = page.Next
			after, _ = s.parseCursor(page.Next)
		}
		d := time.Until(deadline)
		if d <= 0 {
			return page, nil
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return engine.EventPage{}, ctx.Err()
		case <-t.C:
		case <-changed:
			t.Stop()
		}
	}
}

// pageLocked reads one page after the partitions' cursors. s.mu must be
// held.
func (s *Store) pageLocked(p engine.EventsParams, after []int64, limit int) engine.EventPage {
	page := engine.EventPage{Next: p.After}
	if len(s.streams) == 1 {
		st := &s.streams[0]
		first := st.seq - int64(len(st.events)) + 1 // number of st.events[0]
		for i := max(after[0]+1-first, 0); i < int64(len(st.events)) && len(page.Events) < limit; i++ {
			e := st.events[i]
			page.Next = e.ID
			if p.Workflow == "" || e.Workflow == p.Workflow {
				page.Events = append(page.Events, e)
			}
		}
		return page
	}
	var given []string
	if p.After != "" {
		given = strings.Split(p.After, ",")
	}
	next := make([]int64, len(after))
	copy(next, after)
	var all [][]weir.Event
	var nums [][]int64
	for q := range s.streams {
		var es []weir.Event
		var ns []int64
		if p.Workflow == "" || engine.Partition(p.Workflow, len(s.streams)) == q {
			st := &s.streams[q]
			first := st.seq - int64(len(st.events)) + 1
			for i := max(after[q]+1-first, 0); i < int64(len(st.events)) && len(es) < limit; i++ {
				e := st.events[i]
				if p.Workflow != "" && e.Workflow != p.Workflow {
					next[q] = first + i // passed over, as with one partition
					continue
				}
				es = append(es, e)
				ns = append(ns, first+i)
			}
		}
		all, nums = append(all, es), append(nums, ns)
	}
	// the first limit in (time, partition, order): a merge of the sorted
	// lists
	pos := make([]int, len(all))
	for len(page.Events) < limit {
		best := -1
		for q := range all {
			if pos[q] < len(all[q]) && (best < 0 || all[q][pos[q]].Time.Before(all[best][pos[best]].Time)) {
				best = q
			}
		}
		if best < 0 {
			break
		}
		page.Events = append(page.Events, all[best][pos[best]])
		next[best] = max(next[best], nums[best][pos[best]])
		pos[best]++
	}
	for q := range next {
		if next[q] != after[q] {
			page.Next = formatCursor(next, given)
			break
		}
	}
	return page
}
