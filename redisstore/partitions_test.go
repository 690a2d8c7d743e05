package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/rediskeys"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
)

// idIn returns an ID with prefix that lands in partition p of n.
func idIn(prefix string, p, n int) string {
	for i := 0; ; i++ {
		id := prefix + strconv.Itoa(i)
		if engine.Partition(id, n) == p {
			return id
		}
	}
}

// nsKeys returns every key of namespace ns on rdb (every master of a
// cluster), sorted.
func nsKeys(t *testing.T, rdb redis.UniversalClient, ns string) []string {
	t.Helper()
	var mu sync.Mutex
	var out []string
	err := rediskeys.ForEachNode(bg, rdb, func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, "weir:{"+ns+":*", 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func clusterAddrs() string { return os.Getenv("WEIR_REDIS_CLUSTER") }

// partEnv is a store of n partitions on rdb, in a fresh namespace.
func partEnv(t *testing.T, rdb redis.UniversalClient, n int) (*Store, string) {
	t.Helper()
	ns := redistest.Namespace(t, rdb, "pt")
	s, err := New(rdb, Options{Namespace: ns, Config: engine.Config{Partitions: n}})
	if err != nil {
		t.Fatal(err)
	}
	return s, ns
}

// partClockEnv is a testEnv of n partitions on rdb, with a test clock.
func partClockEnv(t *testing.T, rdb redis.UniversalClient, n int) *testEnv {
	t.Helper()
	e := &testEnv{clk: testclock.New()}
	e.ns = redistest.Namespace(t, rdb, "pt")
	s, err := New(rdb, Options{Namespace: e.ns, Config: engine.Config{Partitions: n}, Clock: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.store = s
	return e
}

// partServers runs f on miniredis, on the redis-server of WEIR_REDIS_URL
// when set, and on the cluster of WEIR_REDIS_CLUSTER when set.
func partServers(t *testing.T, f func(t *testing.T, rdb redis.UniversalClient)) {
	for _, srv := range redistest.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) { f(t, redistest.Client(t, srv.Options)) })
	}
	if clusterAddrs() != "" {
		t.Run("cluster", func(t *testing.T) { f(t, redistest.Cluster(t)) })
	}
}

// TestPartitionsPlacement: with P = 8 every key of a workflow (its record,
// its tasks' jobs, its wait sets) and of a plain job is in the partition
// of its ID, in that partition's slot range; np is 8 in weir:{<ns>:0}:seq.
func TestPartitionsPlacement(t *testing.T) {
	partServers(t, func(t *testing.T, rdb redis.UniversalClient) {
		const n = 8
		s, ns := partEnv(t, rdb, n)
		var wfs, jobs []string
		for i := range 12 {
			w := "wf" + strconv.Itoa(i)
			plan := engine.Plan{ID: w, Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}, {Name: "b", Queue: "q", After: []string{"a"}}}}
			if _, err := s.Submit(bg, engine.SubmitParams{Plan: plan}); err != nil {
				t.Fatal(err)
			}
			wfs = append(wfs, w)
			j := "job" + strconv.Itoa(i)
			if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: j, Queue: "q"}}); err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		// run the first tasks, so that the dependents are pushed
		for range 4 {
			c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 10, Lease: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var outs []engine.Outcome
			for _, cl := range c {
				outs = append(outs, engine.Outcome{JobID: cl.Job.ID, Token: cl.Lease.Token, Kind: engine.OutcomeCompleted})
			}
			if len(outs) > 0 {
				if _, err := s.Finish(bg, engine.FinishParams{Outcomes: outs}); err != nil {
					t.Fatal(err)
				}
			}
		}
		keys := nsKeys(t, rdb, ns)
		if len(keys) == 0 {
			t.Fatal("no keys")
		}
		prefixes := make([]string, n)
		for p := range n {
			prefixes[p] = PartitionPrefix(ns, p, n)
			slot := keySlot(prefixes[p] + "seq")
			if slot < p*16384/n || slot >= (p+1)*16384/n {
				t.Fatalf("partition %d: slot %d", p, slot)
			}
		}
		check := func(id, infix string) {
			t.Helper()
			want := prefixes[engine.Partition(id, n)]
			found := false
			for _, k := range keys {
				_, rest, _ := strings.Cut(k, "}:")
				if rest == infix+id || strings.HasPrefix(rest, infix+id+":") {
					found = true
					if !strings.HasPrefix(k, want) {
						t.Fatalf("key %q of %q is not in its partition (%q)", k, id, want)
					}
				}
			}
			if !found {
				t.Fatalf("no key of %q", id)
			}
		}
		for _, w := range wfs {
			check(w, "w:")
		}
		for _, j := range jobs {
			check(j, "j:")
		}
		for _, k := range keys {
			if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(k, p) }) && k != "weir:{"+ns+":0}:seq3" && k != "weir:{"+ns+":0}:seq" {
				t.Fatalf("key %q is in no partition", k)
			}
		}
		np, err := rdb.HGet(bg, "weir:{"+ns+":0}:seq3", "np").Result()
		if err != nil || np != "8" {
			t.Fatalf("np %q, %v", np, err)
		}
		// the work went where it should: every workflow is there
		page, err := s.ListWorkflows(bg, weir.ListParams{Limit: 100})
		if err != nil || len(page.Workflows) != len(wfs) {
			t.Fatalf("list: %d workflows, %v", len(page.Workflows), err)
		}
	})
}

// TestPartitionsCount: a namespace keeps its partition count; a store
// opened with another fails at its first call, naming both, and writes
// nothing; Partitions 0 takes the namespace's; a store of one partition
// writes no np.
func TestPartitionsCount(t *testing.T) {
	partServers(t, func(t *testing.T, rdb redis.UniversalClient) {
		s8, ns := partEnv(t, rdb, 8)
		if _, err := s8.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		before := nsKeys(t, rdb, ns)
		for _, n := range []int{1, 4} {
			s, err := New(rdb, Options{Namespace: ns, Config: engine.Config{Partitions: n}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "b", Queue: "q"}})
			if !errors.Is(err, weir.ErrInvalid) || !strings.Contains(err.Error(), "8") || !strings.Contains(err.Error(), strconv.Itoa(n)) {
				t.Fatalf("P = %d on a namespace of 8: %v", n, err)
			}
			if err := s.PauseQueue(bg, "q"); !errors.Is(err, weir.ErrInvalid) {
				t.Fatalf("P = %d, pause: %v", n, err)
			}
		}
		if after := nsKeys(t, rdb, ns); !slices.Equal(before, after) {
			t.Fatalf("a refused store wrote: %v, then %v", before, after)
		}
		s0, err := New(rdb, Options{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s0.Partitions(bg); err != nil || n != 8 || s0.Config().Partitions != 8 {
			t.Fatalf("Partitions 0: %d, %v, config %d", n, err, s0.Config().Partitions)
		}
		if j, err := s0.GetJob(bg, "a"); err != nil || j.ID != "a" {
			t.Fatalf("Partitions 0 reads the job: %+v, %v", j, err)
		}

		// a store of 0 that read a namespace not written yet keeps one
		// partition: a store of 8 that writes it later is refused by it
		nsF := redistest.Namespace(t, rdb, "pt")
		reader, err := New(rdb, Options{Namespace: nsF})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := reader.GetJob(bg, "x1"); !errors.Is(err, weir.ErrNotFound) {
			t.Fatalf("read of a new namespace: %v", err)
		}
		if n, _ := reader.Partitions(bg); n != 1 {
			t.Fatalf("the reader of a new namespace has %d partitions", n)
		}

		// a namespace of one partition: no np, and a store of 8 refused
		s1, ns1 := partEnv(t, rdb, 1)
		if _, err := s1.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		seq := "weir:{" + ns1 + ":0}:seq3"
		if ok, err := rdb.HExists(bg, seq, "np").Result(); err != nil || ok {
			t.Fatalf("a store of one partition wrote np: %v, %v", ok, err)
		}
		before = nsKeys(t, rdb, ns1)
		s8b, err := New(rdb, Options{Namespace: ns1, Config: engine.Config{Partitions: 8}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s8b.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "b", Queue: "q"}}); !errors.Is(err, weir.ErrInvalid) || !strings.Contains(err.Error(), "has 1 partitions") {
			t.Fatalf("P = 8 on a namespace of 1: %v", err)
		}
		if after := nsKeys(t, rdb, ns1); !slices.Equal(before, after) {
			t.Fatalf("a refused store wrote: %v, then %v", before, after)
		}
		if ok, _ := rdb.HExists(bg, seq, "np").Result(); ok {
			t.Fatal("a refused store wrote np")
		}
		if _, err := s8b.Schedules(bg); !errors.Is(err, weir.ErrInvalid) {
			t.Fatalf("schedules: %v", err)
		}
	})
}

// TestPartitionsClaimRotation: claim call c visits partition c mod P
// first, then the next ones, taking what is still missing from Max.
func TestPartitionsClaimRotation(t *testing.T) {
	const n = 4
	e := newEnv(t, engine.Config{Partitions: n})
	s := e.store
	for p := range n {
		for k := range 2 {
			id := idIn("p"+strconv.Itoa(p)+"k"+strconv.Itoa(k)+"-", p, n)
			if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	claim := func(max int) []int {
		t.Helper()
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: max, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		var ps []int
		for _, cl := range c {
			ps = append(ps, engine.Partition(cl.Job.ID, n))
		}
		return ps
	}
	for c := range n {
		if got := claim(1); !slices.Equal(got, []int{c}) {
			t.Fatalf("claim %d took from partitions %v, want [%d]", c, got, c)
		}
	}
	// claim 4 starts at partition 0 again, and goes on to 1 and 2 for the rest
	if got := claim(3); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("claim 4 took from %v", got)
	}
	// claim 5 starts at 1 (empty now), then 2 (empty), 3
	if got := claim(2); !slices.Equal(got, []int{3}) {
		t.Fatalf("claim 5 took from %v", got)
	}
	qs, err := s.Queues(bg)
	if err != nil || len(qs) != 1 || qs[0].Running != 2*n || qs[0].Ready != 0 {
		t.Fatalf("queues: %+v, %v", qs, err)
	}
}

// TestPartitionsBlockingClaim: a blocking claim over every partition wakes
// at a push into any of them (here not the first it visits), returns that
// job, and leaves no wait behind; a cancelled one ends every wait.
func TestPartitionsBlockingClaim(t *testing.T) {
	partServers(t, func(t *testing.T, rdb redis.UniversalClient) {
		const n = 8
		s, _ := partEnv(t, rdb, n)
		id := idIn("late", 5, n)
		type res struct {
			c   []engine.Claimed
			err error
		}
		done := make(chan res, 1)
		go func() {
			c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q", "q2"}, Max: 2, Lease: time.Minute, Wait: time.Minute})
			done <- res{c, err}
		}()
		time.Sleep(50 * time.Millisecond) // let it wait (either way it must get the job)
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q2"}}); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.err != nil || len(r.c) != 1 || r.c[0].Job.ID != id {
			t.Fatalf("woken claim: %+v, %v", r.c, r.err)
		}
		if stacks := waits(); stacks != "" {
			t.Fatalf("a wait outlived its claim:\n%s", stacks)
		}
		ctx, cancel := context.WithCancel(bg)
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		if _, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute, Wait: time.Minute}); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait: %v", err)
		}
		if stacks := waits(); stacks != "" {
			t.Fatalf("a wait outlived its cancelled claim:\n%s", stacks)
		}
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute, Wait: 20 * time.Millisecond})
		if err != nil || c != nil {
			t.Fatalf("empty wait: %+v, %v", c, err)
		}
	})
}

// waits returns the stacks of goroutines inside blockAll once none is
// left, or after 10 s (a hang guard) those left. blockAll waits for its
// goroutines (wg.Wait), but a goroutine that called wg.Done still shows
// blockAll's frame until it has returned: a look at once could catch it
// there (the test failed so, about once in a batch of 40 runs).
func waits() string {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if s := waitStacks(); s == "" || time.Now().After(deadline) {
			return s
		}
	}
}

// waitStacks returns the stacks of goroutines inside blockAll now.
func waitStacks() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "blockAll") && !strings.Contains(g, "TestPartitions") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// TestPartitionsLists: ListWorkflows merges the partitions newest first
// across pages; ListJobs pages through the partitions in order; Events
// pages over every partition's stream; each record comes once.
func TestPartitionsLists(t *testing.T) { partServers(t, testPartitionsLists) }

func testPartitionsLists(t *testing.T, rdb redis.UniversalClient) {
	const n = 4
	e := partClockEnv(t, rdb, n)
	s := e.store
	var wfs []string
	for i := range 11 {
		w := fmt.Sprintf("w%02d", i)
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: w, Tasks: []engine.TaskSpec{{Name: "a", Queue: "wq"}}}}); err != nil {
			t.Fatal(err)
		}
		wfs = append(wfs, w)
		if i%3 != 2 { // some share a creation time
			e.advance(time.Millisecond)
		}
	}
	var got []weir.Workflow
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := s.ListWorkflows(bg, weir.ListParams{Limit: 3, Cursor: cursor})
		if err != nil || pages > 10 {
			t.Fatalf("list: %v after %d pages", err, pages)
		}
		got = append(got, page.Workflows...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(got) != len(wfs) {
		t.Fatalf("listed %d workflows, want %d", len(got), len(wfs))
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.CreatedAt.Before(b.CreatedAt) || a.CreatedAt.Equal(b.CreatedAt) && a.ID <= b.ID {
			t.Fatalf("not newest first: %s (%v) before %s (%v)", a.ID, a.CreatedAt, b.ID, b.CreatedAt)
		}
	}
	// an exactly full last page has no cursor
	if page, err := s.ListWorkflows(bg, weir.ListParams{Limit: 11}); err != nil || len(page.Workflows) != 11 || page.NextCursor != "" {
		t.Fatalf("full page: %d, %q, %v", len(page.Workflows), page.NextCursor, err)
	}

	// ListJobs: 10 ready jobs, pages of 3
	var ids []string
	for i := range 10 {
		id := "j" + strconv.Itoa(i)
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	var listed []string
	var parts []int
	cursor = ""
	for pages := 0; ; pages++ {
		page, err := s.ListJobs(bg, weir.ListJobsParams{Queue: "q", State: weir.ListReady, Limit: 3, Cursor: cursor})
		if err != nil || pages > 10 {
			t.Fatalf("list jobs: %v after %d pages", err, pages)
		}
		for _, j := range page.Jobs {
			listed = append(listed, j.ID)
			parts = append(parts, engine.Partition(j.ID, n))
		}
		if page.NextCursor == "" {
			break
		}
		if !strings.Contains(page.NextCursor, "|") {
			t.Fatalf("cursor %q", page.NextCursor)
		}
		cursor = page.NextCursor
	}
	if !slices.IsSorted(parts) || len(listed) != len(ids) {
		t.Fatalf("listed %v (partitions %v)", listed, parts)
	}
	slices.Sort(listed)
	want := slices.Clone(ids)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Fatalf("listed %v, want %v", listed, want)
	}
	for _, bad := range []string{"4|", "x|", "1", "-1|"} {
		if _, err := s.ListJobs(bg, weir.ListJobsParams{Queue: "q", State: weir.ListReady, Cursor: bad}); !errors.Is(err, weir.ErrInvalid) {
			t.Fatalf("cursor %q: %v", bad, err)
		}
	}
	if page, err := s.ListJobs(bg, weir.ListJobsParams{Queue: "q", State: weir.ListReady, Limit: 10}); err != nil || len(page.Jobs) != 10 || page.NextCursor != "" {
		t.Fatalf("full page of jobs: %d, %q, %v", len(page.Jobs), page.NextCursor, err)
	}

	// Events: every event once, in time order, IDs naming their partition
	all, err := s.Events(bg, engine.EventsParams{Limit: engine.MaxEventsLimit})
	if err != nil || len(all.Events) != len(wfs)*2+len(ids) {
		// a workflow's submit makes its start and its task's push; a job's enqueue one
		t.Logf("all events: %d, %v", len(all.Events), err)
	}
	if err != nil || len(all.Events) == 0 {
		t.Fatalf("events: %v", err)
	}
	var paged []weir.Event
	after := ""
	for pages := 0; ; pages++ {
		page, err := s.Events(bg, engine.EventsParams{After: after, Limit: 4})
		if err != nil || pages > 100 {
			t.Fatalf("events: %v after %d pages", err, pages)
		}
		if len(page.Events) == 0 {
			break
		}
		if strings.Count(page.Next, ",") != n-1 {
			t.Fatalf("next %q", page.Next)
		}
		paged = append(paged, page.Events...)
		after = page.Next
	}
	seen := map[string]bool{}
	for i, ev := range paged {
		p, _, ok := strings.Cut(ev.ID, "|")
		if !ok || seen[ev.ID] {
			t.Fatalf("event ID %q", ev.ID)
		}
		seen[ev.ID] = true
		if id := ev.Workflow; id != "" && p != strconv.Itoa(engine.Partition(id, n)) {
			t.Fatalf("event %q of workflow %q", ev.ID, id)
		}
		if i > 0 && ev.Time.Before(paged[i-1].Time) {
			t.Fatalf("event %d before the one ahead of it", i)
		}
	}
	if len(paged) != len(all.Events) {
		t.Fatalf("paged %d events, one page has %d", len(paged), len(all.Events))
	}
	w := wfs[3]
	only, err := s.Events(bg, engine.EventsParams{Workflow: w})
	if err != nil || len(only.Events) == 0 {
		t.Fatalf("events of %s: %v", w, err)
	}
	for _, ev := range only.Events {
		if ev.Workflow != w {
			t.Fatalf("event %+v in the page of %s", ev, w)
		}
	}
	if _, err := s.Events(bg, engine.EventsParams{After: "1-0"}); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("a one-partition cursor: %v", err)
	}
}

// TestPartitionsQueues: Queues sums the partitions' counts; a pause
// reaches every partition; a purge empties them all; a heartbeat and a
// finish of jobs of several partitions reach each one's partition.
func TestPartitionsQueues(t *testing.T) { partServers(t, testPartitionsQueues) }

func testPartitionsQueues(t *testing.T, rdb redis.UniversalClient) {
	const n = 4
	e := partClockEnv(t, rdb, n)
	s := e.store
	for i := range 12 {
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j" + strconv.Itoa(i), Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	qs, err := s.Queues(bg)
	if err != nil || len(qs) != 1 || qs[0].Ready != 12 {
		t.Fatalf("queues: %+v, %v", qs, err)
	}
	if err := s.PauseQueue(bg, "q"); err != nil {
		t.Fatal(err)
	}
	ps, _ := s.layout(bg)
	for q, p := range ps {
		if v, err := rdb.HGet(bg, p.keys.queues, "q").Result(); err != nil || v != "1" {
			t.Fatalf("partition %d: paused %q, %v", q, v, err)
		}
	}
	if c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 12, Lease: time.Minute}); err != nil || len(c) != 0 {
		t.Fatalf("claim of a paused queue: %d, %v", len(c), err)
	}
	if qs, _ := s.Queues(bg); !qs[0].Paused {
		t.Fatalf("queues: %+v", qs)
	}
	if err := s.ResumeQueue(bg, "q"); err != nil {
		t.Fatal(err)
	}
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 6, Lease: time.Minute})
	if err != nil || len(c) != 6 {
		t.Fatalf("claim: %d, %v", len(c), err)
	}
	var leases []engine.LeaseRef
	var outs []engine.Outcome
	for _, cl := range c {
		leases = append(leases, engine.LeaseRef{JobID: cl.Job.ID, Token: cl.Lease.Token})
		outs = append(outs, engine.Outcome{JobID: cl.Job.ID, Token: cl.Lease.Token, Kind: engine.OutcomeCompleted})
	}
	leases = append(leases, engine.LeaseRef{JobID: "nope", Token: "x"})
	st, err := s.Heartbeat(bg, engine.HeartbeatParams{Leases: leases, Extend: time.Minute})
	if err != nil || len(st) != 7 {
		t.Fatalf("heartbeat: %+v, %v", st, err)
	}
	for i, l := range st {
		if l.JobID != leases[i].JobID || l.Lost != (i == 6) {
			t.Fatalf("status %d: %+v", i, l)
		}
	}
	fr, err := s.Finish(bg, engine.FinishParams{Outcomes: outs, Claim: &engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute}})
	if err != nil || len(fr.Settled) != 6 || len(fr.Claimed) > 1 {
		t.Fatalf("finish: %+v, %v", fr, err)
	}
	for i, st := range fr.Settled {
		if st.JobID != outs[i].JobID || st.Err != nil || st.State != weir.Completed {
			t.Fatalf("settled %d: %+v", i, st)
		}
	}
	first := engine.Partition(outs[0].JobID, n)
	left := 0 // ready jobs of the first outcome's partition
	for i := range 12 {
		if engine.Partition("j"+strconv.Itoa(i), n) == first && !slices.ContainsFunc(outs, func(o engine.Outcome) bool { return o.JobID == "j"+strconv.Itoa(i) }) {
			left++
		}
	}
	if len(fr.Claimed) != min(left, 1) {
		t.Fatalf("the finish claimed %d, its first outcome's partition had %d ready", len(fr.Claimed), left)
	}
	for _, c := range fr.Claimed {
		if got := engine.Partition(c.Job.ID, n); got != first {
			t.Fatalf("the finish claimed from partition %d, its first outcome's is %d", got, first)
		}
	}
	running := len(fr.Claimed)
	// a finish of only a claim is a claim call: Settled empty, not nil
	only, err := s.Finish(bg, engine.FinishParams{Claim: &engine.ClaimParams{Queues: []string{"none"}, Max: 1, Lease: time.Minute}})
	if err != nil || only.Settled == nil || len(only.Settled) != 0 || len(only.Claimed) != 0 {
		t.Fatalf("finish of a claim: %+v, %v", only, err)
	}
	qs, err = s.Queues(bg)
	if err != nil || qs[0].Ready != 6-running || qs[0].Running != running {
		t.Fatalf("queues: %+v, %v", qs, err)
	}
	pr, err := s.PurgeQueue(bg, "q")
	if err != nil || len(pr.Purged) != 6-running {
		t.Fatalf("purge: %+v, %v", pr, err)
	}
	if qc, err := s.QueueContents(bg, "q"); err != nil || len(qc.Ready) != 0 || len(qc.Running) != running {
		t.Fatalf("contents: %+v, %v", qc, err)
	}
	// EnqueueBatch groups by partition, results in order
	var batch []engine.EnqueueParams
	for i := range 9 {
		batch = append(batch, engine.EnqueueParams{Job: engine.JobSpec{ID: "b" + strconv.Itoa(i), Queue: "q"}})
	}
	batch = append(batch, engine.EnqueueParams{Job: engine.JobSpec{ID: "bad id!", Queue: "q"}})
	res, err := s.EnqueueBatch(bg, batch)
	if err != nil || len(res) != 10 {
		t.Fatalf("batch: %v", err)
	}
	for i, r := range res {
		if (r.Err != nil) != (i == 9) || i < 9 && !r.Created {
			t.Fatalf("batch %d: %+v", i, r)
		}
	}
	for i := range 9 {
		if _, err := s.GetJob(bg, "b"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetStepBudget(bg, 3); err != nil {
		t.Fatal(err)
	}
	for q, p := range ps {
		if v, _ := rdb.HGet(bg, p.keys.seq, "cb").Result(); v != "3" {
			t.Fatalf("partition %d: budget %q", q, v)
		}
	}
}

// TestPartitionsWatchStops: a stop of a running job in any partition
// reaches WatchStops, which calls fn(nil) once it listens on all of them;
// a waiting Events read wakes at an event of any partition.
func TestPartitionsWatchStops(t *testing.T) {
	partServers(t, func(t *testing.T, rdb redis.UniversalClient) {
		const n = 8
		s, _ := partEnv(t, rdb, n)
		id := idIn("stopme", 6, n)
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute}); err != nil || len(c) != 1 {
			t.Fatalf("claim: %v, %v", c, err)
		}
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		calls := make(chan []string, 16)
		done := make(chan error, 1)
		go func() { done <- s.WatchStops(ctx, func(ids []string) { calls <- ids }) }()
		if ids := <-calls; ids != nil {
			t.Fatalf("first call %v, want nil", ids)
		}
		if _, err := s.CancelJob(bg, engine.CancelJobParams{ID: id}); err != nil {
			t.Fatal(err)
		}
		if ids := <-calls; !slices.Equal(ids, []string{id}) {
			t.Fatalf("stop notice %v, want [%s]", ids, id)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("watch: %v", err)
		}

		page, err := s.Events(bg, engine.EventsParams{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan engine.EventPage, 1)
		go func() {
			p, err := s.Events(bg, engine.EventsParams{After: page.Next, Wait: time.Minute})
			if err != nil {
				t.Error(err)
			}
			got <- p
		}()
		time.Sleep(30 * time.Millisecond)
		late := idIn("late", 3, n)
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: late, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		p := <-got
		if len(p.Events) == 0 || p.Events[0].Job != late || !strings.HasPrefix(p.Events[0].ID, "3|") {
			t.Fatalf("woken events: %+v", p.Events)
		}

		// a filtered wait: only the workflow's partition, past others' events
		w := idIn("wf", 2, n)
		other := idIn("other", 2, n)
		go func() {
			p, err := s.Events(bg, engine.EventsParams{Workflow: w, Wait: time.Minute})
			if err != nil {
				t.Error(err)
			}
			got <- p
		}()
		time.Sleep(30 * time.Millisecond)
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: other, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: w, Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}}); err != nil {
			t.Fatal(err)
		}
		p = <-got
		if len(p.Events) == 0 || p.Events[0].Workflow != w || !strings.HasPrefix(p.Events[0].ID, "2|") || strings.Count(p.Next, ",") != n-1 {
			t.Fatalf("woken events of %s: %+v, next %q", w, p.Events, p.Next)
		}
	})
}

// TestPartitionsSchedules: with P = 8 a schedule's keys are in the
// partition of its name, and so is its tick's job or workflow
// ("<name>@<seconds>"); the list merges every partition's, by name;
// WatchSchedules hears a put in any partition.
func TestPartitionsSchedules(t *testing.T) {
	partServers(t, func(t *testing.T, rdb redis.UniversalClient) {
		const n = 8
		e := partClockEnv(t, rdb, n)
		s := e.store
		ctx, cancel := context.WithCancel(bg)
		defer cancel()
		heard := make(chan struct{}, 64)
		done := make(chan error, 1)
		go func() { done <- s.WatchSchedules(ctx, func() { heard <- struct{}{} }) }()
		<-heard // listening on every partition

		jobName, wfName := idIn("job", 6, n), idIn("wf", 3, n)
		js := engine.ScheduleSpec{Name: jobName, Every: time.Minute, Job: &engine.JobSpec{Queue: "q"}}
		ws := engine.ScheduleSpec{Name: wfName, Every: time.Minute, Plan: &engine.Plan{Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}}
		for _, spec := range []engine.ScheduleSpec{js, ws} {
			if _, err := engine.PutSchedule(bg, s, spec, e.clock()); err != nil {
				t.Fatal(err)
			}
			<-heard // the put's notice, from the schedule's partition
		}
		ps, err := s.layout(bg)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			p    int
		}{{jobName, 6}, {wfName, 3}} {
			for q, pt := range ps {
				k := pt.keys.prefix + "s:" + c.name
				if ex, err := rdb.Exists(bg, k).Result(); err != nil || (ex == 1) != (q == c.p) {
					t.Fatalf("%s in partition %d: %d, %v", k, q, ex, err)
				}
			}
		}
		l, err := s.Schedules(bg)
		if err != nil || len(l.Schedules) != 2 || l.Schedules[0].Name != jobName || l.Schedules[1].Name != wfName || l.Schedules[0].Partitions != n {
			t.Fatalf("schedules: %+v, %v", l, err)
		}
		e.clk.Set(l.Schedules[0].Next)
		for _, sc := range l.Schedules {
			res, err := engine.FireDue(bg, s, s, sc, e.clock())
			want := sc.Name + "@" + strconv.FormatInt(sc.Next.Unix(), 10)
			if err != nil || res.Outcome != engine.FireFired || res.ID != want {
				t.Fatalf("fire %s: %+v, %v; want %s", sc.Name, res, err, want)
			}
		}
		if j, err := s.GetJob(bg, jobName+"@"+strconv.FormatInt(l.Schedules[0].Next.Unix(), 10)); err != nil || j.State != weir.Queued {
			t.Fatalf("the job tick: %+v, %v", j, err)
		}
		wid := wfName + "@" + strconv.FormatInt(l.Schedules[1].Next.Unix(), 10)
		if w, err := s.GetWorkflow(bg, wid); err != nil || w.ID != wid {
			t.Fatalf("the workflow tick: %+v, %v", w, err)
		}
		if ex, _ := rdb.Exists(bg, ps[3].keys.prefix+"w:"+wid).Result(); ex != 1 {
			t.Fatalf("the workflow tick %s is not in partition 3", wid)
		}
		if err := s.PauseSchedule(bg, wfName); err != nil {
			t.Fatal(err)
		}
		if err := s.ResumeSchedule(bg, wfName); err != nil {
			t.Fatal(err)
		}
		<-heard // the resume's notice
		if err := s.DeleteSchedule(bg, jobName); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetSchedule(bg, jobName); !errors.Is(err, weir.ErrNotFound) {
			t.Fatalf("deleted: %v", err)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("watch: %v", err)
		}
	})
}

// BenchmarkRoute is what routing adds to a call by ID (Finish, Claim's
// hot path and Enqueue reach their part through it): P = 1 and P = 8.
func BenchmarkRoute(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run("P="+strconv.Itoa(n), func(b *testing.B) {
			s, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), Options{Namespace: "bench", Config: engine.Config{Partitions: n}})
			if err != nil {
				b.Fatal(err)
			}
			ps := []*part{s.part}
			if n > 1 {
				ps = make([]*part, n)
				for p := range ps {
					ps[p] = newPart(s.client, keysOf(partitionTag("bench", p, n)), s.part.cfg, s.opts)
				}
			}
			s.parts.Store(&ps)
			var sink *part
			for b.Loop() {
				got, err := s.layout(bg)
				if err != nil {
					b.Fatal(err)
				}
				sink = at(got, "workflow-1234/task")
			}
			_ = sink
		})
	}
}

// TestStoreRoutesEveryMethod: every exported method of part (the
// one-partition engine) is defined on Store, which routes it; none is
// reached through the embedded partition 0 by promotion, which would act
// on one partition of a namespace of several.
func TestStoreRoutesEveryMethod(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	methods := map[string]map[string]bool{"part": {}, "Store": {}}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && methods[id.Name] != nil {
					methods[id.Name][fn.Name.Name] = true
				}
			}
		}
	}
	if len(methods["part"]) < 40 {
		t.Fatalf("found %d methods of part", len(methods["part"]))
	}
	for m := range methods["part"] {
		if !methods["Store"][m] {
			t.Errorf("Store does not route %s: it would reach partition 0 only", m)
		}
	}
}

// TestPartitionsFinishAddRefused: a finish over two partitions whose
// second outcome adds a task its workflow refuses writes nothing in
// either: the partition of the adding outcome goes first.
func TestPartitionsFinishAddRefused(t *testing.T) {
	const n = 4
	e := newEnv(t, engine.Config{Partitions: n})
	s := e.store
	job := idIn("plain", 0, n)
	wf := idIn("wf", 2, n)
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: job, Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: wf, Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 2, Lease: time.Minute})
	if err != nil || len(c) != 2 {
		t.Fatalf("claim: %+v, %v", c, err)
	}
	tok := map[string]string{}
	for _, cl := range c {
		tok[cl.Job.ID] = cl.Lease.Token
	}
	_, err = s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{
		{JobID: job, Token: tok[job], Kind: engine.OutcomeCompleted},
		{JobID: wf + "/a", Token: tok[wf+"/a"], Kind: engine.OutcomeCompleted, Add: []engine.TaskSpec{{Name: "b", Queue: "q", After: []string{"nope"}}}},
	}})
	if !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("finish with a refused add: %v", err)
	}
	if j, err := s.GetJob(bg, job); err != nil || j.State != weir.Running {
		t.Fatalf("the other partition's job: %+v, %v", j.State, err)
	}
}

// TestOptionsPartitions: Config.Partitions alone (the Config's other
// fields left zero) still means the defaults with those partitions; a bad
// count is refused by New.
func TestOptionsPartitions(t *testing.T) {
	rdb := redistest.Client(t, redistest.Mini(t).Options)
	s, err := New(rdb, Options{Namespace: "op", Config: engine.Config{Partitions: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Config(); c.Partitions != 4 || c.Retention != engine.DefaultRetention || c.Limits != weir.DefaultLimits() {
		t.Fatalf("config %+v", c)
	}
	for _, o := range []Options{
		{Config: engine.Config{Partitions: -1}},
		{Config: engine.Config{Partitions: engine.MaxPartitions + 1}},
	} {
		if _, err := New(rdb, o); !errors.Is(err, weir.ErrInvalid) {
			t.Errorf("options %+v: %v, want ErrInvalid", o, err)
		}
	}
}
