package client

import (
	"context"
	"fmt"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// EventsParams asks for events of the store's event stream
// (spec/events.md).
type EventsParams struct {
	// After is the ID of the last event seen (an Event.ID or an
	// EventPage.Next); "" starts from the oldest event the stream keeps.
	After string
	// Workflow, when set, keeps only that workflow's events (filtered by
	// the reader, not the store).
	Workflow string
	// Limit bounds the events of one page: 1 to 10,000, 0 for 1,000.
	Limit int
}

// EventPage is a page of events and the cursor for the next one.
type EventPage struct {
	// Events are the page's events, oldest first.
	Events []weir.Event
	// Next is the cursor to pass as the next call's After: the ID of the
	// last event read (with a Workflow filter, also of events the filter
	// dropped); After itself when nothing was read.
	Next string
}

// EventsSwitch is implemented by stores whose event stream can be
// switched off for the namespace (both stores of this module).
type EventsSwitch interface {
	SetEventsOff(ctx context.Context, off bool) error
}

func (c *Client) events() (engine.EventReader, error) {
	r, ok := c.store.(engine.EventReader)
	if !ok {
		return nil, fmt.Errorf("weir: the store (%T) keeps no event stream", c.store)
	}
	return r, nil
}

// Events returns the events after p.After, oldest first: what every
// transition of a workflow or job wrote, in the same step, to the
// namespace's event stream. Pass the page's Next as the next call's After
// to resume; a page with no events means none came yet.
func (c *Client) Events(ctx context.Context, p EventsParams) (EventPage, error) {
	r, err := c.events()
	if err != nil {
		return EventPage{}, err
	}
	pg, err := r.Events(ctx, engine.EventsParams{After: p.After, Workflow: p.Workflow, Limit: p.Limit})
	if err != nil {
		return EventPage{}, err
	}
	return EventPage{Events: pg.Events, Next: pg.Next}, nil
}

// followWait is how long one blocking read of FollowEvents waits before it
// looks at its context again.
const followWait = time.Second

// FollowEvents calls fn with each event after p.After, as it comes, until
// ctx is done (then it returns ctx's error, and calls fn no more) or fn
// returns an error (which it returns). Resume a follow that ended after the last event handled,
// by its ID.
func (c *Client) FollowEvents(ctx context.Context, p EventsParams, fn func(weir.Event) error) error {
	r, err := c.events()
	if err != nil {
		return err
	}
	q := engine.EventsParams{After: p.After, Workflow: p.Workflow, Limit: p.Limit}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		wait := followWait
		if d, ok := ctx.Deadline(); ok {
			wait = max(min(wait, time.Until(d)), time.Millisecond)
		}
		q.Wait = wait
		pg, err := r.Events(ctx, q)
		if err != nil {
			return err
		}
		for _, e := range pg.Events {
			if err := fn(e); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		q.After = pg.Next
	}
}

// SetEventsOff switches the namespace's event stream off (true: its
// transitions write no events) or back on, for every process of the
// namespace from its next call. On the Redis store, on restores the
// default cap (redisstore.Store.SetEvents sets another).
func (c *Client) SetEventsOff(ctx context.Context, off bool) error {
	s, ok := c.store.(EventsSwitch)
	if !ok {
		return fmt.Errorf("weir: the store (%T) has no event stream switch", c.store)
	}
	return s.SetEventsOff(ctx, off)
}
