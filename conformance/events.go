package conformance

import (
	"cmp"
	"fmt"
	"github.com/weirflow/weir"
	"slices"
	"strings"

	"github.com/weirflow/weir/engine"
)

// checkEvents compares the events of the step just made: the model's
// (engine.Model.TakeEvents) with those the store's stream holds after the
// last ones read (engine.EventReader), without their IDs, each job's and
// workflow's in order (sortedEvents): no event for a transition that did not happen, none lost for one that
// did, each once however many calls the store's step took. Stores
// without an event stream are not checked.
func (d *differ) checkEvents() {
	d.t.Helper()
	me := d.m.TakeEvents()
	er, ok := d.s.(engine.EventReader)
	if !ok {
		return
	}
	var se []weir.Event
	for {
		p, err := er.Events(d.ctx, engine.EventsParams{After: d.evAfter, Limit: engine.MaxEventsLimit})
		if err != nil {
			d.fatalf("events: %v", err)
		}
		if len(p.Events) > 0 && p.Next == d.evAfter {
			d.fatalf("events: the cursor %q did not move", p.Next)
		}
		d.evAfter = p.Next
		if len(p.Events) == 0 {
			break
		}
		se = append(se, p.Events...)
	}
	for i := range se {
		if se[i].ID == "" {
			d.fatalf("events: store event %+v has no ID", se[i])
		}
		se[i].ID = ""
	}
	ms, ss := sortedEvents(me), sortedEvents(se)
	if !slices.Equal(ms, ss) {
		d.fatalf("events differ:\nmodel %s\nstore %s", strings.Join(ms, "\n      "), strings.Join(ss, "\n      "))
	}
}

// sortedEvents formats events (without IDs), grouped by what they are
// about (a job, or a workflow's own events) in the order they came: the
// order of one job's (or workflow's) events is part of the contract, the
// order among different ones within a step is not.
func sortedEvents(es []weir.Event) []string {
	es = slices.Clone(es)
	slices.SortStableFunc(es, func(a, b weir.Event) int {
		return cmp.Or(cmp.Compare(a.Workflow, b.Workflow), cmp.Compare(a.Job, b.Job))
	})
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%s %s %s job=%s task=%s undo=%v attempt=%d reason=%q", e.Time.Format("15:04:05.000"), e.Type, e.Workflow, e.Job, e.Task, e.Undo, e.Attempt, e.Reason)
	}
	return out
}
