package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

var workflowStates = []weir.WorkflowState{
	weir.WorkflowRunning, weir.WorkflowCompleted, weir.WorkflowFailed, weir.WorkflowCancelled,
	weir.WorkflowCompensating, weir.WorkflowCompensated, weir.WorkflowCompensationFailed,
}

// ListWorkflows implements engine.Store. The cursor is the model's,
// "<created ms>:<id>" of the previous page's last workflow; with IDPrefix
// its ID (the listing is in ID order, read from the partition's index of
// IDs, P wf:id).
func (pt *part) ListWorkflows(ctx context.Context, p weir.ListParams) (weir.WorkflowPage, error) {
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 {
		return weir.WorkflowPage{}, invalid("limit", "%d is outside [1, 1000]", p.Limit)
	}
	if p.State != "" && !slices.Contains(workflowStates, p.State) {
		return weir.WorkflowPage{}, invalid("state", "unknown workflow state %q", p.State)
	}
	if err := engine.ValidateListFilter(p); err != nil {
		return weir.WorkflowPage{}, err
	}
	cursor := ""
	switch {
	case p.IDPrefix != "" && p.Cursor != "":
		if !engine.ValidID(p.Cursor) {
			return weir.WorkflowPage{}, invalid("cursor", "%q is not a cursor this store returned", p.Cursor)
		}
		if p.Cursor >= p.IDPrefix {
			cursor = p.Cursor // else: from the prefix's first ID
		}
	case p.Cursor != "":
		c, id, ok := strings.Cut(p.Cursor, ":")
		created, err := strconv.ParseInt(c, 10, 64)
		if !ok || err != nil || !engine.ValidID(id) {
			return weir.WorkflowPage{}, invalid("cursor", "%q is not a cursor this store returned", p.Cursor)
		}
		switch {
		case created < 0:
			return weir.WorkflowPage{}, ctx.Err()
		case created > 999_999_999_999_999:
			cursor = ""
		default:
			cursor = fmt.Sprintf("%015d:%s", created, id)
		}
	}
	lb := ""
	if len(p.Labels) > 0 {
		lb = encodeLabels(p.Labels)
	}
	v, err := pt.run(ctx, "list", string(p.State), limit, cursor, p.Name, lb, weir.ListScan, p.IDPrefix)
	if err != nil {
		if rerr := redis.Error(nil); errors.As(err, &rerr) && strings.HasPrefix(rerr.Error(), "NOINDEX ") {
			return weir.WorkflowPage{}, fmt.Errorf("%w: partition %s has no index of workflow IDs yet (written by a build before it had one): run `weir migrate` (redisstore.Store.Migrate), which builds it in bounded steps while the namespace stays in use (docs/upgrading.md)", ErrNeedsMigration, pt.keys.prefix)
		}
		return weir.WorkflowPage{}, err
	}
	r := newReader(v)
	next := r.str()
	n := r.count()
	var page weir.WorkflowPage
	for i := 0; i < n && r.err == nil; i++ {
		if r.peek() == "L" {
			// a large record, or one past what the call read itself
			r.i++
			id := r.str()
			w, err := pt.getWorkflow(ctx, id, false)
			if errors.Is(err, weir.ErrNotFound) {
				continue // removed since (its retention passed)
			}
			if err != nil {
				return weir.WorkflowPage{}, err
			}
			page.Workflows = append(page.Workflows, w)
			continue
		}
		k := r.count()
		if r.i+k > len(r.v) {
			return weir.WorkflowPage{}, fmt.Errorf("%w: short list reply", weir.ErrProtocol)
		}
		w, err := workflowFromHash(r.v[r.i : r.i+k])
		if err != nil {
			return weir.WorkflowPage{}, err
		}
		r.i += k
		page.Workflows = append(page.Workflows, w)
	}
	if r.err != nil {
		return weir.WorkflowPage{}, r.err
	}
	switch {
	case next != "" && p.IDPrefix != "":
		page.NextCursor = next
	case next != "":
		c, id, _ := strings.Cut(next, ":")
		created, _ := strconv.ParseInt(strings.TrimLeft(c, "0"), 10, 64)
		page.NextCursor = strconv.FormatInt(created, 10) + ":" + id
	}
	return page, nil
}
