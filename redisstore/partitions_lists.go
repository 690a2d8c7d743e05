package redisstore

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weirflow/weir/engine"
)

// Merged reads over several partitions (spec/partitions.md, Lists).

// fanErr is a partition's error in a merged read: a refusal of the
// parameters as it is (every partition gives the same), another error
// naming its partition.
func fanErr(ps []*part, q int, err error) error {
	if errors.Is(err, weir.ErrInvalid) {
		return err
	}
	return partErr(ps, q, err)
}

// ListWorkflows implements engine.Store: newest first by (created, ID)
// over every partition, each read for at most a page; the cursor is the
// one-partition cursor, valid in every partition. With IDPrefix, in ID
// order (engine.MergeByID).
func (s *Store) ListWorkflows(ctx context.Context, p weir.ListParams) (weir.WorkflowPage, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return weir.WorkflowPage{}, err
	}
	if len(ps) == 1 {
		return ps[0].ListWorkflows(ctx, p)
	}
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	if engine.Filtered(p) {
		// each partition examined at most ListScan: merged as the model
		// merges (engine.MergeFiltered)
		pages := make([]weir.WorkflowPage, 0, len(ps))
		for q, pt := range ps {
			page, err := pt.ListWorkflows(ctx, p)
			if err != nil {
				return weir.WorkflowPage{}, fanErr(ps, q, err)
			}
			pages = append(pages, page)
		}
		if p.IDPrefix != "" {
			return engine.MergeByID(pages, limit), nil
		}
		return engine.MergeFiltered(pages, limit), nil
	}
	var all []weir.Workflow
	more := false
	for q, pt := range ps {
		page, err := pt.ListWorkflows(ctx, p)
		if err != nil {
			return weir.WorkflowPage{}, fanErr(ps, q, err)
		}
		all = append(all, page.Workflows...)
		more = more || page.NextCursor != ""
	}
	slices.SortFunc(all, func(x, y weir.Workflow) int {
		if c := y.CreatedAt.Compare(x.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(y.ID, x.ID)
	})
	if len(all) > limit {
		all, more = all[:limit], true
	}
	page := weir.WorkflowPage{Workflows: all}
	if more && len(all) > 0 {
		last := all[len(all)-1]
		page.NextCursor = strconv.FormatInt(last.CreatedAt.UnixMilli(), 10) + ":" + last.ID
	}
	return page, nil
}

// ListJobs implements engine.Store: the partitions in order, each one's
// jobs in its order. With several partitions the cursor is
// "<p>|<cursor of partition p>" (empty: from partition p's start); a page
// has a next cursor only when a job follows it, as with one partition.
func (s *Store) ListJobs(ctx context.Context, p weir.ListJobsParams) (weir.JobPage, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return weir.JobPage{}, err
	}
	if len(ps) == 1 {
		return ps[0].ListJobs(ctx, p)
	}
	limit, err := engine.ValidateListJobs(p)
	if err != nil {
		return weir.JobPage{}, err
	}
	from, cursor := 0, ""
	if p.Cursor != "" {
		a, c, ok := strings.Cut(p.Cursor, "|")
		n, err := strconv.Atoi(a)
		if !ok || err != nil || n < 0 || n >= len(ps) || strconv.Itoa(n) != a {
			return weir.JobPage{}, invalid("cursor", "%q is not a cursor this store returned", p.Cursor)
		}
		from, cursor = n, c
	}
	var page weir.JobPage
	for q := from; q < len(ps); q++ {
		for {
			sub := p
			sub.Cursor, sub.Limit = cursor, limit-len(page.Jobs)
			r, err := ps[q].ListJobs(ctx, sub)
			if err != nil {
				return weir.JobPage{}, fanErr(ps, q, err)
			}
			page.Jobs = append(page.Jobs, r.Jobs...)
			if r.NextCursor == "" {
				break
			}
			if len(page.Jobs) >= limit {
				page.NextCursor = strconv.Itoa(q) + "|" + r.NextCursor
				return page, nil
			}
			cursor = r.NextCursor
		}
		cursor = ""
		if len(page.Jobs) < limit {
			continue
		}
		// the page is full at partition q's end: a next cursor only when a
		// later partition has a job
		for r := q + 1; r < len(ps); r++ {
			sub := p
			sub.Cursor, sub.Limit = "", 1
			rp, err := ps[r].ListJobs(ctx, sub)
			if err != nil {
				return weir.JobPage{}, fanErr(ps, r, err)
			}
			if len(rp.Jobs) > 0 {
				page.NextCursor = strconv.Itoa(r) + "|"
				break
			}
		}
		return page, nil
	}
	return page, nil
}

// eventsSlice bounds one round of a waiting Events read over several
// partitions: each partition waits at most this long for its first
// event, then all are read again (a stream wait cannot be woken from
// another connection the way a list wait can).
const eventsSlice = 250 * time.Millisecond

// Events implements engine.EventReader. With several partitions an event's
// ID is "<p>|<ID in partition p>" and a cursor the partitions' cursors
// joined by "," in partition order (spec/partitions.md, Events): a page
// reads up to Limit events of each partition after its cursor and
// returns the first Limit in the order (time, partition, order in the
// partition). With a Workflow filter only its partition is read (the
// other cursors stay as they are).
func (s *Store) Events(ctx context.Context, p engine.EventsParams) (engine.EventPage, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.EventPage{}, err
	}
	if len(ps) == 1 {
		return ps[0].Events(ctx, p)
	}
	if err := engine.ValidateEventsParams(p); err != nil {
		return engine.EventPage{}, err
	}
	n := len(ps)
	curs := make([]string, n)
	if p.After != "" {
		cs := strings.Split(p.After, ",")
		if len(cs) != n {
			return engine.EventPage{}, invalid("after", "%q is not a cursor of a namespace of %d partitions", p.After, n)
		}
		for _, c := range cs {
			if _, _, err := parseCursor(c); err != nil {
				return engine.EventPage{}, err
			}
		}
		curs = cs
	}
	limit := p.Limit
	if limit == 0 {
		limit = engine.DefaultEventsLimit
	}
	only := -1
	if p.Workflow != "" {
		only = engine.Partition(p.Workflow, n)
	}
	deadline := time.Now().Add(p.Wait)
	pages := make([]engine.EventPage, n)
	errs := make([]error, n)
	for {
		wait := time.Duration(0)
		switch {
		case p.Wait > 0 && only >= 0:
			wait = max(time.Until(deadline), time.Millisecond) // one stream: one wait
		case p.Wait > 0:
			wait = min(time.Until(deadline), eventsSlice)
		}
		read := func(q int) {
			pages[q], errs[q] = ps[q].Events(ctx, engine.EventsParams{After: curs[q], Workflow: p.Workflow, Limit: limit, Wait: wait})
		}
		switch {
		case only >= 0:
			read(only)
		case wait <= 0:
			for q := range n {
				read(q)
			}
		default:
			var wg sync.WaitGroup
			for q := range n {
				wg.Add(1)
				go func() { defer wg.Done(); read(q) }()
			}
			wg.Wait()
		}
		got := false
		for q := range n {
			if errs[q] != nil {
				return engine.EventPage{}, fanErr(ps, q, errs[q])
			}
			got = got || len(pages[q].Events) > 0
		}
		if got || wait <= 0 || time.Until(deadline) <= 0 {
			break
		}
		for q := range n {
			if pages[q].Next != "" {
				curs[q] = pages[q].Next // past events the filter left out
			}
		}
		if err := ctx.Err(); err != nil {
			return engine.EventPage{}, err
		}
	}
	var page engine.EventPage
	heads := make([]int, n)
	for len(page.Events) < limit {
		best := -1
		for q := range n {
			if heads[q] < len(pages[q].Events) && (best < 0 || pages[q].Events[heads[q]].Time.Before(pages[best].Events[heads[best]].Time)) {
				best = q
			}
		}
		if best < 0 {
			break
		}
		e := pages[best].Events[heads[best]]
		heads[best]++
		curs[best] = e.ID
		e.ID = strconv.Itoa(best) + "|" + e.ID
		page.Events = append(page.Events, e)
	}
	for q := range n {
		if heads[q] == len(pages[q].Events) && pages[q].Next != "" {
			curs[q] = pages[q].Next // past events the filter left out
		}
	}
	if slices.ContainsFunc(curs, func(c string) bool { return c != "" }) {
		page.Next = strings.Join(curs, ",")
	}
	return page, nil
}
