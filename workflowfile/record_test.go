package workflowfile

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/weirflow/weir"
)

// The record table of spec/workflow-file.md (The workflow record) names
// every field Record marshals: a row per top-level field and per task
// field (tasks[].<name>), the fields of the webhook, an undo and a
// progress in their row; and the state rows list every state the record
// can show.
func TestRecordTableListsEveryField(t *testing.T) {
	b, err := os.ReadFile("../spec/workflow-file.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## The workflow record")
	if start < 0 {
		t.Fatal("spec/workflow-file.md has no section The workflow record")
	}
	section := doc[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	rows := map[string]string{} // field name → its row's text
	code := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			rows[m[1]] = strings.Join(cells[2:], "|")
		}
	}
	tags := func(v any) []string {
		var out []string
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
			out = append(out, name)
		}
		return out
	}
	need := func(row, word string) {
		t.Helper()
		text, ok := rows[row]
		if !ok {
			t.Errorf("the record table has no row for %s", row)
			return
		}
		if word != "" && !strings.Contains(text, "`"+word+"`") {
			t.Errorf("the record table's row %s does not name `%s`", row, word)
		}
	}
	for _, f := range tags(Record{}) {
		need(f, "")
	}
	for _, f := range tags(TaskRecord{}) {
		need("tasks[]."+f, "")
	}
	for _, f := range tags(WebhookRecord{}) {
		need("webhook", f)
	}
	for _, f := range tags(UndoRecord{}) {
		need("tasks[].undo", f)
	}
	for _, f := range tags(ProgressRecord{}) {
		need("tasks[].progress", f)
	}
	for _, s := range []weir.State{weir.Waiting, weir.Queued, weir.Open, weir.Running, weir.Completed, weir.Failed, weir.Cancelled} {
		need("tasks[].state", string(s))
	}
	for _, s := range []weir.State{weir.Pending, weir.Queued, weir.Running, weir.Completed, weir.Failed, weir.Cancelled} {
		need("tasks[].undo", string(s))
	}
	for _, s := range []weir.WorkflowState{weir.WorkflowRunning, weir.WorkflowCompleted, weir.WorkflowFailed, weir.WorkflowCancelled,
		weir.WorkflowCompensating, weir.WorkflowCompensated, weir.WorkflowCompensationFailed} {
		need("state", string(s))
	}
}
