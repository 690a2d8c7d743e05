//go:build unix && faults

package faults

import (
	"context"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// clusterPartitions is the partition count of the Cluster fault tests: 4
// partitions on each of 3 masters (spec/partitions.md, Slots).
const clusterPartitions = 12

// newClusterClient returns a ClusterClient of c with short timeouts, so
// that a dead master surfaces as an error quickly; the test's end closes
// it.
func newClusterClient(t testing.TB, c *Cluster) *redis.ClusterClient {
	t.Helper()
	// go-redis logs every failed dial of the dead master's pool
	redis.SetLogger(quietLog{})
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:        c.Addrs(),
		DialTimeout:  time.Second,
		ReadTimeout:  3 * time.Second,
		WriteTimeout: 3 * time.Second,
		MaxRetries:   1,
		PoolSize:     64,
	})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// quietLog drops go-redis's log lines.
type quietLog struct{}

func (quietLog) Printf(context.Context, string, ...any) {}

// partitionMasters returns, for each partition of namespace ns, the index
// of the master serving its slot.
func partitionMasters(t testing.TB, c *Cluster, rdb *redis.ClusterClient, ns string, n int) []int {
	t.Helper()
	ctx := context.Background()
	out := make([]int, n)
	for p := range n {
		slot, err := rdb.ClusterKeySlot(ctx, redisstore.PartitionPrefix(ns, p, n)+"seq").Result()
		if err != nil {
			t.Fatal(err)
		}
		if out[p], err = c.MasterOfSlot(ctx, int(slot)); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// idsByPartition returns k workflow IDs "<prefix>-<i>" for each of the n
// partitions, by partition.
func idsByPartition(prefix string, n, k int) [][]string {
	out := make([][]string, n)
	left := n * k
	for i := 0; left > 0; i++ {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if p := engine.Partition(id, n); len(out[p]) < k {
			out[p] = append(out[p], id)
			left--
		}
	}
	return out
}

// chainPlan is a workflow of three tasks in a chain on the Work queue.
func chainPlan(t testing.TB, id string) engine.Plan {
	t.Helper()
	p := engine.Plan{ID: id}
	for i := range 3 {
		payload, err := Work.EncodePayload(i)
		if err != nil {
			t.Fatal(err)
		}
		ts := engine.TaskSpec{Name: taskName(i), Queue: Work.Name(), Payload: payload, MaxAttempts: 5, Backoff: 10 * time.Millisecond}
		if i > 0 {
			ts.After = []string{taskName(i - 1)}
		}
		p.Tasks = append(p.Tasks, ts)
	}
	return p
}

// waitCompleted waits, reading each workflow by its ID (a listing would
// need every partition), until every workflow of ids has completed, and
// fails the test after limit or when one ended otherwise.
func waitCompleted(t testing.TB, store engine.Store, ids []string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for _, id := range ids {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			w, err := store.GetWorkflow(ctx, id)
			cancel()
			if err == nil && w.State.Ended() {
				if w.State != weir.WorkflowCompleted {
					t.Fatalf("workflow %s ended %s", id, w.State)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("workflow %s has not completed after %v (last read: %v, %v)", id, limit, w.State, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestClusterMasterDown: a namespace of 12 partitions on a 3-master
// Cluster. With one master killed (no replica; the others flag it failed
// and keep serving their slots), the partitions on it stop: a submit of a
// workflow placed there is refused with an error, never acknowledged and
// lost; the workflows of the other 8 partitions are accepted and complete,
// the same workers claiming around the dead partitions. Restarted from its
// AOF, the master's partitions take work again, and every workflow
// completes with the store's invariants intact in every partition.
func TestClusterMasterDown(t *testing.T) {
	ctx := context.Background()
	c := StartClusterT(t, 3, "--appendonly", "yes", "--appendfsync", "always")
	rdb := newClusterClient(t, c)
	const ns, n = "cmd", clusterPartitions
	store := newStore(t, rdb, ns, engine.Config{Partitions: n})
	masters := partitionMasters(t, c, rdb, ns, n)
	per := make([]int, len(c.Masters))
	for _, m := range masters {
		per[m]++
	}
	for m, k := range per {
		if k != n/len(c.Masters) {
			t.Fatalf("master %d serves %d of %d partitions (%v), want %d each", m, k, n, masters, n/len(c.Masters))
		}
	}

	obs := NewObservations()
	startWorkers(t, store, 2, worker.Config{
		Concurrency: 8, Lease: 3 * time.Second, SweepInterval: 250 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, obs, nil, nil)

	deps := map[string][]string{}
	submit := func(id string) error {
		p := chainPlan(t, id)
		for i := 1; i < len(p.Tasks); i++ {
			deps[weir.TaskJobID(id, p.Tasks[i].Name)] = []string{weir.TaskJobID(id, p.Tasks[i-1].Name)}
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := store.Submit(sctx, engine.SubmitParams{Plan: p})
		return err
	}

	// All up: every partition takes and runs work.
	var before []string
	for _, ids := range idsByPartition("up", n, 2) {
		for _, id := range ids {
			if err := submit(id); err != nil {
				t.Fatalf("submit %s with every master up: %v", id, err)
			}
			before = append(before, id)
		}
	}
	waitCompleted(t, store, before, time.Minute)

	// One master down.
	const down = 2
	if err := c.Masters[down].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitFailed(ctx, down, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	var live, refused []string
	for p, ids := range idsByPartition("down", n, 3) {
		for _, id := range ids {
			err := submit(id)
			switch {
			case masters[p] == down && err == nil:
				t.Fatalf("submit %s (partition %d, on the dead master) acknowledged", id, p)
			case masters[p] == down:
				refused = append(refused, id)
			case err != nil:
				t.Fatalf("submit %s (partition %d, master %d up): %v", id, p, masters[p], err)
			default:
				live = append(live, id)
			}
		}
	}
	waitCompleted(t, store, live, time.Minute)
	t.Logf("master %d down: %d workflows of %d live partitions completed, %d submits to its %d partitions refused",
		down, len(live), n-per[down], len(refused), per[down])

	// Back from its AOF: its partitions take work again.
	if err := c.Masters[down].Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitOK(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, id := range refused {
		var err error
		for try := 0; try < 50; try++ { // the client learns the node is back
			if err = submit(id); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("submit %s after the restart: %v", id, err)
		}
	}
	all := append(append(before, live...), refused...)
	waitCompleted(t, store, all, time.Minute)
	checkInvariants(t, rdb, ns, "after the master came back")
	checkObserved(t, obs, deps)
}

// TestClusterReshard: moving a partition's slot to another master while
// the namespace is idle loses nothing: workflows left half done before the
// move (their first task completed, the rest queued) complete after it,
// with the store's invariants intact.
func TestClusterReshard(t *testing.T) {
	ctx := context.Background()
	c := StartClusterT(t, 3)
	rdb := newClusterClient(t, c)
	const ns, n = "crs", clusterPartitions
	store := newStore(t, rdb, ns, engine.Config{Partitions: n})
	masters := partitionMasters(t, c, rdb, ns, n)

	// Half-run workflows in every partition, no worker running: claim and
	// finish each workflow's first task by hand.
	ids := idsByPartition("rs", n, 3)
	var all []string
	for _, part := range ids {
		for _, id := range part {
			if _, err := store.Submit(ctx, engine.SubmitParams{Plan: chainPlan(t, id)}); err != nil {
				t.Fatal(err)
			}
			all = append(all, id)
		}
	}
	for range len(all) {
		got, err := store.Claim(ctx, engine.ClaimParams{Queues: []string{Work.Name()}, Max: 1, Lease: time.Minute})
		if err != nil || len(got) != 1 {
			t.Fatalf("claim: %v, %d jobs", err, len(got))
		}
		res, _ := Work.EncodePayload(0)
		if _, err := store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: got[0].Job.ID, Token: got[0].Lease.Token, Kind: engine.OutcomeCompleted, Result: res}}}); err != nil {
			t.Fatal(err)
		}
	}

	// Move partition 0's slot to the next master.
	slot, err := rdb.ClusterKeySlot(ctx, redisstore.PartitionPrefix(ns, 0, n)+"seq").Result()
	if err != nil {
		t.Fatal(err)
	}
	from := masters[0]
	to := (from + 1) % len(c.Masters)
	moved, err := c.MoveSlot(ctx, int(slot), from, to)
	if err != nil {
		t.Fatal(err)
	}
	if moved == 0 {
		t.Fatalf("partition 0's slot %d held no key to move", slot)
	}
	if m, err := c.MasterOfSlot(ctx, int(slot)); err != nil || m != to {
		t.Fatalf("slot %d on master %d after the move (%v), want %d", slot, m, err, to)
	}
	t.Logf("moved slot %d (partition 0, %d keys) from master %d to %d", slot, moved, from, to)

	startWorkers(t, store, 2, worker.Config{
		Concurrency: 8, Lease: 3 * time.Second, SweepInterval: 250 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, NewObservations(), nil, nil)
	waitCompleted(t, store, all, time.Minute)
	rep := checkInvariants(t, rdb, ns, "after the move")
	if rep.Workflows != len(all) {
		t.Fatalf("invariants saw %d workflows, want %d", rep.Workflows, len(all))
	}
}
