package client

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// WorkflowName gives the workflow a name to find it by (weir.ListParams
// Name, `weir ls --name`): at most 128 bytes of printable UTF-8
// (engine.ValidateNameLabels, checked by the store at Submit). It is not
// part of the plan: a repeated submit with another name changes nothing.
func WorkflowName(name string) WorkflowOption {
	return WorkflowOption{fmt.Sprintf("WorkflowName(%q)", name), func(w *Workflow) { w.name = name }}
}

// WorkflowLabels gives the workflow labels to find it by (weir.ListParams
// Labels, `weir ls --label k=v`), added to those of an earlier
// WorkflowLabels: at most 16, keys matching ^[A-Za-z0-9_.-]{1,64}$, values
// at most 128 bytes of printable UTF-8 (engine.ValidateNameLabels, checked
// by the store at Submit). Like the name, they are not part of the plan.
func WorkflowLabels(labels map[string]string) WorkflowOption {
	keys := slices.Sorted(maps.Keys(labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q: %q", k, labels[k])
	}
	labels = maps.Clone(labels)
	return WorkflowOption{"WorkflowLabels({" + strings.Join(parts, ", ") + "})", func(w *Workflow) {
		if w.labels == nil {
			w.labels = map[string]string{}
		}
		maps.Copy(w.labels, labels)
	}}
}
