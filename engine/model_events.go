package engine

import "github.com/weirflow/weir"

// emit records the event of a transition that happened at now
// (spec/events.md), unless events are off.
func (m *Model) emit(t weir.EventType, id string, attempt int, reason string, now int64) {
	m.emitW(t, id, attempt, reason, "", now)
}

// emitW is emit for the event of a running attempt, by worker (its
// claim's WorkerID).
func (m *Model) emitW(t weir.EventType, id string, attempt int, reason, worker string, now int64) {
	if m.eventsOff {
		return
	}
	e := weir.NewEvent(t, id, attempt, reason, toTime(now))
	e.Worker = worker
	m.events = append(m.events, e)
}

// TakeEvents returns the events of the transitions since the last call,
// in the order they happened, and forgets them (their IDs are empty: a
// store gives them).
func (m *Model) TakeEvents() []weir.Event {
	e := m.events
	m.events = nil
	return e
}

// SetEventsOff switches the model's events off (true) or on: a namespace
// whose events are off records none.
func (m *Model) SetEventsOff(off bool) {
	m.eventsOff = off
}
