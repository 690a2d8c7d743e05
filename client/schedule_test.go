package client_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// PutSchedule takes a workflow builder (its plan, not fixed) or a job built
// by ScheduledJob, computes the first tick after Start, and the other calls
// reach the store.
func TestScheduleAPI(t *testing.T) {
	ctx := context.Background()
	c := client.New(memstore.New())
	start := time.Date(2030, 1, 1, 0, 0, 7, 0, time.UTC)
	wf := client.NewWorkflow(client.FailFast())
	client.AddTask(wf, "a", upper, "x")
	s, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "w", Every: time.Minute, Workflow: wf, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Next.Equal(start.Truncate(time.Minute).Add(time.Minute)) || !slices.Equal(s.Tasks, []string{"a"}) || s.Queue != "" ||
		s.Missed != weir.MissedSkip || s.Overlap != weir.OverlapAllow {
		t.Fatalf("workflow schedule %+v", s)
	}
	// the builder was only read: it can still be changed and submitted
	client.AddTask(wf, "b", upper, "y")
	if err := c.Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}

	if _, err := client.ScheduledJob(upper, "p", client.ID("x")); !errors.Is(err, weir.ErrInvalid) {
		t.Errorf("ScheduledJob with an ID: %v", err)
	}
	if _, err := client.ScheduledJob(upper, "p", client.Delay(time.Second)); !errors.Is(err, weir.ErrInvalid) {
		t.Errorf("ScheduledJob with a delay: %v", err)
	}
	job, err := client.ScheduledJob(upper, "p", client.MaxAttempts(3), client.Priority(-1))
	if err != nil {
		t.Fatalf("ScheduledJob: %v", err)
	}
	if s, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "jq", Every: time.Minute, Job: job, Overlap: weir.OverlapSkip, Start: start}); err != nil ||
		s.Queue != "upper" || s.Tasks != nil || s.Overlap != weir.OverlapSkip {
		t.Fatalf("job schedule %+v, %v", s, err)
	}
	if err := c.DeleteSchedule(ctx, "jq"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "w", Cron: "bad", Job: job}); !errors.Is(err, weir.ErrInvalid) {
		t.Errorf("bad cron: %v", err)
	}
	if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "j", Every: time.Minute, Job: job, Workflow: wf}); !errors.Is(err, weir.ErrInvalid) {
		t.Errorf("two targets: %v", err)
	}
	if err := c.PauseSchedule(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	list, err := c.Schedules(ctx)
	if err != nil || len(list) != 1 || !list[0].Paused {
		t.Fatalf("list %+v %v", list, err)
	}
	if err := c.ResumeSchedule(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteSchedule(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSchedule(ctx, "w"); !errors.Is(err, weir.ErrNotFound) {
		t.Errorf("after remove: %v", err)
	}

	// a store without schedules says so
	bare := client.New(struct{ engine.Store }{memstore.New()})
	if _, err := bare.Schedules(ctx); err == nil {
		t.Error("a store without schedules listed them")
	}
}

// A JSON payload is stored as the Go client stores the same value: a
// handler decodes it into its payload type, integers as integers.
func TestJSONPayload(t *testing.T) {
	type report struct {
		Kind  string   `json:"kind"`
		Days  int      `json:"days"`
		Ratio float64  `json:"ratio"`
		Tags  []string `json:"tags"`
	}
	q := client.NewQueue[report, string]("reports")
	b, err := client.JSONPayload([]byte(`{"kind":"sales","days":7,"ratio":0.5,"tags":["a","b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := q.DecodePayload(b)
	if err != nil || r.Kind != "sales" || r.Days != 7 || r.Ratio != 0.5 || len(r.Tags) != 2 {
		t.Fatalf("decoded %+v, %v", r, err)
	}
	for _, bad := range []string{"", "{", "1 2", `{"a":}`} {
		if _, err := client.JSONPayload([]byte(bad)); !errors.Is(err, weir.ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A scheduled workflow takes its ID from its tick: WorkflowID is refused,
// not ignored; its other options (DeadlineIn, Webhook) are each tick's, as
// a workflow file's are, not dropped.
func TestScheduledWorkflowOptions(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	c := client.New(st)
	wf := client.NewWorkflow(client.WorkflowID("nightly"))
	client.AddTask(wf, "a", upper, "x")
	if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "w", Every: time.Minute, Workflow: wf}); !errors.Is(err, weir.ErrInvalid) ||
		!strings.Contains(err.Error(), "leave out WorkflowID") {
		t.Errorf("a scheduled workflow with WorkflowID: %v, want weir.ErrInvalid", err)
	}
	wf = client.NewWorkflow(client.DeadlineIn(time.Hour), client.Webhook("https://example.com/hook", ""))
	client.AddTask(wf, "a", upper, "x")
	if _, err := c.PutSchedule(ctx, client.ScheduleParams{Name: "w", Every: time.Minute, Workflow: wf}); err != nil {
		t.Fatal(err)
	}
	s, err := st.GetSchedule(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Plan; p == nil || p.DeadlineIn != time.Hour || p.Webhook == nil || p.Webhook.URL != "https://example.com/hook" {
		t.Errorf("stored plan %+v: the deadline and the webhook were dropped", p)
	}
}
