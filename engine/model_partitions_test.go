package engine

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// partP is the partition count of the partition tests.
const partP = 4

func partModel() *Partitioned { return NewPartitioned(Config{Partitions: partP, Retention: time.Hour}) }

// partIDs returns n IDs with prefix that land in partition p of partP.
func partIDs(prefix string, p, n int) []string {
	var out []string
	for k := 0; len(out) < n; k++ {
		if id := prefix + strconv.Itoa(k); Partition(id, partP) == p {
			out = append(out, id)
		}
	}
	return out
}

func partEnqueue(t *testing.T, m Namespace, now time.Time, s JobSpec) {
	t.Helper()
	if _, err := m.Enqueue(now, EnqueueParams{Job: s}); err != nil {
		t.Fatalf("enqueue %s: %v", s.ID, err)
	}
}

func partClaim(t *testing.T, m Namespace, now time.Time, max int, queues ...string) []string {
	t.Helper()
	cs, err := m.Claim(now, ClaimParams{Queues: queues, Max: max, Lease: time.Minute})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	ids := []string{}
	for _, c := range cs {
		ids = append(ids, c.Job.ID)
	}
	return ids
}

// TestPartitionsOneIsToday: a namespace of 0 or 1 partitions is a Model,
// its own partition; one of more a Partitioned of that many Models.
func TestPartitionsOneIsToday(t *testing.T) {
	for _, n := range []int{0, 1} {
		m, ok := NewNamespace(Config{Partitions: n}).(*Model)
		if !ok || m.Parts() != 1 || m.Part(0) != m {
			t.Fatalf("partitions %d: a %T", n, NewNamespace(Config{Partitions: n}))
		}
	}
	if _, ok := NewNamespace(Config{Partitions: partP}).(*Partitioned); !ok {
		t.Fatalf("partitions %d: a %T", partP, NewNamespace(Config{Partitions: partP}))
	}
	m := partModel()
	if m.Parts() != partP || m.Part(2) == m.Part(1) || m.Part(2).Parts() != 1 {
		t.Fatalf("partitions %d: Parts %d", partP, m.Parts())
	}
}

// TestPartitionsConstructors: a Model of more than one partition and a
// Partitioned of fewer than two are refused, each naming what to use.
func TestPartitionsConstructors(t *testing.T) {
	for _, c := range []struct {
		name string
		make func()
		want string
	}{
		{"NewModel", func() { NewModel(Config{Partitions: 2}) }, "NewNamespace"},
		{"NewPartitioned", func() { NewPartitioned(Config{Partitions: 1}) }, "NewNamespace"},
		{"NewPartitioned zero", func() { NewPartitioned(Config{}) }, "NewNamespace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Fatalf("recovered %v, want a panic naming %s", r, c.want)
				}
			}()
			c.make()
		})
	}
	if p := NewPartitioned(Config{Partitions: MaxPartitions + 5}); p.Parts() != MaxPartitions || p.Part(7).idParts != MaxPartitions {
		t.Fatalf("%d partitions, want MaxPartitions", p.Parts())
	}
}

// TestPartitionsPlacement: a workflow, its task and undo jobs live in the
// partition of its ID, a plain job in that of its own; the claims of a
// workflow's tasks come from its partition whichever partition a claim
// starts at.
func TestPartitionsPlacement(t *testing.T) {
	m := partModel()
	now := rtT0
	for p := range partP {
		wf := partIDs("w", p, 1)[0]
		plan := Plan{ID: wf, Tasks: []TaskSpec{
			{Name: "a", Queue: "q", Undo: &UndoSpec{Queue: "u"}},
			{Name: "b", Queue: "q", After: []string{"a"}},
		}}
		if _, err := m.Submit(now, SubmitParams{Plan: plan}); err != nil {
			t.Fatal(err)
		}
		for q := range partP {
			_, err := m.Part(q).GetWorkflow(now, wf)
			if (q == p) != (err == nil) {
				t.Fatalf("workflow %s (partition %d) in partition %d: %v", wf, p, q, err)
			}
			_, err = m.Part(q).GetJob(now, weir.TaskJobID(wf, "b"))
			if (q == p) != (err == nil) {
				t.Fatalf("task %s/b (partition %d) in partition %d: %v", wf, p, q, err)
			}
		}
	}
	// every claim of one job takes the root task of the partition it
	// starts at (each partition holds one): claim c starts at c mod P
	for c := range partP {
		ids := partClaim(t, m, now, 1, "q")
		if len(ids) != 1 || !strings.HasSuffix(ids[0], "/a") || Partition(ids[0], partP) != c%partP {
			t.Fatalf("claim %d: %v, want the task a of partition %d", c, ids, c%partP)
		}
		// its dependent b is pushed in the same partition when a ends
		wf := RoutingID(ids[0])
		lease := m.Part(c % partP).jobs[ids[0]].token
		res, err := m.Finish(now, FinishParams{Outcomes: []Outcome{{JobID: ids[0], Token: lease, Kind: OutcomeCompleted}}})
		if err != nil || len(res.Settled) != 1 || len(res.Settled[0].Pushed) != 1 || res.Settled[0].Pushed[0].JobID != weir.TaskJobID(wf, "b") {
			t.Fatalf("finish %s: %+v, %v", ids[0], res, err)
		}
		if got := m.Part(c%partP).QueueContents(now, "q").Ready; !slices.Equal(got, []string{weir.TaskJobID(wf, "b")}) {
			t.Fatalf("partition %d ready %v", c%partP, got)
		}
	}
	// a plain job lands by its own ID
	for _, id := range []string{"j1", "j2", "j3", "j4", "j5"} {
		partEnqueue(t, m, now, JobSpec{ID: id, Queue: "p"})
		if _, err := m.Part(Partition(id, partP)).GetJob(now, id); err != nil {
			t.Fatalf("job %s not in partition %d: %v", id, Partition(id, partP), err)
		}
	}
}

// TestPartitionsClaimRotation: claim c visits partitions c mod P, c+1, ...
// each once, taking what is still missing from Max; P successive claims
// of one job take one from each partition, however the priorities stand:
// no partition starves.
func TestPartitionsClaimRotation(t *testing.T) {
	m := partModel()
	now := rtT0
	// partition 0: ten urgent jobs; every other: two of priority -1
	for _, id := range partIDs("hi", 0, 10) {
		partEnqueue(t, m, now, JobSpec{ID: id, Queue: "q", Priority: 9})
	}
	for p := 1; p < partP; p++ {
		for _, id := range partIDs("lo", p, 2) {
			partEnqueue(t, m, now, JobSpec{ID: id, Queue: "q", Priority: -1})
		}
	}
	seen := map[int]int{}
	for c := range partP {
		ids := partClaim(t, m, now, 1, "q")
		if len(ids) != 1 || Partition(ids[0], partP) != c {
			t.Fatalf("claim %d took %v, want one job of partition %d", c, ids, c)
		}
		seen[Partition(ids[0], partP)]++
	}
	if len(seen) != partP {
		t.Fatalf("%d partitions visited first in %d claims: %v", len(seen), partP, seen)
	}
	// claim 4 starts at partition 0 again; claim 5 at partition 1, which
	// holds one job: the other two come from partition 2 (its one left)
	// and 3 (its one left), none from 0 though it has more
	if ids := partClaim(t, m, now, 1, "q"); len(ids) != 1 || Partition(ids[0], partP) != 0 {
		t.Fatalf("claim 4: %v", ids)
	}
	ids := partClaim(t, m, now, 3, "q")
	var parts []int
	for _, id := range ids {
		parts = append(parts, Partition(id, partP))
	}
	if !slices.Equal(parts, []int{1, 2, 3}) {
		t.Fatalf("claim 5 of 3: %v from partitions %v, want one each of 1, 2, 3", ids, parts)
	}
	// claim 6 starts at 2, empty now: it goes on to 3 (empty) and 0
	if ids := partClaim(t, m, now, 2, "q"); len(ids) != 2 || Partition(ids[0], partP) != 0 || Partition(ids[1], partP) != 0 {
		t.Fatalf("claim 6: %v, want two of partition 0", ids)
	}
	// an invalid claim fails before any partition, and takes no turn
	if _, err := m.Claim(now, ClaimParams{Queues: []string{"q"}, Max: 0, Lease: time.Minute}); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("claim of 0: %v", err)
	}
	if m.claims != 7 {
		t.Fatalf("%d claims counted, want 7", m.claims)
	}
}

// TestPartitionsListWorkflows: the merged list is the one a single
// partition would give, page for page, cursors included.
func TestPartitionsListWorkflows(t *testing.T) {
	m, one := partModel(), NewModel(Config{Retention: time.Hour})
	now := rtT0
	for i := range 13 {
		id := fmt.Sprintf("w%02d", i)
		if i%3 == 0 {
			now = now.Add(time.Millisecond) // several share a creation time
		}
		for _, x := range []Namespace{m, one} {
			if _, err := x.Submit(now, SubmitParams{Plan: Plan{ID: id, Tasks: []TaskSpec{{Name: "a", Queue: "q"}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if used := map[int]bool{}; true {
		for i := range 13 {
			used[Partition(fmt.Sprintf("w%02d", i), partP)] = true
		}
		if len(used) < 3 {
			t.Fatalf("the workflows land in %d partitions only", len(used))
		}
	}
	for _, limit := range []int{1, 2, 5, 13, 20} {
		p := weir.ListParams{Limit: limit}
		var all []string
		for pages := 0; ; pages++ {
			got, err := m.ListWorkflows(now, p)
			want, werr := one.ListWorkflows(now, p)
			if err != nil || werr != nil {
				t.Fatal(err, werr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("limit %d page %d:\n got %+v\nwant %+v", limit, pages, got, want)
			}
			for _, w := range got.Workflows {
				all = append(all, w.ID)
			}
			if got.NextCursor == "" {
				break
			}
			p.Cursor = got.NextCursor
		}
		if len(all) != 13 || all[0] != "w12" || all[12] != "w00" {
			t.Fatalf("limit %d: listed %v", limit, all)
		}
	}
	// a page that one partition fills while it holds more has a cursor
	m2 := partModel()
	for _, id := range partIDs("v", 2, 2) {
		if _, err := m2.Submit(now, SubmitParams{Plan: Plan{ID: id, Tasks: []TaskSpec{{Name: "a", Queue: "q"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	pg, err := m2.ListWorkflows(now, weir.ListParams{Limit: 1})
	if err != nil || len(pg.Workflows) != 1 || pg.NextCursor == "" {
		t.Fatalf("first page of one partition's two: %+v, %v", pg, err)
	}
	if pg, err = m2.ListWorkflows(now, weir.ListParams{Limit: 1, Cursor: pg.NextCursor}); err != nil || len(pg.Workflows) != 1 || pg.NextCursor != "" {
		t.Fatalf("second page: %+v, %v", pg, err)
	}
	if _, err := m.ListWorkflows(now, weir.ListParams{Cursor: "nope"}); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("bad cursor: %v", err)
	}
}

// TestPartitionsListJobs: partitions in order, each in its own order; the
// cursor names the partition; Next is empty exactly at the end.
func TestPartitionsListJobs(t *testing.T) {
	m := partModel()
	now := rtT0
	// partition 0: 3 jobs, 1: none, 2: 1, 3: 2
	var want []string
	for p, n := range []int{3, 0, 1, 2} {
		for _, id := range partIDs("j", p, n) {
			now = now.Add(time.Millisecond)
			partEnqueue(t, m, now, JobSpec{ID: id, Queue: "q"})
			want = append(want, id)
		}
	}
	for limit := 1; limit <= 7; limit++ {
		p := weir.ListJobsParams{Queue: "q", State: weir.ListReady, Limit: limit}
		var got, cursors []string
		for {
			pg, err := m.ListJobs(now, p)
			if err != nil {
				t.Fatalf("limit %d cursor %q: %v", limit, p.Cursor, err)
			}
			if len(pg.Jobs) == 0 {
				t.Fatalf("limit %d: an empty page after cursor %q", limit, p.Cursor)
			}
			for _, j := range pg.Jobs {
				got = append(got, j.ID)
			}
			if pg.NextCursor == "" {
				break
			}
			if part, _, ok := strings.Cut(pg.NextCursor, "|"); !ok || part == "1" {
				t.Fatalf("limit %d: cursor %q", limit, pg.NextCursor)
			}
			cursors = append(cursors, pg.NextCursor)
			p.Cursor = pg.NextCursor
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: listed %v (cursors %v), want %v", limit, got, cursors, want)
		}
	}
	// a page ending with partition 0's last job points at partition 2
	if pg, err := m.ListJobs(now, weir.ListJobsParams{Queue: "q", State: weir.ListReady, Limit: 3}); err != nil || pg.NextCursor != "2|" {
		t.Fatalf("page of 3: next %q, %v", pg.NextCursor, err)
	}
	for _, c := range []string{"4|", "-1|", "x|", "01|", "0", "0|nope", "|"} {
		if _, err := m.ListJobs(now, weir.ListJobsParams{Queue: "q", State: weir.ListReady, Cursor: c}); !errors.Is(err, weir.ErrInvalid) {
			t.Fatalf("cursor %q: %v, want ErrInvalid", c, err)
		}
	}
	if pg, err := m.ListJobs(now, weir.ListJobsParams{Queue: "q", State: weir.ListReady, Cursor: "3|"}); err != nil || len(pg.Jobs) != 2 || pg.NextCursor != "" {
		t.Fatalf("from partition 3: %+v, %v", pg, err)
	}
}

// TestPartitionsQueues: one entry per queue, counts summed; the contents
// are the partitions' lists in partition order.
func TestPartitionsQueues(t *testing.T) {
	m, one := partModel(), NewModel(Config{Retention: time.Hour})
	now := rtT0
	for i := range 12 {
		s := JobSpec{ID: "j" + strconv.Itoa(i), Queue: "q" + strconv.Itoa(i%2)}
		if i%3 == 0 {
			s.RunAt = now.Add(time.Minute)
		}
		partEnqueue(t, m, now, s)
		partEnqueue(t, one, now, s)
	}
	partClaim(t, m, now, 3, "q0")
	partClaim(t, one, now, 3, "q0")
	if got, want := m.Queues(now), one.Queues(now); !reflect.DeepEqual(got, want) {
		t.Fatalf("queues\n got %+v\nwant %+v", got, want)
	}
	var want QueueContents
	for p := range partP {
		c := m.Part(p).QueueContents(now, "q1")
		want.Ready = append(want.Ready, c.Ready...)
		want.Delayed = append(want.Delayed, c.Delayed...)
		want.Running = append(want.Running, c.Running...)
	}
	if got := m.QueueContents(now, "q1"); !reflect.DeepEqual(got, want) || len(got.Ready)+len(got.Delayed) != 6 {
		t.Fatalf("contents %+v, want %+v", got, want)
	}
	if got := m.QueueContents(now, "none"); !reflect.DeepEqual(got, QueueContents{}) {
		t.Fatalf("contents of an unknown queue: %+v", got)
	}
}

// TestPartitionsQueueSettings: a pause, a limit reach every partition; an
// invalid one writes to none.
func TestPartitionsQueueSettings(t *testing.T) {
	m := partModel()
	now := rtT0
	for p := range partP {
		for _, id := range partIDs("j", p, 2) {
			partEnqueue(t, m, now, JobSpec{ID: id, Queue: "q"})
		}
	}
	if err := m.PauseQueue(now, "q"); err != nil {
		t.Fatal(err)
	}
	for range partP {
		if ids := partClaim(t, m, now, 3, "q"); len(ids) != 0 {
			t.Fatalf("claimed %v from a paused queue", ids)
		}
	}
	if qs := m.Queues(now); len(qs) != 1 || !qs[0].Paused || qs[0].Ready != 2*partP {
		t.Fatalf("queues %+v", qs)
	}
	for p := range partP {
		if qs := m.Part(p).Queues(now); len(qs) != 1 || !qs[0].Paused {
			t.Fatalf("partition %d: %+v", p, qs)
		}
	}
	if err := m.ResumeQueue(now, "q"); err != nil {
		t.Fatal(err)
	}
	if err := m.LimitQueue(now, LimitQueueParams{Queue: "q", Concurrency: 1}); err != nil {
		t.Fatal(err)
	}
	// a limit of 1 holds per partition: P run at once
	if ids := partClaim(t, m, now, 3, "q"); len(ids) != 3 {
		t.Fatalf("claimed %v", ids)
	}
	if ids := partClaim(t, m, now, 3, "q"); len(ids) != 1 {
		t.Fatalf("claimed %v, want the last partition's one", ids)
	}
	if ids := partClaim(t, m, now, 3, "q"); len(ids) != 0 {
		t.Fatalf("claimed %v over the limits", ids)
	}
	for _, err := range []error{
		m.PauseQueue(now, "bad name"),
		m.LimitQueue(now, LimitQueueParams{Queue: "r", Concurrency: -1}),
		m.RateLimitQueue(now, RateLimitQueueParams{Queue: "r", Limit: 1}),
		m.LimitKeys(now, LimitKeysParams{Queue: "r", Concurrency: MaxConcurrency + 1}),
	} {
		if !errors.Is(err, weir.ErrInvalid) {
			t.Fatalf("invalid setting: %v", err)
		}
	}
	if _, err := m.PurgeQueue(now, "bad name"); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("purge: %v", err)
	}
	if _, err := m.ExpireLeases(now, ExpireParams{Max: -1}); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("expire: %v", err)
	}
	for p := range partP {
		if qs := m.Part(p).Queues(now); len(qs) != 1 {
			t.Fatalf("partition %d knows %+v after refusals", p, qs)
		}
	}
	// a purge takes every partition's waiting jobs, in partition order
	res, err := m.PurgeQueue(now, "q")
	if err != nil || len(res.Purged) != 2*partP-4 {
		t.Fatalf("purge: %+v, %v", res, err)
	}
	for i := 1; i < len(res.Purged); i++ {
		if Partition(res.Purged[i-1], partP) > Partition(res.Purged[i], partP) {
			t.Fatalf("purged out of partition order: %v", res.Purged)
		}
	}
}

// TestPartitionsSchedules: a schedule lives in the partition of its name,
// with its tick's job or workflow ("<name>@<seconds>"); the list merges
// every partition's by name; MaxSchedules holds per partition.
func TestPartitionsSchedules(t *testing.T) {
	m := partModel()
	now := rtT0
	names := map[int]string{}
	for p := range partP {
		names[p] = partIDs("s", p, 1)[0]
	}
	for p := partP - 1; p >= 0; p-- {
		spec := ScheduleSpec{Name: names[p], Every: time.Minute, Job: &JobSpec{Queue: "q"}}
		if _, err := m.PutSchedule(now, PutScheduleParams{Spec: spec, Next: now.Add(time.Minute)}); err != nil {
			t.Fatalf("put %s: %v", names[p], err)
		}
	}
	for p := range partP {
		for q := range partP {
			_, err := m.Part(q).GetSchedule(now, names[p])
			if (err == nil) != (p == q) {
				t.Fatalf("schedule %s (partition %d) in partition %d: %v", names[p], p, q, err)
			}
		}
	}
	l := m.Schedules(now)
	if len(l.Schedules) != partP || !slices.IsSortedFunc(l.Schedules, func(a, b Schedule) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatalf("schedules %+v", l.Schedules)
	}
	if !l.Now.Equal(m.Now()) || l.Schedules[0].Partitions != partP {
		t.Fatalf("list at %v (model at %v), partitions %d", l.Now, m.Now(), l.Schedules[0].Partitions)
	}
	// a fire: the tick's job in the schedule's partition, under <name>@<s>
	sc, err := m.GetSchedule(now, names[2])
	if err != nil {
		t.Fatal(err)
	}
	fp, due, err := PlanFire(sc, sc.Next)
	if err != nil || !due {
		t.Fatalf("plan: %v %v", due, err)
	}
	wantID := names[2] + "@" + strconv.FormatInt(sc.Next.Unix(), 10)
	if fp.Job.ID != wantID || Partition(wantID, partP) != 2 || !ValidID(wantID) {
		t.Fatalf("tick job %q, want %q in partition 2", fp.Job.ID, wantID)
	}
	res, err := m.FireSchedule(sc.Next, fp)
	if err != nil || res.Outcome != FireFired || res.ID != wantID {
		t.Fatalf("fire: %+v, %v", res, err)
	}
	if _, err := m.Part(2).GetJob(sc.Next, wantID); err != nil {
		t.Fatalf("the tick's job in partition 2: %v", err)
	}
	// the one-partition form of the tick's ID is refused
	bad := fp
	bad.Tick, bad.Fire, bad.Next = fp.Next, fp.Next, fp.Next.Add(time.Minute)
	j := *fp.Job
	j.ID = TickID(names[2], bad.Fire)
	bad.Job = &j
	if _, err := m.FireSchedule(bad.Fire, bad); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("a fire naming %s: %v", j.ID, err)
	}
	for _, err := range []error{m.PauseSchedule(now, names[1], true), m.DeleteSchedule(now, names[3])} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if s, err := m.Part(1).GetSchedule(now, names[1]); err != nil || !s.Paused {
		t.Fatalf("paused in its partition: %+v, %v", s, err)
	}
	if _, err := m.Part(3).GetSchedule(now, names[3]); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("deleted in its partition: %v", err)
	}
	// MaxSchedules per partition: partition 0 full, partition 1 not
	for _, n := range partIDs("fill", 0, MaxSchedules-1) {
		if _, err := m.PutSchedule(now, PutScheduleParams{Spec: ScheduleSpec{Name: n, Every: time.Minute, Job: &JobSpec{Queue: "q"}}, Next: now.Add(time.Minute)}); err != nil {
			t.Fatalf("put %s: %v", n, err)
		}
	}
	more := func(p int) error {
		_, err := m.PutSchedule(now, PutScheduleParams{Spec: ScheduleSpec{Name: partIDs("more", p, 1)[0], Every: time.Minute, Job: &JobSpec{Queue: "q"}}, Next: now.Add(time.Minute)})
		return err
	}
	if err := more(0); !errors.Is(err, weir.ErrInvalid) || !strings.Contains(err.Error(), "partition holds at most 1000") {
		t.Fatalf("a schedule past the limit of its partition: %v", err)
	}
	if err := more(1); err != nil {
		t.Fatalf("a schedule in a partition under the limit: %v", err)
	}
	if l := m.Schedules(now); len(l.Schedules) != MaxSchedules+partP-1 { // 4 put, 1 deleted, 999 filled, 1 more
		t.Fatalf("%d schedules listed", len(l.Schedules))
	}
}

// TestPartitionsEventsAndClocks: events merge by time, then partition;
// each partition keeps its own clock (a claim visits only the partitions
// it needs).
func TestPartitionsEventsAndClocks(t *testing.T) {
	m := partModel()
	a, b, x := partIDs("a", 3, 1)[0], partIDs("b", 1, 1)[0], partIDs("x", 2, 1)[0]
	partEnqueue(t, m, rtAt(5*time.Millisecond), JobSpec{ID: a, Queue: "q"})
	partEnqueue(t, m, rtAt(5*time.Millisecond), JobSpec{ID: b, Queue: "q"})
	partEnqueue(t, m, rtAt(9*time.Millisecond), JobSpec{ID: x, Queue: "r"})
	es := m.TakeEvents()
	var got []string
	for _, e := range es {
		got = append(got, e.Job+"@"+strconv.FormatInt(e.Time.Sub(rtT0).Milliseconds(), 10))
	}
	want := []string{b + "@5", a + "@5", x + "@9"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if !m.Now().Equal(rtAt(9*time.Millisecond)) || !m.Part(1).Now().Equal(rtAt(5*time.Millisecond)) || !m.Part(0).Now().IsZero() {
		t.Fatalf("clocks: model %v, partition 1 %v, partition 0 %v", m.Now(), m.Part(1).Now(), m.Part(0).Now())
	}
	// claim 0 starts at partition 0 and finds b in partition 1: 2 and 3
	// are not visited, their clocks stay
	if ids := partClaim(t, m, rtAt(20*time.Millisecond), 1, "q"); !slices.Equal(ids, []string{b}) {
		t.Fatalf("claimed %v", ids)
	}
	if !m.Part(0).Now().Equal(rtAt(20*time.Millisecond)) || !m.Part(3).Now().Equal(rtAt(5*time.Millisecond)) ||
		!m.Part(2).Now().Equal(rtAt(9*time.Millisecond)) {
		t.Fatalf("clocks after the claim: 0 %v, 2 %v, 3 %v", m.Part(0).Now(), m.Part(2).Now(), m.Part(3).Now())
	}
	if due := m.NextDue([]string{"q"}); !due.Equal(rtAt(20*time.Millisecond + time.Minute)) {
		t.Fatalf("next due %v", due)
	}
}

// TestPartitionsHeartbeatAndFinish: each lease goes to the partition of
// its job, the replies in the order asked; a finish's claim runs in the
// partition of its first outcome.
func TestPartitionsHeartbeatAndFinish(t *testing.T) {
	m := partModel()
	now := rtT0
	var jobs []string
	for p := range partP {
		jobs = append(jobs, partIDs("j", p, 2)...)
		for _, id := range partIDs("j", p, 2) {
			partEnqueue(t, m, now, JobSpec{ID: id, Queue: "q"})
		}
	}
	var leases []LeaseRef
	for range partP {
		cs, err := m.Claim(now, ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatal(cs, err)
		}
		leases = append(leases, LeaseRef{JobID: cs[0].Job.ID, Token: cs[0].Lease.Token})
	}
	slices.Reverse(leases)
	asked := append(slices.Clone(leases), LeaseRef{JobID: "nope", Token: "1"})
	st, err := m.Heartbeat(now, HeartbeatParams{Leases: asked[:3], Extend: time.Minute})
	if err != nil || len(st) != 3 {
		t.Fatal(st, err)
	}
	for i, s := range st {
		if s.JobID != asked[i].JobID || s.Lost {
			t.Fatalf("status %d: %+v for %s", i, s, asked[i].JobID)
		}
	}
	if st, err := m.Heartbeat(now, HeartbeatParams{Leases: asked[3:], Extend: time.Minute}); err != nil || !st[1].Lost || st[0].Lost {
		t.Fatalf("statuses %+v, %v", st, err)
	}
	// outcomes of partitions 3 and 1, then a claim of 3: from partition 3
	// only (its other job), though others hold ready jobs
	outs := []Outcome{
		{JobID: leases[0].JobID, Token: leases[0].Token, Kind: OutcomeCompleted},
		{JobID: leases[2].JobID, Token: leases[2].Token, Kind: OutcomeCompleted},
		{JobID: "nope", Token: "1", Kind: OutcomeCompleted},
	}
	res, err := m.Finish(now, FinishParams{Outcomes: outs, Claim: &ClaimParams{Queues: []string{"q"}, Max: 3, Lease: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range res.Settled {
		if s.JobID != outs[i].JobID || (s.Err != nil) != (i == 2) {
			t.Fatalf("settled %d: %+v", i, s)
		}
	}
	p0 := Partition(leases[0].JobID, partP)
	if len(res.Claimed) != 1 || Partition(res.Claimed[0].Job.ID, partP) != p0 {
		t.Fatalf("finish claimed %+v, want the other job of partition %d", res.Claimed, p0)
	}
	// a finish of no outcome is a claim call of its own, in rotation
	before := m.claims
	res, err = m.Finish(now, FinishParams{Claim: &ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute}})
	if err != nil || len(res.Claimed) != 1 || m.claims != before+1 || res.Settled == nil {
		t.Fatalf("claim-only finish: %+v, %v (claims %d)", res, err, m.claims)
	}
	if len(jobs) != 2*partP {
		t.Fatal(jobs)
	}
}
