package redisstore

import (
	"maps"
	"slices"
	"strings"
)

// The workflow hash fields of a workflow's name and labels (spec/keys.md,
// Workflow hash), written with its fields by submit and never changed.
const (
	nameField   = "nm"
	labelsField = "lb"
)

// appendNameLabels appends the workflow fields of a submit's name and
// labels to its workflow fields, when it has them.
func appendNameLabels(fields []any, name string, labels map[string]string) []any {
	if name != "" {
		fields = append(fields, nameField, name)
	}
	if len(labels) > 0 {
		fields = append(fields, labelsField, encodeLabels(labels))
	}
	return fields
}

// encodeLabels is the lb field of labels: "<key>=<value>" by key, joined
// by "\n". A key holds no '=' and a value no control character
// (engine.ValidateNameLabels), so list.lua finds a pair by a plain search
// of "\n<key>=<value>\n" in "\n<lb>\n".
func encodeLabels(labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
	}
	return b.String()
}

// decodeLabels reads an lb field; nil for "".
func decodeLabels(s string) map[string]string {
	if s == "" {
		return nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, "\n") {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}
