package redisstore

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// TestPromotionLatencyOfADrainedCascade: a finish whose cascade runs past
// the call's budget promotes the rest of the dependents in drain calls,
// later by the store's clock (here one that moves a second each time it
// is read): each dependent's claim says when the root ended
// (PromotedAfter) and when its own push made it ready (ReadyAt), the same
// time for those the finish's call pushed, later for the drained ones.
func TestPromotionLatencyOfADrainedCascade(t *testing.T) {
	for _, srv := range redistest.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			var ms atomic.Int64
			ms.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
			tick := func() time.Time { return time.UnixMilli(ms.Add(1000)).UTC() }
			rdb := redistest.Client(t, srv.Options)
			s, err := New(rdb, Options{Namespace: redistest.Namespace(t, rdb, "rd"), Clock: tick})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SetStepBudget(bg, 2); err != nil {
				t.Fatal(err)
			}
			e := &testEnv{store: s}
			root := claimRoot(t, e, fanOut("fan", 6, false))
			res, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: root.Job.ID, Token: root.Lease.Token, Kind: engine.OutcomeCompleted}}})
			if err != nil || res.Settled[0].Err != nil || len(res.Settled[0].Pushed) != 6 {
				t.Fatalf("finish: %v %+v", err, res.Settled)
			}
			rj, err := s.GetJob(bg, root.Job.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 10, Lease: time.Minute})
			if err != nil || len(got) != 6 {
				t.Fatalf("claim: %d jobs, %v", len(got), err)
			}
			same, later := 0, 0
			for _, c := range got {
				if !c.PromotedAfter.Equal(rj.EndedAt) {
					t.Errorf("%s: promoted after %v, want the root's end %v", c.Job.ID, c.PromotedAfter, rj.EndedAt)
				}
				switch {
				case c.ReadyAt.Equal(rj.EndedAt):
					same++
				case c.ReadyAt.After(rj.EndedAt):
					later++
				default:
					t.Errorf("%s: ready at %v, before the root's end %v", c.Job.ID, c.ReadyAt, rj.EndedAt)
				}
			}
			if same == 0 || later == 0 {
				t.Errorf("%d dependents ready at the root's end, %d later; want some of each (the finish's call and its drains)", same, later)
			}
		})
	}
}
