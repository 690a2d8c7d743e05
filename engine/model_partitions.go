package engine

import (
	"cmp"
	"github.com/weirflow/weir"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Model of P > 1 partitions (spec/partitions.md) holds P sub-models,
// each a whole one-partition Model with its own clock state, queues,
// leases, unique keys, expiry and events; its own fields other than cfg,
// parts and claims stay empty. Every public method dispatches: a call by
// ID to the partition of the ID, the others to every partition as the
// spec's table says. A Model of one partition has no sub-models and runs
// as it always did.

// newParts makes the sub-models of a Model with cfg.
func newParts(cfg Config) []*Model {
	n := min(cfg.PartitionCount(), MaxPartitions)
	if n < 2 {
		return nil
	}
	sub := cfg
	sub.Partitions = 1
	parts := make([]*Model, n)
	for i := range parts {
		parts[i] = NewModel(sub)
		parts[i].idParts = n
	}
	return parts
}

// Parts is the number of the model's partitions (1 for a model of one).
func (m *Model) Parts() int { return max(len(m.parts), 1) }

// Part returns the one-partition model of partition p, in [0, Parts()):
// m itself when m has one partition. A store built on the model reads a
// partition's own clock and events through it; it must not change the
// sub-model other than through m.
func (m *Model) Part(p int) *Model {
	if m.parts == nil {
		return m
	}
	return m.parts[p]
}

// at returns the sub-model of partition of id (m itself with one).
func (m *Model) at(id string) *Model {
	if m.parts == nil {
		return m
	}
	return m.parts[Partition(id, len(m.parts))]
}

// claimParts is a claim in a namespace of partitions: the c-th one (from
// 0) visits partitions c mod P, c+1 mod P, ... each once, claiming in each
// as many as still missing from p.Max, until it has p.Max. p is valid.
func (m *Model) claimParts(now time.Time, p ClaimParams) []Claimed {
	n := len(m.parts)
	first := int(m.claims % uint64(n))
	m.claims++
	var out []Claimed
	for i := 0; i < n && len(out) < p.Max; i++ {
		s := m.parts[(first+i)%n]
		t := s.tick(now)
		q := p
		q.Max = p.Max - len(out)
		out = append(out, s.claim(t, q)...)
	}
	return out
}

// finishParts settles each outcome in the partition of its job (the whole
// call checked first, in every partition it reaches, before any outcome
// is settled); the claim runs in the partition of the first outcome,
// after that partition's outcomes, or, with no outcome, as a claim call
// of its own (claimParts).
func (m *Model) finishParts(now time.Time, p FinishParams) (FinishResult, error) {
	if err := m.validateFinish(p); err != nil {
		return FinishResult{}, err
	}
	if err := CheckFinishAdds(p, len(m.parts)); err != nil {
		return FinishResult{}, err
	}
	if len(p.Outcomes) == 0 {
		// Settled empty, not nil: as with one partition
		return FinishResult{Settled: []Settled{}, Claimed: m.claimParts(now, *p.Claim)}, nil
	}
	groups, order := m.groupBy(len(p.Outcomes), func(i int) string { return p.Outcomes[i].JobID })
	for _, g := range order {
		// the tasks added, checked against running jobs only (which no
		// clock removes): before any partition is written
		outs := make([]Outcome, len(groups[g]))
		for k, i := range groups[g] {
			outs[k] = p.Outcomes[i]
		}
		if err := m.parts[g].addCheck(outs); err != nil {
			return FinishResult{}, err
		}
	}
	claimIn := Partition(p.Outcomes[0].JobID, len(m.parts))
	res := FinishResult{Settled: make([]Settled, len(p.Outcomes))}
	for _, g := range order {
		s := m.parts[g]
		t := s.tick(now)
		for _, i := range groups[g] {
			res.Settled[i] = s.finish(t, p.Outcomes[i])
		}
		if p.Claim != nil && g == claimIn {
			res.Claimed = s.claim(t, *p.Claim)
		}
	}
	return res, nil
}

// groupBy groups the indexes [0, n) by the partition of id(i), each group
// in index order; order lists the partitions met, ascending.
func (m *Model) groupBy(n int, id func(i int) string) (groups map[int][]int, order []int) {
	groups = map[int][]int{}
	for i := range n {
		g := Partition(id(i), len(m.parts))
		if groups[g] == nil {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	slices.Sort(order)
	return groups, order
}

// heartbeatParts extends each lease in the partition of its job; the
// statuses come back in the order asked. p is valid.
func (m *Model) heartbeatParts(now time.Time, p HeartbeatParams) ([]LeaseStatus, error) {
	out := make([]LeaseStatus, len(p.Leases))
	groups, order := m.groupBy(len(p.Leases), func(i int) string { return p.Leases[i].JobID })
	for _, g := range order {
		q := HeartbeatParams{Extend: p.Extend, Leases: make([]LeaseRef, len(groups[g]))}
		for k, i := range groups[g] {
			q.Leases[k] = p.Leases[i]
		}
		st, err := m.parts[g].Heartbeat(now, q)
		if err != nil {
			return nil, err // not reached: p was checked
		}
		for k, i := range groups[g] {
			out[i] = st[k]
		}
	}
	return out, nil
}

// expireParts sweeps every partition in order, the results concatenated.
// p is valid.
func (m *Model) expireParts(now time.Time, p ExpireParams) (ExpireResult, error) {
	var res ExpireResult
	for _, s := range m.parts {
		r, err := s.ExpireLeases(now, p)
		if err != nil {
			return res, err // not reached: p was checked
		}
		res.Expired = append(res.Expired, r.Expired...)
		res.Due = append(res.Due, r.Due...)
	}
	return res, nil
}

// eachPart runs f on every partition in order: a queue setting, checked
// by the caller first, so that none fails.
func (m *Model) eachPart(f func(s *Model) error) error {
	for _, s := range m.parts {
		if err := f(s); err != nil {
			return err
		}
	}
	return nil
}

// purgeParts purges the queue in every partition in order.
func (m *Model) purgeParts(now time.Time, name string) (PurgeResult, error) {
	if !ValidName(name) {
		return PurgeResult{}, invalid("", "queue", "queue name %q must "+NameRule, name)
	}
	var res PurgeResult
	for _, s := range m.parts {
		r, err := s.PurgeQueue(now, name)
		if err != nil {
			return res, err // not reached: name was checked
		}
		res.Purged = append(res.Purged, r.Purged...)
		res.Pushed = append(res.Pushed, r.Pushed...)
	}
	return res, nil
}

// queuesParts merges the partitions' queues: one entry per name, counts
// summed, every other field from the lowest partition that knows it.
func (m *Model) queuesParts(now time.Time) []weir.QueueInfo {
	var out []weir.QueueInfo
	at := map[string]int{}
	for _, s := range m.parts {
		for _, q := range s.Queues(now) {
			i, ok := at[q.Name]
			if !ok {
				at[q.Name] = len(out)
				out = append(out, q)
				continue
			}
			out[i].Ready += q.Ready
			out[i].Delayed += q.Delayed
			out[i].Running += q.Running
		}
	}
	slices.SortFunc(out, func(a, b weir.QueueInfo) int { return strings.Compare(a.Name, b.Name) })
	if out == nil {
		out = []weir.QueueInfo{}
	}
	return out
}

// contentsParts concatenates the partitions' lists in partition order.
func (m *Model) contentsParts(now time.Time, name string) QueueContents {
	var c QueueContents
	for _, s := range m.parts {
		sc := s.QueueContents(now, name)
		c.Ready = append(c.Ready, sc.Ready...)
		c.Delayed = append(c.Delayed, sc.Delayed...)
		c.Running = append(c.Running, sc.Running...)
	}
	return c
}

// listWorkflowsParts merges the partitions' pages, newest first, with the
// one-partition cursor: each partition's page of Limit after the cursor
// holds every workflow of it that can be on the merged page, and says
// whether it holds more.
func (m *Model) listWorkflowsParts(now time.Time, p weir.ListParams) (weir.WorkflowPage, error) {
	type entry struct {
		w       weir.Workflow
		created int64
	}
	var all []entry
	more := false // a partition holds more than its page
	for _, s := range m.parts {
		pg, err := s.ListWorkflows(now, p)
		if err != nil {
			return weir.WorkflowPage{}, err
		}
		for _, w := range pg.Workflows {
			all = append(all, entry{w, s.workflows[w.ID].created})
		}
		more = more || pg.NextCursor != ""
	}
	slices.SortFunc(all, func(x, y entry) int {
		return cmp.Or(-cmp.Compare(x.created, y.created), -strings.Compare(x.w.ID, y.w.ID))
	})
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	var page weir.WorkflowPage
	for _, e := range all[:min(limit, len(all))] {
		page.Workflows = append(page.Workflows, e.w)
	}
	// more follow the page when the partitions gave more than a page, or
	// one of them (which then gave a whole page) holds more
	if len(all) > limit || more {
		last := all[limit-1]
		page.NextCursor = strconv.FormatInt(last.created, 10) + ":" + last.w.ID
	}
	return page, nil
}

// listJobsParts lists the partitions in order, each one's jobs in its
// one-partition order; the cursor is "<p>|<cursor in p>". Next is empty
// exactly when no job follows the page; when the page ends with the last
// job of its partition, it is "<q>|" of the next partition q that holds
// one.
func (m *Model) listJobsParts(now time.Time, p weir.ListJobsParams) (weir.JobPage, error) {
	limit, err := ValidateListJobs(p)
	if err != nil {
		return weir.JobPage{}, err
	}
	from, cursor := 0, ""
	if p.Cursor != "" {
		ps, c, ok := strings.Cut(p.Cursor, "|")
		n, err := strconv.Atoi(ps)
		if !ok || err != nil || n < 0 || n >= len(m.parts) || strconv.Itoa(n) != ps {
			return weir.JobPage{}, badCursor(p.Cursor)
		}
		from, cursor = n, c
	}
	var page weir.JobPage
	for g := from; g < len(m.parts); g++ {
		s := m.parts[g]
		q := p
		q.Cursor = ""
		if g == from {
			q.Cursor = cursor
		}
		need := limit - len(page.Jobs)
		if need == 0 {
			q.Limit = 1
			pg, err := s.ListJobs(now, q)
			if err != nil {
				return weir.JobPage{}, err
			}
			if len(pg.Jobs) > 0 {
				page.NextCursor = strconv.Itoa(g) + "|"
				break
			}
			continue
		}
		q.Limit = need
		pg, err := s.ListJobs(now, q)
		if err != nil {
			return weir.JobPage{}, err
		}
		page.Jobs = append(page.Jobs, pg.Jobs...)
		if pg.NextCursor != "" {
			page.NextCursor = strconv.Itoa(g) + "|" + pg.NextCursor
			break
		}
	}
	return page, nil
}

// MergeEvents merges the partitions' events, each list in its partition's
// order, into the order of spec/partitions.md: by event time, then
// partition, then order in the partition.
func MergeEvents(parts [][]weir.Event) []weir.Event {
	var all []weir.Event
	for _, es := range parts {
		all = append(all, es...)
	}
	slices.SortStableFunc(all, func(a, b weir.Event) int { return a.Time.Compare(b.Time) })
	return all
}
