package workflowfile_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/weirflow/weir/workflowfile"
)

// A file's name: and labels: reach File, in YAML and JSON alike.
func TestNameAndLabels(t *testing.T) {
	for _, doc := range []string{
		"name: nightly report\nlabels: {team: data, year: 2026}\ntasks: [{name: a, run: 'true'}]\n",
		`{"name": "nightly report", "labels": {"team": "data", "year": "2026"}, "tasks": [{"name": "a", "run": "true"}]}`,
	} {
		f, err := workflowfile.Parse("w", []byte(doc), workflowfile.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if f.WorkflowName != "nightly report" || !maps.Equal(f.Labels, map[string]string{"team": "data", "year": "2026"}) {
			t.Errorf("%s: name %q labels %v", doc, f.WorkflowName, f.Labels)
		}
	}
}

// A bad name or labels is a *workflowfile.Error naming the field.
func TestNameAndLabelsRefused(t *testing.T) {
	many := "labels: {" + ""
	for i := range 17 {
		many += "k" + string(rune('a'+i)) + ": v, "
	}
	many += "}\n"
	for _, tc := range []struct{ doc, says string }{
		{"name: " + strings.Repeat("n", 129) + "\n", "name: workflow name of 129 bytes is longer than 128"},
		{"labels: {'bad key': v}\n", `labels: label key "bad key" must match ^[A-Za-z0-9_.-]{1,64}$`},
		{"labels: {k: " + strings.Repeat("v", 129) + "}\n", "labels[k]: label value of 129 bytes is longer than 128"},
		{many, "labels: 17 labels; a workflow carries at most 16"},
		{"labels: [a]\n", "field labels: line 1: a list is not labels (a mapping of keys to strings)"},
		{"name: [a]\n", "name:"},
	} {
		_, err := workflowfile.Parse("w.yaml", []byte(tc.doc+"tasks: [{name: a, run: 'true'}]\n"), workflowfile.Options{})
		var fe *workflowfile.Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%.60q: %v, want an *Error saying %q", tc.doc, err, tc.says)
		}
	}
}
