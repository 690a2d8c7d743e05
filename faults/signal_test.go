//go:build unix && faults

package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// TestInvariantsSignalTasks: open signal tasks (in a delayed set with a
// timeout, in no set without), one ended by a signal with no attempt, and
// a delayed task raise no alarm; an open task in a ready set is caught.
func TestInvariantsSignalTasks(t *testing.T) {
	proc := StartRedisT(t)
	rdb := newRedisClient(t, proc.Addr())
	const ns = "sig"
	store := newStore(t, rdb, ns)
	ctx := context.Background()
	plan := func(id string) engine.Plan {
		return engine.Plan{ID: id, Tasks: []engine.TaskSpec{
			{Name: "a", Queue: "q", Signal: true, SignalTimeout: time.Hour},
			{Name: "b", Queue: "q", Signal: true},
			{Name: "c", Queue: "q", After: []string{"a"}, Delay: time.Hour},
		}}
	}
	for _, id := range []string{"s1", "s2"} {
		if _, err := store.Submit(ctx, engine.SubmitParams{Plan: plan(id)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Signal(ctx, engine.SignalParams{Workflow: "s1", Task: "a", Kind: engine.OutcomeCompleted}); err != nil {
		t.Fatal(err)
	}
	rep := checkInvariants(t, rdb, ns, "with signal tasks")
	if rep.TaskStates["open"] != 3 || rep.TaskStates["completed"] != 1 || rep.TaskStates["queued"] != 1 {
		t.Fatalf("report %s, want 3 open, 1 completed, 1 queued", rep)
	}
	P := "weir:{" + ns + ":0}:"
	if err := rdb.ZAdd(ctx, P+"q:q:r", redisZ("s2/a")).Err(); err != nil {
		t.Fatal(err)
	}
	r, err := CheckStore(ctx, rdb, ns)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(r.Violations, "\n"), "s2/a open") {
		t.Errorf("an open task in a ready set not caught: %v", r.Violations)
	}
}
