//go:build unix

package redisstore_test

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/faults"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
)

// migrateServer is a server the migration tests run on: each of
// redistest.Servers, and the Redis Cluster of WEIR_REDIS_CLUSTER.
type migrateServer struct {
	name string
	rdb  redis.UniversalClient
	// args are weir's flags that reach it
	args []string
}

// migrateServers returns the servers of the migration tests.
func migrateServers(t *testing.T) []migrateServer {
	var out []migrateServer
	for _, srv := range redistest.Servers(t) {
		out = append(out, migrateServer{srv.Name, redistest.Client(t, srv.Options), []string{"--redis", srv.URL}})
	}
	if addrs := clusterAddrs(); addrs != "" {
		out = append(out, migrateServer{"cluster", redistest.Cluster(t), []string{"--cluster", addrs}})
	}
	return out
}

// p2Clock is the test clock of the stores on a namespace of the protocol
// 2 fixture: it starts after the fixture's (its leases held, its delayed
// jobs not due) and moves when the test says.
type p2Clock struct {
	mu  sync.Mutex
	now time.Time
}

func newP2Clock() *p2Clock { return &p2Clock{now: redisstore.P2T0.Add(10 * time.Second)} }

func (c *p2Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *p2Clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// store opens a store on namespace ns on the clock.
func (c *p2Clock) store(t testing.TB, rdb redis.UniversalClient, ns string) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkInvariants fails t when faults.CheckStore finds a violated
// invariant in namespace ns (on the test clock), and returns its report.
func checkInvariants(t testing.TB, rdb redis.UniversalClient, ns string, c *p2Clock, when string) *faults.InvariantReport {
	t.Helper()
	rep, err := faults.CheckStoreWith(context.Background(), rdb, ns, faults.CheckOptions{Now: c.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("%s: %s\n%s", when, rep, strings.Join(rep.Violations, "\n"))
	}
	return rep
}

// TestMigratedNamespaceRuns: a namespace that protocol 2 wrote (the
// fixture: jobs and workflows in every state; one and four partitions),
// once weir migrate converted it, holds every store invariant
// (faults.CheckStore), and then runs to its end: the running jobs and
// tasks finished with the tokens protocol 2 gave out, or their leases
// expired; every ready, delayed and retrying job claimed and finished, the
// paused queue resumed, the running workflows' tasks promoted and run; and
// the invariants hold again at the end, every job and workflow ended.
func TestMigratedNamespaceRuns(t *testing.T) {
	for _, srv := range migrateServers(t) {
		t.Run(srv.name, func(t *testing.T) {
			for _, x := range redisstore.P2Namespaces() {
				t.Run(x.NS, func(t *testing.T) {
					recs := redisstore.LoadP2(t, srv.rdb, x.NS, 0)
					c := newP2Clock()
					s := c.store(t, srv.rdb, x.NS)
					r, err := s.Migrate(context.Background(), redisstore.MigrateParams{Step: 2})
					if err != nil || !r.Done || r.From != 2 {
						t.Fatalf("migrate: %+v, %v", r, err)
					}
					if d := redisstore.DiffMigratedP2(t, srv.rdb, x.NS, 0); d != "" {
						t.Fatalf("the migrated namespace differs from protocol 3's layout:\n%s", d)
					}
					runMigrated(t, srv.rdb, x.NS, c, recs)
				})
			}
		})
	}
}

// runMigrated checks the invariants of the migrated namespace ns, runs it
// to its end and checks them again (TestMigratedNamespaceRuns).
func runMigrated(t *testing.T, rdb redis.UniversalClient, ns string, c *p2Clock, recs redisstore.P2Records) {
	t.Helper()
	ctx := context.Background()
	rep := checkInvariants(t, rdb, ns, c, "after the migration")
	if rep.Workflows != len(recs.Workflows) || rep.PlainJobs != len(recs.Jobs) || rep.Running != len(recs.Tokens) {
		t.Fatalf("after the migration: %s; want %d workflows, %d plain jobs, %d running", rep, len(recs.Workflows), len(recs.Jobs), len(recs.Tokens))
	}
	s := c.store(t, rdb, ns)

	// the running jobs and tasks: each finished with its token, but one
	// whose lease expires
	expiring := ""
	var outs []engine.Outcome
	for _, id := range slices.Sorted(maps.Keys(recs.Tokens)) {
		if expiring == "" && !strings.Contains(id, "/") {
			expiring = id
			continue
		}
		outs = append(outs, engine.Outcome{JobID: id, Token: recs.Tokens[id], Kind: engine.OutcomeCompleted, Result: []byte("p3")})
	}
	if expiring == "" || len(outs) == 0 {
		t.Fatalf("the fixture's running jobs: %v; want a plain job and more", recs.Tokens)
	}
	fr, err := s.Finish(ctx, engine.FinishParams{Outcomes: outs})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range fr.Settled {
		if st.Err != nil {
			t.Fatalf("finish of %s with protocol 2's token: %v", st.JobID, st.Err)
		}
	}
	if err := s.ResumeQueue(ctx, "paused"); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, rdb, ns, c, "after the finishes")

	// past every lease and run-at: the sweeps end the expired lease and
	// push the delayed jobs; then every ready job is claimed and finished,
	// the workflows' next tasks with them
	c.advance(2 * time.Hour)
	if _, err := s.ExpireLeases(ctx, engine.ExpireParams{}); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		got, err := s.Claim(ctx, engine.ClaimParams{Queues: recs.Queues, Max: 10, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		outs = outs[:0]
		for _, cl := range got {
			outs = append(outs, engine.Outcome{JobID: cl.Job.ID, Token: cl.Lease.Token, Kind: engine.OutcomeCompleted})
		}
		if _, err := s.Finish(ctx, engine.FinishParams{Outcomes: outs}); err != nil {
			t.Fatal(err)
		}
		c.advance(time.Second)
	}
	qs, err := s.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Ready+q.Delayed+q.Running > 0 {
			t.Fatalf("nothing to claim, but queue %s holds jobs: %+v", q.Name, q)
		}
	}

	rep = checkInvariants(t, rdb, ns, c, "at the end")
	if rep.Running != 0 || rep.Ended != rep.Workflows {
		t.Fatalf("at the end: %s; want every workflow ended, nothing running", rep)
	}
	for id, was := range recs.Workflows {
		w, err := s.GetWorkflow(ctx, id)
		if err != nil {
			t.Fatalf("workflow %s: %v", id, err)
		}
		if want := weir.WorkflowState(was); want == weir.WorkflowRunning && w.State != weir.WorkflowCompleted || want != weir.WorkflowRunning && w.State != want {
			t.Errorf("workflow %s (%s under protocol 2): %s, want it completed or as it was", id, was, w.State)
		}
	}
	for id, was := range recs.Jobs {
		j, err := s.GetJob(ctx, id)
		if err != nil {
			t.Fatalf("job %s: %v", id, err)
		}
		switch {
		case !j.State.Ended():
			t.Errorf("job %s (%s under protocol 2): %s at the end", id, was, j.State)
		case weir.State(was).Ended() && string(j.State) != was:
			t.Errorf("job %s ended %s under protocol 2, %s now", id, was, j.State)
		}
	}
	if j, err := s.GetJob(ctx, expiring); err != nil || j.Attempt < 2 && j.State != weir.Failed {
		t.Errorf("job %s, whose lease expired: %+v, %v; want it run again or failed", expiring, j, err)
	}

	// the check sees what it checks: an ended job that lost its entry in
	// its retention bucket (it ended after the migration; one that ended
	// before has an entry in the expiry index: removed too), its only
	// removal
	n, err := s.Partitions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pp := redisstore.PartitionPrefix(ns, engine.Partition(expiring, n), n)
	if err := rdb.ZRem(ctx, pp+"expiry", "j:"+expiring).Err(); err != nil {
		t.Fatal(err)
	}
	minutes, err := rdb.ZRange(ctx, pp+"xb", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range minutes {
		if err := rdb.LRem(ctx, pp+"xb:"+m, 0, expiring).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rep, err = faults.CheckStoreWith(ctx, rdb, ns, faults.CheckOptions{Now: c.Now()})
	if err != nil || !slices.ContainsFunc(rep.Violations, func(v string) bool { return strings.Contains(v, "j:"+expiring) }) {
		t.Fatalf("job %s without its expiry entry: %v, %v; want a violation naming it", expiring, rep, err)
	}
}

// clusterAddrs is WEIR_REDIS_CLUSTER: the Redis Cluster's seeds, "" for
// none.
func clusterAddrs() string { return os.Getenv("WEIR_REDIS_CLUSTER") }
