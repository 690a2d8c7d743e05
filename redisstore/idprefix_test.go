package redisstore

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// submitIDs submits a one-task workflow for each ID, from 8 goroutines.
func submitIDs(t testing.TB, s *Store, ids []string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	next := make(chan string)
	for range 8 {
		wg.Go(func() {
			for id := range next {
				_, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: id, Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}})
				if err != nil {
					errs <- fmt.Errorf("submit %s: %w", id, err)
				}
			}
		})
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// listAllIDs follows the cursors of a listing and returns the IDs listed.
func listAllIDs(t testing.TB, s engine.Store, p weir.ListParams) []string {
	t.Helper()
	var out []string
	for range 1000 {
		pg, err := s.ListWorkflows(bg, p)
		if err != nil {
			t.Fatalf("list %+v: %v", p, err)
		}
		for _, w := range pg.Workflows {
			out = append(out, w.ID)
		}
		if pg.NextCursor == "" {
			return out
		}
		p.Cursor = pg.NextCursor
	}
	t.Fatalf("list %+v: still a cursor after 1000 pages", p)
	return nil
}

// TestListIDPrefixBounded: a listing by ID prefix reads the partition's
// index of IDs from the prefix on (ZRANGEBYLEX), so that a prefix that 1
// workflow among 5,000 others has comes back in one call that runs a
// handful of commands, and one that examines ListScan workflows reads no
// more than those. The command counts are the server's (INFO
// commandstats, the commands run inside Lua included): with
// WEIR_REDIS_URL, on a private redis-server; on miniredis only the pages
// are checked.
func TestListIDPrefixBounded(t *testing.T) {
	e := newOwnEnv(t, engine.Config{})
	n := 5000
	if !realRedis() {
		n = 1200 // past ListScan
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("w-%05d", i)
	}
	submitIDs(t, e.store, append(ids, "needle-1"))
	measure := func(p weir.ListParams) (weir.WorkflowPage, redistest.Stats) {
		t.Helper()
		if realRedis() {
			if err := e.rdb.ConfigResetStat(bg).Err(); err != nil {
				t.Fatal(err)
			}
		}
		pg, err := e.store.ListWorkflows(bg, p)
		if err != nil {
			t.Fatalf("list %+v: %v", p, err)
		}
		if !realRedis() {
			return pg, nil // miniredis keeps no commandstats
		}
		return pg, redistest.CommandStats(t, e.rdb).Measured()
	}

	pg, st := measure(weir.ListParams{IDPrefix: "needle"})
	if len(pg.Workflows) != 1 || pg.Workflows[0].ID != "needle-1" || pg.NextCursor != "" {
		t.Fatalf("prefix needle: %d workflows, next %q; want needle-1 alone, no cursor", len(pg.Workflows), pg.NextCursor)
	}
	if realRedis() {
		// the call, its seq hash read, one index read, the record's
		// HMGET, HGETALL and task states: no walk of the other 5,000
		zr, _ := st.Sum("zrangebylex")
		zrev, _ := st.Sum("zrevrangebylex")
		t.Logf("prefix needle among %d: %d commands, %d ZRANGEBYLEX, %d ZREVRANGEBYLEX", n, st.Calls(), zr, zrev)
		if zr != 1 || zrev != 0 || st.Calls() > 12 {
			t.Errorf("prefix needle among %d: %d commands (%d ZRANGEBYLEX, %d ZREVRANGEBYLEX), want at most 12 with one ZRANGEBYLEX: %v", n, st.Calls(), zr, zrev, st)
		}
	}

	// a page of 10: the index read once, 11 records looked at
	pg, st = measure(weir.ListParams{IDPrefix: "w-", Limit: 10})
	if len(pg.Workflows) != 10 || pg.Workflows[0].ID != "w-00000" || pg.NextCursor != "w-00009" {
		t.Fatalf("prefix w- limit 10: %d workflows, next %q", len(pg.Workflows), pg.NextCursor)
	}
	if realRedis() {
		zr, _ := st.Sum("zrangebylex")
		hm, _ := st.Sum("hmget")
		t.Logf("a page of 10: %d commands, %d ZRANGEBYLEX, %d HMGET", st.Calls(), zr, hm)
		if zr != 1 || hm > 13 {
			t.Errorf("a page of 10: %d ZRANGEBYLEX, %d HMGET; want 1 and at most 13: %v", zr, hm, st)
		}
	}

	// a state no workflow is in: ListScan examined, then a cursor
	pg, st = measure(weir.ListParams{IDPrefix: "w-", State: weir.WorkflowCompleted})
	if len(pg.Workflows) != 0 || pg.NextCursor != fmt.Sprintf("w-%05d", weir.ListScan-1) {
		t.Fatalf("prefix w- completed: %d workflows, next %q; want none and w-%05d", len(pg.Workflows), pg.NextCursor, weir.ListScan-1)
	}
	if realRedis() {
		zr, _ := st.Sum("zrangebylex")
		hm, _ := st.Sum("hmget")
		t.Logf("%d examined: %d commands, %d ZRANGEBYLEX, %d HMGET", weir.ListScan, st.Calls(), zr, hm)
		if zr > int64(weir.ListScan/100+1) || hm > int64(weir.ListScan+3) {
			t.Errorf("%d examined: %d ZRANGEBYLEX, %d HMGET; want at most %d and %d", weir.ListScan, zr, hm, weir.ListScan/100+1, weir.ListScan+3)
		}
	}
	got := listAllIDs(t, e.store, weir.ListParams{IDPrefix: "w-", State: weir.WorkflowCompleted})
	if len(got) != 0 {
		t.Fatalf("completed: %v", got)
	}
	if got := listAllIDs(t, e.store, weir.ListParams{IDPrefix: "w-", Limit: 1000}); !slices.Equal(got, ids) {
		t.Fatalf("prefix w- followed: %d IDs, want %d in ID order", len(got), len(ids))
	}
}

// TestListIDPrefixPartitions pages a listing by ID prefix across 3
// partitions with its cursor (the last ID): every workflow with the
// prefix once, in ID order, alone and with a state, a name and labels;
// a cursor before the prefix starts at it, and one that is no ID is
// refused.
func TestListIDPrefixPartitions(t *testing.T) {
	listIDPrefixPartitions(t, diffClient(t))
}

// TestListIDPrefixOnCluster is TestListIDPrefixPartitions on a Redis
// Cluster (WEIR_REDIS_CLUSTER): each partition's index of IDs in its
// partition's slot.
func TestListIDPrefixOnCluster(t *testing.T) {
	listIDPrefixPartitions(t, redistest.Cluster(t))
}

func listIDPrefixPartitions(t *testing.T, rdb redis.UniversalClient) {
	ns := redistest.Namespace(t, rdb, "idp")
	s, err := New(rdb, Options{Namespace: ns, Config: engine.Config{Partitions: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var as, bs []string
	for i := range 40 {
		as = append(as, fmt.Sprintf("a-%02d", i))
	}
	for i := range 10 {
		bs = append(bs, fmt.Sprintf("b-%02d", i))
	}
	submitIDs(t, s, append(slices.Clone(bs), as...))
	for _, id := range []string{"a-05", "a-17", "a-33", "b-01"} {
		if _, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		p    weir.ListParams
		want []string
	}{
		{weir.ListParams{IDPrefix: "a-", Limit: 7}, as},
		{weir.ListParams{IDPrefix: "a-"}, as},
		{weir.ListParams{IDPrefix: "a-3", Limit: 3}, as[30:]},
		{weir.ListParams{IDPrefix: "a-", State: weir.WorkflowCancelled, Limit: 1}, []string{"a-05", "a-17", "a-33"}},
		{weir.ListParams{IDPrefix: "b", State: weir.WorkflowCancelled}, []string{"b-01"}},
		{weir.ListParams{IDPrefix: "a-", Name: "x"}, nil},
		{weir.ListParams{IDPrefix: "c"}, nil},
		{weir.ListParams{IDPrefix: "a-", Cursor: "a-29"}, as[30:]},
		{weir.ListParams{IDPrefix: "a-", Cursor: "0"}, as},    // before the prefix
		{weir.ListParams{IDPrefix: "a-", Cursor: "zzz"}, nil}, // past it
	} {
		if got := listAllIDs(t, s, tc.p); !slices.Equal(got, tc.want) {
			t.Errorf("list %+v: %v, want %v", tc.p, got, tc.want)
		}
	}
	// the newest-first cursor of a listing without IDPrefix is none here
	pg, err := s.ListWorkflows(bg, weir.ListParams{Limit: 1})
	if err != nil || pg.NextCursor == "" {
		t.Fatalf("list: %+v, %v", pg, err)
	}
	if _, err := s.ListWorkflows(bg, weir.ListParams{IDPrefix: "a-", Cursor: pg.NextCursor}); !strings.Contains(fmt.Sprint(err), "cursor") {
		t.Fatalf("cursor %q with an ID prefix: %v, want INVALID cursor", pg.NextCursor, err)
	}
}

// TestIDIndexFollowsRecords: a workflow's ID leaves its partition's index
// of IDs (P wf:id) with its record, when deleted and when the sweep
// removes it past retention; a workflow submitted again under an ID whose
// old record's retention passed keeps it.
func TestIDIndexFollowsRecords(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Retention = time.Hour
	e := newEnv(t, cfg)
	s := e.store
	k := s.part.keys
	submitIDs(t, s, []string{"x1", "x2", "x3"})
	indexed := func() []string {
		t.Helper()
		v, err := e.rdb.ZRange(bg, k.wfIDs(), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := indexed(); !slices.Equal(got, []string{"x1", "x2", "x3"}) {
		t.Fatalf("after submit: %v", got)
	}
	for _, id := range []string{"x1", "x2", "x3"} {
		if _, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteWorkflow(bg, "x1"); err != nil {
		t.Fatal(err)
	}
	if got := indexed(); !slices.Equal(got, []string{"x2", "x3"}) {
		t.Fatalf("after delete x1: %v", got)
	}
	e.advance(2 * time.Hour)
	// x3 again (its old record's retention passed), then a write call
	// whose sweep removes x2's record and x3's old one's entries
	submitIDs(t, s, []string{"x3"})
	submitIDs(t, s, []string{"y"})
	if got := indexed(); !slices.Equal(got, []string{"x3", "y"}) {
		t.Fatalf("after the sweep: %v, want x3 (submitted again) and y", got)
	}
	if got := listAllIDs(t, s, weir.ListParams{IDPrefix: "x"}); !slices.Equal(got, []string{"x3"}) {
		t.Fatalf("prefix x: %v", got)
	}
	if n, _ := e.rdb.ZCard(bg, k.wf).Result(); n != 2 {
		t.Fatalf("P wf holds %d members, want 2", n)
	}
}

// TestMigrateBuildsIDIndex: a namespace of protocol 3 written before the
// index of IDs existed (simulated: the index and its ix flag removed)
// refuses a listing by ID prefix with ErrNeedsMigration; weir migrate
// builds the index in steps of Step workflows while the namespace is in
// use (a submit and a delete between two steps), stops and resumes, and
// then lists; a second run makes no call.
func TestMigrateBuildsIDIndex(t *testing.T) {
	rdb := diffClient(t)
	for _, parts := range []int{1, 3} {
		t.Run(fmt.Sprint(parts), func(t *testing.T) {
			ns := redistest.Namespace(t, rdb, "ixm")
			s, err := New(rdb, Options{Namespace: ns, Config: engine.Config{Partitions: parts}})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for i := range 25 {
				ids = append(ids, fmt.Sprintf("m%02d", i))
			}
			submitIDs(t, s, ids)
			ps, err := s.layout(bg)
			if err != nil {
				t.Fatal(err)
			}
			for _, pt := range ps {
				if v, err := rdb.HGet(bg, pt.keys.seq, "ix").Result(); err != nil || v != "1" {
					t.Fatalf("%s: ix %q, %v; want 1 in a namespace this build wrote", pt.keys.seq, v, err)
				}
				if err := rdb.Del(bg, pt.keys.wfIDs()).Err(); err != nil {
					t.Fatal(err)
				}
				if err := rdb.HDel(bg, pt.keys.seq, "ix").Err(); err != nil {
					t.Fatal(err)
				}
			}
			_, err = s.ListWorkflows(bg, weir.ListParams{IDPrefix: "m"})
			wantNeedsMigration(t, "a listing by prefix without the index", err)
			if _, err := s.ListWorkflows(bg, weir.ListParams{}); err != nil {
				t.Fatalf("a listing without a prefix: %v", err)
			}

			dry, err := s.Migrate(bg, MigrateParams{DryRun: true})
			if err != nil || dry.From != 3 || dry.Done || dry.Indexed != 25 {
				t.Fatalf("dry run: %+v, %v; want from 3, 25 to index", dry, err)
			}
			r1, err := s.Migrate(bg, MigrateParams{Step: 4, MaxCalls: 2})
			// two steps of 4 in one partition (of 3: the last partition,
			// first migrated, may hold fewer)
			if err != nil || r1.Done || r1.Calls != 2 || r1.Indexed < 1 || r1.Indexed > 8 || (parts == 1 && r1.Indexed != 8) {
				t.Fatalf("first run: %+v, %v; want 2 calls, 8 indexed (1 to 8 of 3 partitions)", r1, err)
			}
			// in use meanwhile
			submitIDs(t, s, []string{"m99"})
			if _, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "m00"}); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteWorkflow(bg, "m00"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.CancelWorkflow(bg, engine.CancelWorkflowParams{ID: "m24"}); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteWorkflow(bg, "m24"); err != nil {
				t.Fatal(err)
			}
			r2, err := s.Migrate(bg, MigrateParams{Step: 4})
			if err != nil || !r2.Done || r2.From != 3 {
				t.Fatalf("second run: %+v, %v", r2, err)
			}
			want := append(slices.Clone(ids[1:24]), "m99")
			if got := listAllIDs(t, s, weir.ListParams{IDPrefix: "m", Limit: 5}); !slices.Equal(got, want) {
				t.Fatalf("after the migration: %v, want %v", got, want)
			}
			var members []string
			for _, pt := range ps {
				v, err := rdb.ZRange(bg, pt.keys.wfIDs(), 0, -1).Result()
				if err != nil {
					t.Fatal(err)
				}
				members = append(members, v...)
				if h, err := rdb.HMGet(bg, pt.keys.seq, "ix", "ixc").Result(); err != nil || h[0] != "1" || h[1] != nil {
					t.Fatalf("%s: ix, ixc %v, %v; want 1 and none", pt.keys.seq, h, err)
				}
			}
			slices.Sort(members)
			if !slices.Equal(members, want) {
				t.Fatalf("the indexes hold %v, want %v", members, want)
			}
			r3, err := s.Migrate(bg, MigrateParams{})
			if err != nil || !r3.Done || r3.Calls != 0 || r3.From != 3 {
				t.Fatalf("third run: %+v, %v; want nothing to do", r3, err)
			}
		})
	}
}

// TestIDIndexFreshPartition: in a partition no call wrote before, a call
// whose first write is the seq hash's now (deny_full on the scripts path:
// a retry or re-run) and that then fails marks the index of IDs complete
// with it, so that a listing by ID prefix is not refused as if the
// partition was written before the index existed.
func TestIDIndexFreshPartition(t *testing.T) {
	for _, path := range []CallPath{PathScripts, PathAuto} {
		t.Run(path.String(), func(t *testing.T) {
			rdb := diffClient(t)
			s, err := New(rdb, Options{Namespace: redistest.Namespace(t, rdb, "ixf"), Path: path})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.RetryJob(bg, engine.RetryJobParams{ID: "nope"}); err == nil {
				t.Fatal("retry of an unknown job succeeded")
			}
			if _, err := s.RerunWorkflow(bg, engine.RerunWorkflowParams{ID: "nope"}); err == nil {
				t.Fatal("re-run of an unknown workflow succeeded")
			}
			if _, err := s.ListWorkflows(bg, weir.ListParams{IDPrefix: "a"}); err != nil {
				t.Fatalf("a listing by prefix: %v", err)
			}
		})
	}
}
