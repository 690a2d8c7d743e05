package memstore

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/testclock"
)

// idsIn returns n IDs with prefix that land in partition p of parts.
func idsIn(prefix string, p, parts, n int) []string {
	var out []string
	for k := 0; len(out) < n; k++ {
		if id := prefix + strconv.Itoa(k); engine.Partition(id, parts) == p {
			out = append(out, id)
		}
	}
	return out
}

// TestPartitionedEvents: with partitions an event's ID names its
// partition, a page's Next is one cursor per partition, and paging with
// any limit returns every event once, in (time, partition, order).
func TestPartitionedEvents(t *testing.T) {
	const parts = 3
	ctx := context.Background()
	clk := testclock.New()
	s := New(WithConfig(engine.Config{Partitions: parts, Retention: time.Hour}), WithClock(clk.Now))
	var want []string // job@partition, in the merged order
	for i, p := range []int{2, 0, 2, 1, 0, 0} {
		id := idsIn("j"+strconv.Itoa(i)+"x", p, parts, 1)[0]
		if i != 1 && i != 4 { // two pairs share a millisecond
			clk.Advance(time.Millisecond)
		}
		enqueue(t, s, engine.JobSpec{ID: id, Queue: "q"})
		want = append(want, id)
	}
	// the merge orders the pairs of one millisecond by partition
	want[0], want[1] = want[1], want[0]
	want[3], want[4] = want[4], want[3]
	for limit := 1; limit <= 7; limit++ {
		var got []string
		after := ""
		for {
			pg, err := s.Events(ctx, engine.EventsParams{After: after, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(pg.Events) == 0 {
				if pg.Next != after {
					t.Fatalf("limit %d: an empty page moved the cursor %q to %q", limit, after, pg.Next)
				}
				break
			}
			if len(pg.Events) > limit || strings.Count(pg.Next, ",") != parts-1 {
				t.Fatalf("limit %d: %d events, next %q", limit, len(pg.Events), pg.Next)
			}
			for _, e := range pg.Events {
				p, _, ok := strings.Cut(e.ID, "|")
				if !ok || p != strconv.Itoa(engine.Partition(e.Job, parts)) {
					t.Fatalf("event %s of %s", e.ID, e.Job)
				}
				got = append(got, e.Job)
			}
			after = pg.Next
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("limit %d: events of %v, want %v", limit, got, want)
		}
	}
	for _, c := range []string{"1", "1,2", "1,2,3,4", "x,,", "-1,,"} {
		if _, err := s.Events(ctx, engine.EventsParams{After: c}); !errors.Is(err, weir.ErrInvalid) {
			t.Fatalf("cursor %q: %v", c, err)
		}
	}
	// a workflow filter reads the workflow's partition only
	if _, err := s.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "wf", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}}); err != nil {
		t.Fatal(err)
	}
	pg, err := s.Events(ctx, engine.EventsParams{Workflow: "wf"})
	if err != nil || len(pg.Events) != 2 || pg.Events[0].Workflow != "wf" {
		t.Fatalf("events of wf: %+v, %v", pg, err)
	}
	next := strings.Split(pg.Next, ",")
	for p, c := range next {
		if (c != "") != (p == engine.Partition("wf", parts)) {
			t.Fatalf("next %q after the events of wf (partition %d)", pg.Next, engine.Partition("wf", parts))
		}
	}
}

// TestPartitionedStore: a blocking claim wakes at a push into any
// partition; a schedule fires its tick's job; a partition count out of range fails
// every call.
func TestPartitionedStore(t *testing.T) {
	ctx := context.Background()
	s := New(WithConfig(engine.Config{Partitions: 4}))
	sleeps := watchSleeps(s, "Claim")
	res := goClaim(ctx, s, blockingClaim("q"))
	<-sleeps
	id := idsIn("j", 3, 4, 1)[0]
	enqueue(t, s, engine.JobSpec{ID: id, Queue: "q"})
	if r := <-res; r.err != nil || !reflect.DeepEqual(claimedIDs(r.claimed), []string{id}) {
		t.Fatalf("claim = %v, %v; want [%s]", claimedIDs(r.claimed), r.err, id)
	}
	// a schedule fires its tick's job under "<name>@<seconds>"
	sc, err := engine.PutSchedule(ctx, s, engine.ScheduleSpec{Name: "s", Every: time.Minute, Job: &engine.JobSpec{Queue: "q"}}, time.Now())
	if err != nil || sc.Partitions != 4 {
		t.Fatalf("put schedule: %+v, %v", sc, err)
	}
	fired, err := engine.FireDue(ctx, s, s, sc, sc.Next)
	if want := "s@" + strconv.FormatInt(sc.Next.Unix(), 10); err != nil || fired.Outcome != engine.FireFired || fired.ID != want {
		t.Fatalf("fire = %+v, %v; want %s fired", fired, err, want)
	}
	if _, err := s.GetJob(ctx, fired.ID); err != nil {
		t.Fatalf("the tick's job: %v", err)
	}
	if l, err := s.Schedules(ctx); err != nil || len(l.Schedules) != 1 || l.Schedules[0].LastID != fired.ID {
		t.Fatalf("schedules = %+v, %v", l, err)
	}
	bad := New(WithConfig(engine.Config{Partitions: engine.MaxPartitions + 1}))
	if _, err := bad.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q"}}); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("enqueue: %v", err)
	}
	if _, err := bad.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute}); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("claim: %v", err)
	}
	if _, err := bad.Events(ctx, engine.EventsParams{}); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("events: %v", err)
	}
}
