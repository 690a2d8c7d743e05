package redisstore

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"

	"github.com/weirflow/weir/engine"
)

// ListJobs implements engine.Store. A cursor of a waiting list (ready,
// delayed, running) is "<score>:<id>" of the previous page's last job, its
// score in the queue's set ("k<score>:<id>" among a ready list's keyed
// jobs, which follow its unkeyed ones); one of an ended list is the model's,
// "<ended ms>:<id>".
func (pt *part) ListJobs(ctx context.Context, p weir.ListJobsParams) (weir.JobPage, error) {
	limit, err := engine.ValidateListJobs(p)
	if err != nil {
		return weir.JobPage{}, err
	}
	cursor := ""
	if p.Cursor != "" {
		c, id, ok := strings.Cut(p.Cursor, ":")
		bad := !ok || !validJobID(id)
		switch p.State {
		case weir.ListReady, weir.ListDelayed, weir.ListRunning:
			if p.State == weir.ListReady && strings.HasPrefix(c, "l") {
				// a position in the ready list (spec/keys.md, lt)
				if _, err := strconv.ParseInt(c[1:], 10, 64); err != nil {
					bad = true
				}
			} else {
				if p.State == weir.ListReady {
					c = strings.TrimPrefix(c, "k")
				}
				if _, err := strconv.ParseFloat(c, 64); err != nil || strings.ContainsAny(c, "([") {
					bad = true
				}
			}
			cursor = p.Cursor
		default:
			ended, err := strconv.ParseInt(c, 10, 64)
			if err != nil || ended < 0 || ended > 999_999_999_999_999 {
				bad = true
			}
			cursor = fmt.Sprintf("%015d:%s", ended, id)
		}
		if bad {
			return weir.JobPage{}, invalid("cursor", "%q is not a cursor this store returned", p.Cursor)
		}
	}
	v, err := pt.run(ctx, "list_jobs", p.Queue, string(p.State), limit, cursor)
	if err != nil {
		return weir.JobPage{}, err
	}
	r := newReader(v)
	var page weir.JobPage
	next := r.str()
	n := r.count()
	for i := 0; i < n && r.err == nil; i++ {
		page.Jobs = append(page.Jobs, r.job())
	}
	if err := r.done(); err != nil {
		return weir.JobPage{}, err
	}
	switch p.State {
	case weir.ListReady, weir.ListDelayed, weir.ListRunning:
		page.NextCursor = next
	default:
		if next != "" {
			c, id, _ := strings.Cut(next, ":")
			ended, err := strconv.ParseInt(c, 10, 64)
			if err != nil {
				return weir.JobPage{}, fmt.Errorf("%w: list cursor %q", weir.ErrProtocol, next)
			}
			page.NextCursor = strconv.FormatInt(ended, 10) + ":" + id
		}
	}
	return page, nil
}
