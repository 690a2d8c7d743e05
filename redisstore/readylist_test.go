package redisstore

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// The ready list of the default priority (spec/keys.md, q:<queue>:l): a
// cancelled, purged or otherwise removed ready job leaves a stale element
// that the claim drops; these tests hold the cases where a stale element
// could be claimed (twice, or at the wrong place) or counted.

// readyEnv returns a store with its fast paths on or off and jobs ids
// enqueued ready in queue "q", in order, with the default priority.
func readyEnv(t *testing.T, fast bool, cfg engine.Config, ids ...string) *testEnv {
	t.Helper()
	e := newEnv(t, cfg)
	if err := e.store.SetFastPaths(bg, fast); err != nil {
		t.Fatal(err)
	}
	enqueueReady(t, e, ids...)
	return e
}

// TestReadyList runs the cases below with the fast paths on and off.
func TestReadyList(t *testing.T) {
	cases := []struct {
		name string
		f    func(*testing.T, bool)
	}{
		{"CancelThenRetry", readyListCancelThenRetry},
		{"CancelThenRetryDelayed", readyListCancelThenRetryDelayed},
		{"CancelTwiceThenRetry", readyListCancelTwiceThenRetry},
		{"CancelThenPurge", readyListCancelThenPurge},
		{"RecordRecreated", readyListRecordRecreated},
		{"Priorities", readyListPriorities},
		{"WorkflowCancelThenRerun", readyListWorkflowCancelThenRerun},
	}
	for _, fast := range []bool{true, false} {
		for _, c := range cases {
			name := c.name + "/general"
			if fast {
				name = c.name + "/fast"
			}
			t.Run(name, func(t *testing.T) { c.f(t, fast) })
		}
	}
}

func enqueueReady(t *testing.T, e *testEnv, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := e.store.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
}

// claimIDs claims up to max jobs of queue "q", one call, and returns their
// IDs in claim order.
func claimIDs(t *testing.T, e *testEnv, max int) []string {
	t.Helper()
	c, err := e.store.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: max, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, x := range c {
		ids = append(ids, x.Job.ID)
	}
	return ids
}

// readyCount returns Queues' ready count of queue "q".
func readyCount(t *testing.T, e *testEnv) int {
	t.Helper()
	qs, err := e.store.Queues(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Name == "q" {
			return q.Ready
		}
	}
	return 0
}

// listReady pages through the ready list of queue "q", page size 1, and
// returns the IDs.
func listReady(t *testing.T, e *testEnv) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for range 100 {
		p, err := e.store.ListJobs(bg, weir.ListJobsParams{Queue: "q", State: weir.ListReady, Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range p.Jobs {
			ids = append(ids, j.ID)
		}
		if p.NextCursor == "" {
			return ids
		}
		cursor = p.NextCursor
	}
	t.Fatal("the listing did not end")
	return nil
}

func cancelJob(t *testing.T, e *testEnv, id string) {
	t.Helper()
	if _, err := e.store.CancelJob(bg, engine.CancelJobParams{ID: id}); err != nil {
		t.Fatal(err)
	}
}

func retryJob(t *testing.T, e *testEnv, id string, at time.Time) {
	t.Helper()
	if _, err := e.store.RetryJob(bg, engine.RetryJobParams{ID: id, RunAt: at}); err != nil {
		t.Fatal(err)
	}
}

func wantIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

// readyListCancelThenRetry: a ready job cancelled and retried while its
// first element is still in the list is ready once, at its new place: the
// counts, the listing and the claims see it once, after the jobs pushed
// before the retry.
func readyListCancelThenRetry(t *testing.T, fast bool) {
	e := readyEnv(t, fast, engine.DefaultConfig(), "a", "b", "c")
	cancelJob(t, e, "b")
	if n := readyCount(t, e); n != 2 {
		t.Fatalf("ready %d after a cancel, want 2", n)
	}
	wantIDs(t, "listed after the cancel", listReady(t, e), "a", "c")
	retryJob(t, e, "b", time.Time{})
	enqueueReady(t, e, "d")
	if n := readyCount(t, e); n != 4 {
		t.Fatalf("ready %d after the retry, want 4", n)
	}
	wantIDs(t, "listed after the retry", listReady(t, e), "a", "c", "b", "d")
	wantIDs(t, "claimed", claimIDs(t, e, 2), "a", "c")
	wantIDs(t, "claimed next", claimIDs(t, e, 10), "b", "d")
	wantIDs(t, "claimed at the end", claimIDs(t, e, 10))
	if n := readyCount(t, e); n != 0 {
		t.Fatalf("ready %d when every job runs, want 0", n)
	}
}

// readyListCancelThenRetryDelayed: a cancelled ready job retried with
// a delay is queued but not ready: its stale element is not claimed, and
// it is claimed once, when due.
func readyListCancelThenRetryDelayed(t *testing.T, fast bool) {
	e := readyEnv(t, fast, engine.DefaultConfig(), "a", "b")
	cancelJob(t, e, "a")
	retryJob(t, e, "a", e.clock().Add(30*time.Second))
	if n := readyCount(t, e); n != 1 {
		t.Fatalf("ready %d, want 1 (a is delayed)", n)
	}
	wantIDs(t, "listed", listReady(t, e), "b")
	wantIDs(t, "claimed", claimIDs(t, e, 10), "b")
	e.advance(30 * time.Second)
	wantIDs(t, "claimed when due", claimIDs(t, e, 10), "a")
	wantIDs(t, "claimed at the end", claimIDs(t, e, 10))
}

// readyListCancelTwiceThenRetry: two stale elements of one job before
// its live one, popped in one claim.
func readyListCancelTwiceThenRetry(t *testing.T, fast bool) {
	e := readyEnv(t, fast, engine.DefaultConfig(), "a", "x")
	for range 2 {
		cancelJob(t, e, "a")
		retryJob(t, e, "a", time.Time{})
	}
	enqueueReady(t, e, "y")
	if n := readyCount(t, e); n != 3 {
		t.Fatalf("ready %d, want 3", n)
	}
	wantIDs(t, "listed", listReady(t, e), "x", "a", "y")
	wantIDs(t, "claimed", claimIDs(t, e, 10), "x", "a", "y")
	if n := readyCount(t, e); n != 0 {
		t.Fatalf("ready %d, want 0", n)
	}
}

// readyListCancelThenPurge: a purge after a cancel purges the ready
// jobs once, leaves nothing counted, and the queue works on after it.
func readyListCancelThenPurge(t *testing.T, fast bool) {
	e := readyEnv(t, fast, engine.DefaultConfig(), "a", "b", "c")
	cancelJob(t, e, "a")
	r, err := e.store.PurgeQueue(bg, "q")
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "purged", r.Purged, "b", "c")
	if n := readyCount(t, e); n != 0 {
		t.Fatalf("ready %d after the purge, want 0", n)
	}
	if n, err := e.rdb.Exists(bg, e.store.keys.queue("q", "l"), e.store.keys.queue("q", "lx")).Result(); err != nil || n != 0 {
		t.Fatalf("%d of the list and its stale counts left after the purge (%v), want none", n, err)
	}
	retryJob(t, e, "a", time.Time{})
	enqueueReady(t, e, "d")
	wantIDs(t, "listed", listReady(t, e), "a", "d")
	wantIDs(t, "claimed", claimIDs(t, e, 10), "a", "d")
}

// readyListRecordRecreated: a cancelled job whose record is gone
// (retention passed) and which is enqueued again under its ID is claimed
// at its new place, not at its old element's.
func readyListRecordRecreated(t *testing.T, fast bool) {
	cfg := engine.DefaultConfig()
	cfg.Retention = time.Minute
	e := readyEnv(t, fast, cfg, "a", "b")
	cancelJob(t, e, "a")
	e.advance(2 * time.Minute)
	enqueueReady(t, e, "a")
	if n := readyCount(t, e); n != 2 {
		t.Fatalf("ready %d, want 2", n)
	}
	wantIDs(t, "listed", listReady(t, e), "b", "a")
	wantIDs(t, "claimed", claimIDs(t, e, 1), "b")
	wantIDs(t, "claimed next", claimIDs(t, e, 10), "a")
}

// readyListPriorities: the list's jobs (priority 0) come after the
// ready jobs of a lower priority number and before those of a higher one,
// in the claim, the listing and its cursors.
func readyListPriorities(t *testing.T, fast bool) {
	e := readyEnv(t, fast, engine.DefaultConfig())
	for _, j := range []struct {
		id   string
		prio int
	}{{"p1", 1}, {"z1", 0}, {"m1", -1}, {"z2", 0}, {"p2", 1}, {"m2", -1}} {
		if _, err := e.store.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: j.id, Queue: "q", Priority: j.prio}}); err != nil {
			t.Fatal(err)
		}
	}
	cancelJob(t, e, "z1")
	wantIDs(t, "listed", listReady(t, e), "m1", "m2", "z2", "p1", "p2")
	if n := readyCount(t, e); n != 5 {
		t.Fatalf("ready %d, want 5", n)
	}
	wantIDs(t, "claimed", claimIDs(t, e, 3), "m1", "m2", "z2")
	wantIDs(t, "claimed next", claimIDs(t, e, 10), "p1", "p2")
}

// readyListWorkflowCancelThenRerun: the ready tasks of a cancelled
// workflow leave the counts at once; rerun, they are ready once, after
// the job pushed before the rerun.
func readyListWorkflowCancelThenRerun(t *testing.T, fast bool) {
	e := readyEnv(t, fast, engine.DefaultConfig())
	if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "q"}, {Name: "b", Queue: "q"},
	}}}); err != nil {
		t.Fatal(err)
	}
	enqueueReady(t, e, "x")
	if _, err := e.store.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "w"}); err != nil {
		t.Fatal(err)
	}
	if n := readyCount(t, e); n != 1 {
		t.Fatalf("ready %d after the cancel, want 1", n)
	}
	if _, err := e.store.RerunWorkflow(bg, engine.RerunWorkflowParams{ID: "w"}); err != nil {
		t.Fatal(err)
	}
	if n := readyCount(t, e); n != 3 {
		t.Fatalf("ready %d after the rerun, want 3", n)
	}
	wantIDs(t, "listed", listReady(t, e), "x", "w/a", "w/b")
	wantIDs(t, "claimed", claimIDs(t, e, 10), "x", "w/a", "w/b")
}

// TestReadyListBadCursor: a ready listing's cursor in the list names a
// whole position; anything else is refused as invalid.
func TestReadyListBadCursor(t *testing.T) {
	e := readyEnv(t, true, engine.DefaultConfig(), "a", "b")
	p, err := e.store.ListJobs(bg, weir.ListJobsParams{Queue: "q", State: weir.ListReady, Limit: 1})
	if err != nil || p.NextCursor == "" || p.NextCursor[0] != 'l' {
		t.Fatalf("first page: cursor %q, %v; want a list position", p.NextCursor, err)
	}
	for _, c := range []string{"l1.5:a", "l:a", "lx:a", "l1"} {
		if _, err := e.store.ListJobs(bg, weir.ListJobsParams{Queue: "q", State: weir.ListReady, Limit: 1, Cursor: c}); !errors.Is(err, weir.ErrInvalid) {
			t.Errorf("cursor %q: %v, want ErrInvalid", c, err)
		}
	}
}
