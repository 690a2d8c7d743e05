package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// MergeFiltered keeps only the matches at or before the newest cursor of
// the partitions' pages (past it a partition was not examined), and hands
// that cursor on when the page is not full.
func TestMergeFiltered(t *testing.T) {
	wf := func(ms int64, id string) weir.Workflow { return weir.Workflow{ID: id, CreatedAt: time.UnixMilli(ms)} }
	ids := func(pg weir.WorkflowPage) string {
		var out []string
		for _, w := range pg.Workflows {
			out = append(out, w.ID)
		}
		return strings.Join(out, " ") + " | " + pg.NextCursor
	}
	for _, tc := range []struct {
		pages []weir.WorkflowPage
		limit int
		want  string
	}{
		// partition 0 examined down to 50 and holds more; partition 1 to its end
		{[]weir.WorkflowPage{{Workflows: []weir.Workflow{wf(90, "a")}, NextCursor: "50:x"}, {Workflows: []weir.Workflow{wf(70, "b"), wf(40, "c")}}}, 10, "a b | 50:x"},
		// both partitions stopped: the newer cursor bounds the page
		{[]weir.WorkflowPage{{Workflows: []weir.Workflow{wf(90, "a")}, NextCursor: "50:x"}, {Workflows: []weir.Workflow{wf(80, "b"), wf(60, "c")}, NextCursor: "60:c"}}, 10, "a b c | 60:c"},
		// more matches than a page: the last kept is the cursor
		{[]weir.WorkflowPage{{Workflows: []weir.Workflow{wf(90, "a"), wf(70, "c")}}, {Workflows: []weir.Workflow{wf(80, "b")}}}, 2, "a b | 80:b"},
		// a tie in time: by ID, descending
		{[]weir.WorkflowPage{{Workflows: []weir.Workflow{wf(50, "a")}, NextCursor: "50:a"}, {Workflows: []weir.Workflow{wf(50, "b"), wf(50, "0")}}}, 10, "b a | 50:a"},
		// nothing stopped, nothing more
		{[]weir.WorkflowPage{{}, {Workflows: []weir.Workflow{wf(1, "a")}}}, 10, "a | "},
	} {
		if got := ids(engine.MergeFiltered(tc.pages, tc.limit)); got != tc.want {
			t.Errorf("MergeFiltered(%+v, %d) = %q, want %q", tc.pages, tc.limit, got, tc.want)
		}
	}
}
