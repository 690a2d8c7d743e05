//go:build unix && faults

package faults

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// TestInvariantsDeadline: a running workflow's deadline marker, and none
// for one that ended or was cancelled, raise no alarm; a marker left behind
// by an ended workflow and one missing for a running workflow are caught.
func TestInvariantsDeadline(t *testing.T) {
	proc := StartRedisT(t)
	rdb := newRedisClient(t, proc.Addr())
	const ns = "dl"
	store := newStore(t, rdb, ns)
	ctx := context.Background()
	for _, id := range []string{"d1", "d2", "d3"} {
		p := engine.Plan{ID: id, DeadlineIn: time.Hour, Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}
		if _, err := store.Submit(ctx, engine.SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: "d2"}); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, rdb, ns, "with deadlines")
	P := "weir:{" + ns + ":0}:"
	if err := rdb.ZAdd(ctx, P+"q:q:d", redisZ(engine.DeadlineMarker("d2"))).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZRem(ctx, P+"q:q:d", engine.DeadlineMarker("d3")).Err(); err != nil {
		t.Fatal(err)
	}
	r, err := CheckStore(ctx, rdb, ns)
	if err != nil {
		t.Fatal(err)
	}
	v := strings.Join(r.Violations, "\n")
	if !strings.Contains(v, "workflow d2 (cancelled") || !strings.Contains(v, "workflow d3 (running") {
		t.Errorf("a stale and a missing marker not caught: %v", r.Violations)
	}
}
