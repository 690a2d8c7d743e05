package engine

import (
	"context"
	"github.com/weirflow/weir"
	"time"
)

// EventReader is implemented by stores that keep an event stream
// (spec/events.md): every transition appends its events in the same
// atomic step, and readers resume from an event's ID. Both stores of this
// module implement it.
type EventReader interface {
	// Events returns the events after p.After, oldest first. With p.Wait
	// > 0 and none there yet, it blocks until one comes, p.Wait has passed
	// or ctx is done (no error for an empty page).
	Events(ctx context.Context, p EventsParams) (EventPage, error)
}

// EventsParams asks for a page of the event stream.
type EventsParams struct {
	// After is the ID of the last event seen (an Event.ID or an
	// EventPage.Next); "" reads from the oldest event the stream keeps.
	After string
	// Workflow, when set, keeps only that workflow's events (its own and
	// its jobs'); the filter runs in the reader (spec/events.md).
	Workflow string
	// Limit bounds the events returned: 1 to MaxEventsLimit, 0 for
	// DefaultEventsLimit.
	Limit int
	// Wait > 0 blocks until an event comes when none is there yet.
	Wait time.Duration
}

// Bounds of EventsParams.Limit.
const (
	DefaultEventsLimit = 1000
	MaxEventsLimit     = 10_000
)

// EventPage is a page of the event stream.
type EventPage struct {
	Events []weir.Event
	// Next is the cursor to pass as After for the next page: the ID of
	// the last event read (with a Workflow filter, also of events the
	// filter dropped); After itself when nothing was read.
	Next string
}

// ValidateEventsParams checks EventsParams as every store does.
func ValidateEventsParams(p EventsParams) error {
	if p.Limit < 0 || p.Limit > MaxEventsLimit {
		return invalid("", "limit", "%d is outside [0, %d]", p.Limit, MaxEventsLimit)
	}
	if p.Workflow != "" && !ValidID(p.Workflow) {
		return invalid("", "workflow", "workflow ID %q must "+IDRule, p.Workflow)
	}
	if p.Wait < 0 {
		return invalid("", "wait", "negative wait %v", p.Wait)
	}
	return nil
}
