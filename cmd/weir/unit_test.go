package main

import (
	"bytes"
	weirpkg "github.com/weirflow/weir"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The live view rewrites its block in place.
func TestLiveProgress(t *testing.T) {
	var buf bytes.Buffer
	show := newLiveProgress(&buf, nil)
	w := weirpkg.Workflow{ID: "x", State: weirpkg.WorkflowRunning, Tasks: []weirpkg.Task{
		{Name: "a", State: weirpkg.Running, Attempt: 1},
		{Name: "bb", State: weirpkg.Waiting},
	}}
	show(w)
	first := buf.String()
	if regexp.MustCompile(`\x1b\[\d+A`).MatchString(first) {
		t.Errorf("first render moves the cursor up: %q", first)
	}
	if strings.Count(first, "\n") != 3 || !strings.Contains(first, "a     running   (attempt 1)") || !strings.Contains(first, "workflow running  0/2 completed") {
		t.Errorf("first render %q", first)
	}
	buf.Reset()
	w.Tasks[0].State, w.Tasks[1].State, w.State = weirpkg.Completed, weirpkg.Failed, weirpkg.WorkflowFailed
	w.Tasks[1].Attempt, w.Tasks[1].Error = 1, "exit status 1: x\nlast line"
	show(w)
	second := buf.String()
	if !strings.HasPrefix(second, "\x1b[3A") || strings.Count(second, "\n") != 3 ||
		!strings.Contains(second, "bb    failed    (attempt 1): exit status 1: …last line") || !strings.Contains(second, "workflow failed  1/2 completed") {
		t.Errorf("second render %q", second)
	}
}

// status shows a running task's last progress report in its DETAIL column.
func TestSummaryShowsProgress(t *testing.T) {
	var buf bytes.Buffer
	printSummary(&buf, weirpkg.Workflow{ID: "x", State: weirpkg.WorkflowRunning, Tasks: []weirpkg.Task{
		{Name: "a", State: weirpkg.Running, Attempt: 2, Progress: &weirpkg.Progress{Percent: 37.5, Message: "chunk 3 of 8"}},
		{Name: "b", State: weirpkg.Completed, Attempt: 1, Progress: &weirpkg.Progress{Percent: 100, Message: "done"}},
	}})
	out := buf.String()
	if !regexp.MustCompile(`(?m)^  a +running +2 +- +37\.5% chunk 3 of 8$`).MatchString(out) {
		t.Errorf("running task's progress not shown:\n%s", out)
	}
	if strings.Contains(out, "100%") {
		t.Errorf("an ended task's progress is shown:\n%s", out)
	}
}

// status shows a workflow's deadline, and whether it cancelled the
// workflow; nothing for a workflow without one.
func TestSummaryShowsDeadline(t *testing.T) {
	at := time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		w    weirpkg.Workflow
		want string
	}{
		{weirpkg.Workflow{ID: "x", State: weirpkg.WorkflowRunning, Deadline: at}, "  deadline 2026-12-24T18:00:00Z\n"},
		{weirpkg.Workflow{ID: "x", State: weirpkg.WorkflowCancelled, Deadline: at, DeadlineHit: true}, "  deadline 2026-12-24T18:00:00Z passed: cancelled by it\n"},
		{weirpkg.Workflow{ID: "x", State: weirpkg.WorkflowRunning}, ""},
	} {
		var buf bytes.Buffer
		printSummary(&buf, c.w)
		got := buf.String()
		if c.want == "" && strings.Contains(got, "deadline") || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%+v:\n%s\nwant %q", c.w, got, c.want)
		}
	}
}

// weir jobs shows a job's progress in one cell, "-" for none.
func TestProgressCell(t *testing.T) {
	if got := progressCell(nil); got != "-" {
		t.Errorf("no progress: %q", got)
	}
	if got := progressCell(&weirpkg.Progress{Percent: 12.5, Message: "rows  1 to 40"}); got != "12.5% rows 1 to 40" {
		t.Errorf("progress cell %q", got)
	}
}
