package scenario

import (
	"maps"
	"slices"
	"strings"

	"github.com/weirflow/weir"
)

type opList struct {
	noMore
	p      weir.ListParams
	cursor *word
}

func (*opList) needsReply() bool { return true }

func parseList(args []word) (operation, error) {
	o, err := parseOpts(args, map[string]kind{"state": kStr, "limit": kInt, "cursor": kToken, "name": kStr, "labels": kStr, "id_prefix": kStr})
	if err != nil {
		return nil, err
	}
	op := &opList{p: weir.ListParams{State: weir.WorkflowState(o.str("state")), Limit: o.int("limit", 0),
		Name: o.str("name"), Labels: labelsOpt(o.str("labels")), IDPrefix: o.str("id_prefix")}}
	if w, ok := o["cursor"]; ok {
		op.cursor = &w
	}
	return op, nil
}

func (op *opList) exec(r *runner, st *Step) error {
	p := op.p
	if op.cursor != nil {
		c, err := r.value(st, *op.cursor)
		if err != nil {
			return err
		}
		if c != "-" {
			p.Cursor = c
		}
	}
	page, err := r.store(st).ListWorkflows(r.ctx, p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, w := range page.Workflows {
		l := line{{"", w.ID}, {"", string(w.State)}}
		if w.Name != "" {
			l = append(l, field{"name", w.Name})
		}
		if len(w.Labels) > 0 {
			l = append(l, field{"labels", labelsText(w.Labels)})
		}
		got = append(got, l)
	}
	next := page.NextCursor
	if next == "" {
		next = "-"
	}
	return r.compare(st, append(got, line{{"next", next}}))
}

// labelsOpt reads a labels= option, "k=v,k2=v2" (nil for "").
func labelsOpt(s string) map[string]string {
	if s == "" {
		return nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// labelsText writes labels as labelsOpt reads them, by key.
func labelsText(labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}
