package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// TestEventsReadBack: a plain job's life as its events, read back in
// pages from any cursor (an event's ID, an entry in the middle), and the
// workflow filter.
func TestEventsReadBack(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j", Queue: "q", MaxAttempts: 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{{Name: "a", Queue: "wq"}, {Name: "b", Queue: "wq"}}}}); err != nil {
		t.Fatal(err)
	}
	claimOne := func(q string) engine.Claimed {
		t.Helper()
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Minute})
		if err != nil || len(c) != 1 {
			t.Fatalf("claim: %v, %d jobs", err, len(c))
		}
		return c[0]
	}
	c := claimOne("q")
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "j", Token: c.Lease.Token, Kind: engine.OutcomeFailed, Error: "boom\nnow ü"}}}); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Minute)
	c = claimOne("q")
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "j", Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	// a repeat changes nothing and writes no event
	if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "j", Token: c.Lease.Token, Kind: engine.OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	all, err := s.Events(bg, engine.EventsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range all.Events {
		got = append(got, fmt.Sprintf("%s %s %s %d %q", ev.Type, ev.Workflow, ev.Job, ev.Attempt, ev.Reason))
	}
	want := []string{
		`queued  j 0 ""`,
		`workflow_submitted w  0 ""`, `queued w w/a 0 ""`, `queued w w/b 0 ""`,
		`started  j 1 ""`,
		`retried  j 1 "boom\nnow ü"`,
		`started  j 2 ""`,
		`completed  j 2 ""`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events:\n%q\nwant\n%q", got, want)
	}
	if all.Next != all.Events[len(all.Events)-1].ID {
		t.Errorf("next %q, last event %q", all.Next, all.Events[len(all.Events)-1].ID)
	}
	// from every cursor, the rest; in pages of 3
	for i, ev := range all.Events {
		var rest []weir.Event
		after := ev.ID
		for {
			p, err := s.Events(bg, engine.EventsParams{After: after, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Events) == 0 {
				break
			}
			rest = append(rest, p.Events...)
			after = p.Next
		}
		if fmt.Sprint(rest) != fmt.Sprint(all.Events[i+1:]) {
			t.Errorf("after %s: %v, want %v", ev.ID, rest, all.Events[i+1:])
		}
	}
	w, err := s.Events(bg, engine.EventsParams{Workflow: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Events) != 3 || w.Events[0].Type != weir.EventWorkflowSubmitted || w.Events[2].Task != "b" || w.Next != all.Next {
		t.Errorf("workflow w: %+v, next %q", w.Events, w.Next)
	}
	for _, bad := range []string{"x", "1-x", "1-2.0", "1-2.y", "-1"} {
		if _, err := s.Events(bg, engine.EventsParams{After: bad}); !errors.Is(err, weir.ErrInvalid) {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
	if _, err := s.Events(bg, engine.EventsParams{Limit: engine.MaxEventsLimit + 1}); !errors.Is(err, weir.ErrInvalid) {
		t.Errorf("limit: %v", err)
	}
}

// TestEventsOffAndCap: a namespace whose events are off writes none
// (and its setting is read back); on again, they come; a length cap
// keeps the stream near it.
func TestEventsOffAndCap(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	enqueue := func(id string) {
		t.Helper()
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := s.EventsConfig(bg); err != nil || c != (EventsConfig{MaxLen: DefaultEventsMaxLen}) {
		t.Fatalf("default config %+v, %v", c, err)
	}
	if err := s.SetEventsOff(bg, true); err != nil {
		t.Fatal(err)
	}
	if c, err := s.EventsConfig(bg); err != nil || !c.Off {
		t.Fatalf("config %+v, %v", c, err)
	}
	enqueue("off")
	if n := e.rdb.XLen(bg, s.eventsKey()).Val(); n != 0 {
		t.Fatalf("%d entries while off", n)
	}
	if err := s.SetEventsOff(bg, false); err != nil {
		t.Fatal(err)
	}
	enqueue("on")
	p, err := s.Events(bg, engine.EventsParams{})
	if err != nil || len(p.Events) != 1 || p.Events[0].Job != "on" {
		t.Fatalf("after on: %+v, %v", p, err)
	}
	if err := s.SetEvents(bg, EventsConfig{MaxLen: 10, MaxAge: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if c, err := s.EventsConfig(bg); err != nil || c != (EventsConfig{MaxLen: 10, MaxAge: time.Hour}) {
		t.Fatalf("config %+v, %v", c, err)
	}
	for i := range 400 {
		enqueue(fmt.Sprint("c", i))
	}
	// MAXLEN ~ trims whole macro nodes (100 entries by default)
	if n := e.rdb.XLen(bg, s.eventsKey()).Val(); n > 200 {
		t.Fatalf("%d entries with a cap of about 10", n)
	}
	if err := s.SetEvents(bg, EventsConfig{MaxLen: -1}); !errors.Is(err, weir.ErrInvalid) {
		t.Errorf("negative cap: %v", err)
	}
}

// TestEventsWait: a read with Wait blocks until a transition writes an
// event, and returns at once with none when the wait passes.
func TestEventsWait(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	s := e.store
	p, err := s.Events(bg, engine.EventsParams{Wait: 50 * time.Millisecond})
	if err != nil || len(p.Events) != 0 {
		t.Fatalf("empty wait: %+v, %v", p, err)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		_, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "late", Queue: "q"}})
		done <- err
	}()
	start := time.Now()
	p, err = s.Events(bg, engine.EventsParams{After: p.Next, Wait: 5 * time.Second})
	if err != nil || len(p.Events) != 1 || p.Events[0].Job != "late" {
		t.Fatalf("wait: %+v, %v", p, err)
	}
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("woke after %v", el)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestDecodeEntry: an entry's events, reasons with any bytes, workers;
// malformed entries are protocol errors.
func TestDecodeEntry(t *testing.T) {
	m := redis.XMessage{ID: "5-1", Values: map[string]any{"t": "1000", "e": "queued j 0 0 \nfailed w/t 2 6 a b\nc \nworkflow_ended w 0 9 completed"}}
	evs, err := decodeEntry(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[1].Reason != "a b\nc " || evs[1].Task != "t" || evs[1].Attempt != 2 || evs[2].Workflow != "w" || evs[2].ID != "5-1.3" || !evs[0].Time.Equal(time.UnixMilli(1000)) {
		t.Fatalf("%+v", evs)
	}
	// an attempt's event names its worker after its reason (an entry
	// written before workers were recorded names none)
	m = redis.XMessage{ID: "5-2", Values: map[string]any{"t": "1000", "e": "started j 1 0  host-a.1\nretried j 1 3 x\ny w-2\ncompleted j 2 0 "}}
	evs, err = decodeEntry(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[0].Worker != "host-a.1" || evs[0].Reason != "" || evs[1].Worker != "w-2" || evs[1].Reason != "x\ny" ||
		evs[2].Worker != "" || evs[2].Type != weir.EventCompleted {
		t.Fatalf("%+v", evs)
	}
	for _, e := range []string{"queued j 0", "queued j 0 5 abc", "queued j x 0 ", "queued j 0 0 queued", "queued j 0 0 xqueued j 0 0 ", "started j 1 0  ", "started j 1 0  \nqueued j 0 0 "} {
		if _, err := decodeEntry(redis.XMessage{ID: "5-1", Values: map[string]any{"t": "1", "e": e}}); !errors.Is(err, weir.ErrProtocol) {
			t.Errorf("%q: %v", e, err)
		}
	}
	if _, err := decodeEntry(redis.XMessage{ID: "5-1", Values: map[string]any{"e": ""}}); !errors.Is(err, weir.ErrProtocol) {
		t.Errorf("no time: %v", err)
	}
}

// xreadHook tells blocked when the client sends an XREAD: the read is
// under way, past go-redis's own check of its context.
type xreadHook struct{ blocked chan<- struct{} }

func (xreadHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h xreadHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "xread" {
			select {
			case h.blocked <- struct{}{}:
			default:
			}
		}
		return next(ctx, cmd)
	}
}
func (xreadHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestEventsWaitCancelled: a read blocked in its wait returns its
// context's error once the context is cancelled (engine.EventReader),
// rather than at the end of its wait: go-redis does not end a command
// sent when its context ends, so the store wakes its own XREAD. Also for
// one workflow's events in a namespace of several partitions, which waits
// on that workflow's partition alone. (An event stream of the REST API
// then ends as soon as its server shuts down.)
func TestEventsWaitCancelled(t *testing.T) {
	for _, c := range []struct {
		name       string
		partitions int
		workflow   string
	}{{"one partition", 1, ""}, {"one workflow of 3 partitions", 3, "wf-1"}} {
		t.Run(c.name, func(t *testing.T) {
			srv := redistest.Default(t)
			rdb := redistest.Client(t, srv.Options)
			blocked := make(chan struct{}, 1)
			rdb.AddHook(xreadHook{blocked})
			s, _ := partEnv(t, rdb, c.partitions)
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := s.Events(ctx, engine.EventsParams{Workflow: c.workflow, Wait: time.Hour})
				done <- err
			}()
			<-blocked
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("a cancelled wait returned %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second): // a hang guard: the wait is an hour
				t.Fatal("a read waiting an hour for an event did not return when its context was cancelled")
			}
		})
	}
}
