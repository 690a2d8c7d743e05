package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/weirflow/weir"
)

// Stats reads what a metrics scrape reads (weir.Stats): the queues as
// Queues lists them with their failed and cancelled counts and the
// ready-at of their next job, and the workflows by state. The model
// counts the ended jobs by visiting every job; a store reads counts it
// keeps (spec/metrics.md).
func (m *Model) Stats(now time.Time) weir.Stats {
	qs := m.Queues(now)
	t := m.peek(now)
	st := weir.Stats{Time: toTime(t), Queues: make([]weir.QueueStats, len(qs)), Workflows: map[weir.WorkflowState]int{}}
	at := map[string]int{}
	for i, qi := range qs {
		st.Queues[i].QueueInfo = qi
		at[qi.Name] = i
		q := m.queues[qi.Name]
		var head int64
		if it, ok := q.ready.min(); ok && m.jobs[it.id] != nil {
			head = m.jobs[it.id].readyAt
		}
		if q.keys != nil {
			if it, ok := q.keys.all.min(); ok && m.jobs[it.id] != nil {
				if r := m.jobs[it.id].readyAt; head == 0 || r != 0 && r < head {
					head = r
				}
			}
		}
		st.Queues[i].HeadReadyAt = toTime(head)
	}
	for _, j := range m.jobs {
		i, ok := at[j.queue]
		if !ok || j.unlisted || j.ended+ms(m.cfg.Retention) <= t {
			continue
		}
		switch j.state {
		case weir.Failed:
			st.Queues[i].Failed++
		case weir.Cancelled:
			st.Queues[i].Cancelled++
		}
	}
	for _, s := range weir.WorkflowStates() {
		st.Workflows[s] = 0
	}
	for _, w := range m.workflows {
		st.Workflows[w.state]++
	}
	return st
}

// MergeStats merges the stats of a namespace's partitions: one entry per
// queue name, by name, its counts summed, the earliest head ready-at and
// every other field from the lowest partition that knows the queue; the
// workflow counts summed; the latest time.
func MergeStats(parts []weir.Stats) weir.Stats {
	out := weir.Stats{Queues: []weir.QueueStats{}, Workflows: map[weir.WorkflowState]int{}}
	at := map[string]int{}
	for _, p := range parts {
		if p.Time.After(out.Time) {
			out.Time = p.Time
		}
		for s, n := range p.Workflows {
			out.Workflows[s] += n
		}
		for _, q := range p.Queues {
			i, ok := at[q.Name]
			if !ok {
				at[q.Name] = len(out.Queues)
				out.Queues = append(out.Queues, q)
				continue
			}
			o := &out.Queues[i]
			o.Ready += q.Ready
			o.Delayed += q.Delayed
			o.Running += q.Running
			o.Failed += q.Failed
			o.Cancelled += q.Cancelled
			if !q.HeadReadyAt.IsZero() && (o.HeadReadyAt.IsZero() || q.HeadReadyAt.Before(o.HeadReadyAt)) {
				o.HeadReadyAt = q.HeadReadyAt
			}
		}
	}
	slices.SortFunc(out.Queues, func(a, b weir.QueueStats) int { return strings.Compare(a.Name, b.Name) })
	return out
}
