package redisstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// drain claims up to cp.Max jobs of cp's queues, then finishes them as
// finishAll does; it returns the jobs finished and the store calls made.
func drain(tb testing.TB, s *Store, cp engine.ClaimParams) (done, calls int) {
	tb.Helper()
	claimed, err := s.Claim(bg, cp)
	if err != nil {
		tb.Fatal(err)
	}
	done, calls = finishAll(tb, s, cp, claimed)
	return done, calls + 1
}

// finishAll finishes claimed as completed with the next claim of cp
// attached, batch after batch, until a claim comes back empty; it returns
// the jobs finished and the store calls made.
func finishAll(tb testing.TB, s *Store, cp engine.ClaimParams, claimed []engine.Claimed) (done, calls int) {
	tb.Helper()
	outs := make([]engine.Outcome, 0, cp.Max)
	for len(claimed) > 0 {
		outs = outs[:0]
		for _, c := range claimed {
			outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
		}
		done += len(outs)
		res, err := s.Finish(bg, engine.FinishParams{Outcomes: outs, Claim: &cp})
		calls++
		if err != nil {
			tb.Fatal(err)
		}
		claimed = res.Claimed
	}
	return done, calls
}

// BenchmarkPlainJobs runs b.N no-op plain jobs through enqueue, then
// batched finish+claim, and reports Redis commands per job (INFO
// commandstats, inside Lua included) and client round trips per job.
func BenchmarkPlainJobs(b *testing.B) {
	e := newPrivateEnv(b, engine.DefaultConfig())
	s := e.store
	if err := s.Load(bg); err != nil {
		b.Fatal(err)
	}
	e.rdb.ConfigResetStat(bg)
	trips := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j" + strconv.Itoa(i), Queue: "q"}}); err != nil {
			b.Fatal(err)
		}
		trips++
	}
	done, calls := drain(b, s, engine.ClaimParams{Queues: []string{"q"}, Max: 100, Lease: time.Minute})
	trips += calls
	b.StopTimer()
	if done != b.N {
		b.Fatalf("%d jobs done of %d", done, b.N)
	}
	if testing.Verbose() {
		info, _ := e.rdb.Info(bg, "commandstats").Result()
		b.Log(info)
	}
	b.ReportMetric(float64(redistest.CommandStats(b, e.rdb).Measured().Calls())/float64(b.N), "cmds/job")
	b.ReportMetric(float64(trips)/float64(b.N), "trips/job")
}
