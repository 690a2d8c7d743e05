package engine

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/weirflow/weir"
)

// Bounds of a workflow's name and labels (SubmitParams.Name and Labels,
// ValidateNameLabels).
const (
	// MaxWorkflowName is the most bytes of a workflow's name.
	MaxWorkflowName = 128
	// MaxLabels is the most labels of a workflow.
	MaxLabels = 16
	// MaxLabelValue is the most bytes of a label's value.
	MaxLabelValue = 128
)

// LabelKeyRule says which label keys ValidateNameLabels accepts.
const LabelKeyRule = "match ^[A-Za-z0-9_.-]{1,64}$"

// ValidateNameLabels checks a workflow's name and labels as a submit
// gives them: the name empty (none) or at most MaxWorkflowName bytes of
// UTF-8 text without control characters; at most MaxLabels labels, each
// key matching LabelKeyRule and each value at most MaxLabelValue bytes of
// UTF-8 text without control characters (empty allowed). The error is an
// ErrInvalid *weir.ValidationError naming the field: "name" or
// "labels[<key>]" or "labels".
func ValidateNameLabels(name string, labels map[string]string) error {
	if err := validText("name", name, MaxWorkflowName, "workflow name"); err != nil {
		return err
	}
	return validateLabels(labels)
}

func validateLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return invalid("", "labels", "%d labels; a workflow carries at most %d", len(labels), MaxLabels)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first bad one in key order, the same every time
	for _, k := range keys {
		if !validChars(k, 64) {
			return invalid("", "labels", "label key %.80q must %s", k, LabelKeyRule)
		}
		if err := validText("labels["+k+"]", labels[k], MaxLabelValue, "label value"); err != nil {
			return err
		}
	}
	return nil
}

// validText checks a name or a label value: at most max bytes of UTF-8
// without control characters.
func validText(field, s string, max int, what string) error {
	if len(s) > max {
		return invalid("", field, "%s of %d bytes is longer than %d", what, len(s), max)
	}
	if !utf8.ValidString(s) {
		return invalid("", field, "%s %.80q is not UTF-8 text", what, s)
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
		return invalid("", field, "%s %.80q holds a control character; use printable text", what, s)
	}
	return nil
}

// ValidateListFilter checks a listing's Name and Labels filters with the
// rules of ValidateNameLabels, and its IDPrefix: at most 128 bytes of the
// characters of an ID (A-Z a-z 0-9 _ . - @). The error is an ErrInvalid
// *weir.ValidationError naming the field ("id_prefix" for IDPrefix).
func ValidateListFilter(p weir.ListParams) error {
	if len(p.IDPrefix) > 128 {
		return invalid("", "id_prefix", "ID prefix of %d bytes is longer than 128, the longest ID", len(p.IDPrefix))
	}
	if p.IDPrefix != "" && !validChars(strings.ReplaceAll(p.IDPrefix, "@", "_"), 128) {
		return invalid("", "id_prefix", "ID prefix %.80q holds a character no ID has; use A-Z a-z 0-9 _ . - @", p.IDPrefix)
	}
	return ValidateNameLabels(p.Name, p.Labels)
}

// Filtered reports whether a listing filters by name, labels or ID
// prefix, so that it examines at most weir.ListScan workflows per
// partition.
func Filtered(p weir.ListParams) bool {
	return p.Name != "" || len(p.Labels) > 0 || p.IDPrefix != ""
}

// MatchesFilter reports whether a workflow of name and labels passes a
// listing's Name (a prefix) and Labels (every pair) filters.
func MatchesFilter(p weir.ListParams, name string, labels map[string]string) bool {
	if !strings.HasPrefix(name, p.Name) {
		return false
	}
	for k, v := range p.Labels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// MergeByID merges the pages of one listing with IDPrefix (in ID order,
// the cursor an ID) from each partition of a namespace into its page of
// at most limit, as MergeFiltered does in the order of IDs: only the
// workflows up to the least NextCursor of a partition can be on the merged
// page; its next cursor is the last one kept when more than limit remain,
// else that least cursor (empty when no partition has one).
func MergeByID(pages []weir.WorkflowPage, limit int) weir.WorkflowPage {
	bound := ""
	for _, pg := range pages {
		if pg.NextCursor != "" && (bound == "" || pg.NextCursor < bound) {
			bound = pg.NextCursor
		}
	}
	var all []weir.Workflow
	for _, pg := range pages {
		for _, w := range pg.Workflows {
			if bound == "" || w.ID <= bound {
				all = append(all, w)
			}
		}
	}
	slices.SortFunc(all, func(x, y weir.Workflow) int { return strings.Compare(x.ID, y.ID) })
	page := weir.WorkflowPage{Workflows: all, NextCursor: bound}
	if len(all) > limit {
		page.Workflows = all[:limit]
		page.NextCursor = all[limit-1].ID
	}
	return page
}

// MergeFiltered merges the pages of one filtered listing (Filtered) from
// each partition of a namespace into its page of at most limit: a
// partition whose page has a NextCursor examined every workflow down to
// that cursor and no further, so only the workflows at or before the
// newest such cursor can be on the merged page; its next cursor is the
// last one kept when more than limit remain, else that newest cursor
// (empty when no partition has one). Stores and the model merge with it,
// so that they page the same.
func MergeFiltered(pages []weir.WorkflowPage, limit int) weir.WorkflowPage {
	type pos struct {
		created int64
		id      string
	}
	newer := func(x, y pos) int { // -1 when x lists before y
		if x.created != y.created {
			if x.created > y.created {
				return -1
			}
			return 1
		}
		return -strings.Compare(x.id, y.id)
	}
	var bound *pos
	for _, pg := range pages {
		if pg.NextCursor == "" {
			continue
		}
		c, id, _ := strings.Cut(pg.NextCursor, ":")
		created, _ := strconv.ParseInt(c, 10, 64)
		b := pos{created, id}
		if bound == nil || newer(b, *bound) < 0 {
			bound = &b
		}
	}
	var all []weir.Workflow
	for _, pg := range pages {
		for _, w := range pg.Workflows {
			if bound == nil || newer(pos{w.CreatedAt.UnixMilli(), w.ID}, *bound) <= 0 {
				all = append(all, w)
			}
		}
	}
	slices.SortFunc(all, func(x, y weir.Workflow) int {
		return newer(pos{x.CreatedAt.UnixMilli(), x.ID}, pos{y.CreatedAt.UnixMilli(), y.ID})
	})
	page := weir.WorkflowPage{Workflows: all}
	switch {
	case len(all) > limit:
		page.Workflows = all[:limit]
		last := all[limit-1]
		page.NextCursor = strconv.FormatInt(last.CreatedAt.UnixMilli(), 10) + ":" + last.ID
	case bound != nil:
		page.NextCursor = strconv.FormatInt(bound.created, 10) + ":" + bound.id
	}
	return page
}
