package redisstore

import (
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// TestEndedListTrimOncePerSecond: the finishes of one second trim a
// queue's ended lists once (the queue state's et, lists.lua), and a member
// past retention that no trim removed yet shows in no read: not in a
// listing, not in Stats' counts. The commands are counted on a private
// redis-server (INFO commandstats); on miniredis the untrimmed member is
// seen in the list itself. With the fast paths on and off.
func TestEndedListTrimOncePerSecond(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "fast", false: "general"}[fast], func(t *testing.T) { testEndedListTrim(t, fast) })
	}
}

func testEndedListTrim(t *testing.T, fast bool) {
	cfg := engine.DefaultConfig()
	cfg.Retention = 10 * time.Second
	e := newOwnEnv(t, cfg)
	s := e.store
	if err := s.SetFastPaths(bg, fast); err != nil {
		t.Fatal(err)
	}
	n := 0
	end := func(kind engine.OutcomeKind) string {
		t.Helper()
		n++
		id := "j" + string(rune('a'+n))
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q", MaxAttempts: 1}}); err != nil {
			t.Fatal(err)
		}
		c := claimOne(t, s, "q")
		if _, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: kind}}}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	members := func(list string) int64 {
		t.Helper()
		v, err := e.rdb.ZCard(bg, s.keys.queue("q", list)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return v - 1 // the sentinel
	}
	// ends at t0 and t0 + 0.5 s (completed and failed)
	end(engine.OutcomeCompleted)
	e.advance(500 * time.Millisecond)
	old := end(engine.OutcomeCompleted)
	end(engine.OutcomeFailed)
	// at t0 + 10.1 s the first is past retention: the first of these
	// finishes trims it, and the next trim is due a second later
	e.advance(9600 * time.Millisecond)
	if realRedis() {
		if err := e.rdb.ConfigResetStat(bg).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		end(engine.OutcomeCompleted)
	}
	if realRedis() {
		st := redistest.CommandStats(t, e.rdb).Measured()
		if z, _ := st.Sum("zremrangebylex"); z != 3 {
			t.Errorf("20 finishes within a second: %d ZREMRANGEBYLEX, want 3 (one trim of the queue's three ended lists)", z)
		}
	}
	if got := members("completed"); got != 21 {
		t.Errorf("completed list: %d members after the first trim, want 21", got)
	}
	// at t0 + 10.8 s the ends of t0 + 0.5 s are past retention, and no
	// trim is due: they stay in the lists but no read shows them
	e.advance(700 * time.Millisecond)
	last := end(engine.OutcomeCompleted)
	if got := members("completed"); got != 22 {
		t.Errorf("completed list: %d members before the trim is due, want 22 (%s not trimmed yet)", got, old)
	}
	if got := members("failed"); got != 1 {
		t.Errorf("failed list: %d members before the trim is due, want 1", got)
	}
	page, err := s.ListJobs(bg, weir.ListJobsParams{Queue: "q", State: weir.ListCompleted, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Jobs) != 21 || page.Jobs[0].ID != last {
		t.Errorf("completed listing: %d jobs, want the 21 within retention, %s first", len(page.Jobs), last)
	}
	for _, j := range page.Jobs {
		if j.ID == old {
			t.Errorf("completed listing shows %s, ended past retention", old)
		}
	}
	stats, err := s.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.Queues) != 1 || stats.Queues[0].Failed != 0 {
		t.Errorf("stats: %+v, want queue q with 0 failed (its one failed job is past retention)", stats.Queues)
	}
	// a finish after the due time trims them
	e.advance(400 * time.Millisecond)
	end(engine.OutcomeCompleted)
	if got, want := members("completed"), int64(22); got != want {
		t.Errorf("completed list after the trim: %d members, want %d", got, want)
	}
	if got := members("failed"); got != 0 {
		t.Errorf("failed list after the trim: %d members, want 0", got)
	}
}
