package memstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/weirflow/weir/engine"
)

var _ engine.EventReader = (*Store)(nil)

// maxEvents is how many events the store keeps (the oldest go first):
// redisstore's default cap, counted in events.
const maxEvents = 100_000

// takeEventsLocked moves the model's new events into the store's stream,
// numbering them. s.mu must be held.
func (s *Store) takeEventsLocked() {
	for _, e := range s.m.TakeEvents() {
		s.evSeq++
		e.ID = strconv.FormatInt(s.evSeq, 10)
		s.events = append(s.events, e)
	}
	if n := len(s.events) - maxEvents; n > 0 {
		s.events = append(s.events[:0:0], s.events[n:]...)
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

// Events reads the store's event stream (engine.EventReader); an event's
// ID is its number.
func (s *Store) Events(ctx context.Context, p engine.EventsParams) (engine.EventPage, error) {
	if err := engine.ValidateEventsParams(p); err != nil {
		return engine.EventPage{}, err
	}
	var after int64
	if p.After != "" {
		n, err := strconv.ParseInt(p.After, 10, 64)
		if err != nil || n < 0 {
			return engine.EventPage{}, fmt.Errorf("%w: event cursor %q", engine.ErrInvalid, p.After)
		}
		after = n
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
		page := engine.EventPage{Next: p.After}
		first := s.evSeq - int64(len(s.events)) + 1 // number of s.events[0]
		for i := max(after+1-first, 0); i < int64(len(s.events)) && len(page.Events) < limit; i++ {
			e := s.events[i]
			page.Next = e.ID
			if p.Workflow == "" || e.Workflow == p.Workflow {
				page.Events = append(page.Events, e)
			}
		}
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
			after, _ = strconv.ParseInt(page.Next, 10, 64)
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
