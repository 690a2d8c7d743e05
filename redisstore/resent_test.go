package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
)

// resendLater sends every transition call twice while on is set, as
// go-redis does when a connection broke after the request left (the
// caller sees the second run's reply). Between the runs it calls between
// (when set), and it runs the second one later by ms on the test clock
// (ARGV[1] of every call, call.lua): a resend reaches the server after the
// first run.
type resendLater struct {
	on      atomic.Bool
	ms      int64
	between func()
}

func (h *resendLater) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *resendLater) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *resendLater) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); !h.on.Load() || (n != "fcall" && n != "evalsha" && n != "eval") {
			return next(ctx, cmd)
		}
		if err := next(ctx, cmd); err != nil {
			return err
		}
		if h.between != nil {
			// its own calls are sent once
			h.on.Store(false)
			h.between()
			h.on.Store(true)
		}
		// FCALL/EVALSHA name numkeys key ARGV[1]...: the test clock's now
		if args := cmd.Args(); len(args) > 4 {
			if now, err := strconv.ParseInt(fmt.Sprint(args[4]), 10, 64); err == nil {
				args[4] = strconv.FormatInt(now+h.ms, 10)
			}
		}
		return next(ctx, cmd)
	}
}

// resentEnv is a store of one partition on rdb with the default
// retention (above a lease) and a test clock, its fast paths set to fast,
// and a resendLater hook on rdb.
func resentEnv(t *testing.T, rdb redis.UniversalClient, fast bool, retention time.Duration) (*Store, string, *resendLater) {
	t.Helper()
	ns := redistest.Namespace(t, rdb, "rs")
	cfg := engine.DefaultConfig()
	cfg.Retention = retention
	s, err := New(rdb, Options{Namespace: ns, Config: cfg, Clock: testclock.New().Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetFastPaths(bg, fast); err != nil {
		t.Fatal(err)
	}
	h := &resendLater{ms: 7}
	rdb.AddHook(h)
	return s, ns, h
}

// claimKeys lists namespace ns's claim records (P claim:<nonce>).
func claimKeys(t *testing.T, rdb redis.UniversalClient, ns string) []string {
	t.Helper()
	var out []string
	for _, k := range nsKeys(t, rdb, ns) {
		if strings.Contains(k, "}:claim:") {
			out = append(out, k)
		}
	}
	return out
}

func claimedIDs(c []engine.Claimed) []string {
	var out []string
	for _, x := range c {
		out = append(out, x.Job.ID)
	}
	return out
}

func completedAll(c []engine.Claimed) []engine.Outcome {
	var out []engine.Outcome
	for _, x := range c {
		out = append(out, engine.Outcome{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeCompleted})
	}
	return out
}

// TestResentFinishClaimFindsItsLeases: a finish + claim whose reply is
// lost and which go-redis sends again (later, on the test clock) hands out
// the leases of its first run, and no others, with the fast paths on and
// off, on miniredis, redis-server and a Cluster (when set): a batch of
// plain jobs (the worker's steady state), a chain's step (the next task
// alone in its queue: fast_chain.lua) and a fan-in's roots with their
// join. The call keeps no claim record of its own (P claim:<nonce>): its
// last outcome's last Settled carries its nonce (resent.lua). The leases
// handed out again are live: finishing them with their tokens settles
// them.
func TestResentFinishClaimFindsItsLeases(t *testing.T) {
	partServers(t, func(t *testing.T, rdb redis.UniversalClient) {
		for _, fast := range []bool{true, false} {
			t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
				s, ns, h := resentEnv(t, rdb, fast, engine.DefaultRetention)
				for i := range 6 {
					if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j" + strconv.Itoa(i), Queue: "p"}}); err != nil {
						t.Fatal(err)
					}
				}
				plan := engine.Plan{ID: "c", Tasks: []engine.TaskSpec{{Name: "a", Queue: "c"}, {Name: "b", Queue: "c", After: []string{"a"}}}}
				fan := engine.Plan{ID: "f", Tasks: []engine.TaskSpec{{Name: "r0", Queue: "f"}, {Name: "r1", Queue: "f"},
					{Name: "r2", Queue: "f"}, {Name: "join", Queue: "f", After: []string{"r0", "r1", "r2"}}}}
				for _, p := range []engine.Plan{plan, fan} {
					if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
						t.Fatal(err)
					}
				}
				steps := []struct {
					name, queue string
					max         int
					want        []string
				}{
					{"plain batch", "p", 2, []string{"j3", "j4"}},
					{"chain step", "c", 1, []string{"c/b"}},
					{"fan-in", "f", 2, []string{"f/join"}},
				}
				for _, st := range steps {
					c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{st.queue}, Max: 3, Lease: time.Minute})
					if err != nil || len(c) == 0 {
						t.Fatalf("%s: claim %v %v", st.name, c, err)
					}
					if st.queue == "p" {
						// two of the three: the third stays leased
						c = c[:2]
					}
					before := claimKeys(t, rdb, ns) // the claim's above
					h.on.Store(true)
					fr, err := s.Finish(bg, engine.FinishParams{Outcomes: completedAll(c),
						Claim: &engine.ClaimParams{Queues: []string{st.queue}, Max: st.max, Lease: time.Minute}})
					h.on.Store(false)
					if err != nil {
						t.Fatal(err)
					}
					for _, x := range fr.Settled {
						if x.Err != nil || x.State != weir.Completed {
							t.Fatalf("%s: settled %+v", st.name, fr.Settled)
						}
					}
					if got := claimedIDs(fr.Claimed); !slices.Equal(got, st.want) {
						t.Fatalf("%s: the resent call handed out %v, want the first run's %v", st.name, got, st.want)
					}
					if k := claimKeys(t, rdb, ns); len(k) != len(before) {
						t.Fatalf("%s: claim records %v after the finish + claim, %v before: it wrote one (its last outcome keeps its nonce)", st.name, k, before)
					}
					done, err := s.Finish(bg, engine.FinishParams{Outcomes: completedAll(fr.Claimed)})
					if err != nil {
						t.Fatal(err)
					}
					for _, x := range done.Settled {
						if x.Err != nil {
							t.Fatalf("%s: finishing what the resend handed out: %+v", st.name, done.Settled)
						}
					}
				}
				// the plain job the first run did not lease is still ready
				for _, id := range []string{"j5"} {
					if j, err := s.GetJob(bg, id); err != nil || j.State != weir.Queued {
						t.Fatalf("%s after the resent calls: %+v %v", id, j, err)
					}
				}
			})
		}
	})
}

// TestResentFinishClaimOfNothing: a finish + claim whose claim leased
// nothing, sent again after a job became ready, hands out nothing: the
// leases of its first run (none), no others (a new call would lease the
// job). With the fast paths on and off.
func TestResentFinishClaimOfNothing(t *testing.T) {
	partServers(t, func(t *testing.T, rdb redis.UniversalClient) {
		for _, fast := range []bool{true, false} {
			t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
				s, _, h := resentEnv(t, rdb, fast, engine.DefaultRetention)
				if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q"}}); err != nil {
					t.Fatal(err)
				}
				a := claimOne(t, s, "q")
				h.between = func() {
					if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "b", Queue: "q"}}); err != nil {
						t.Error(err)
					}
				}
				h.on.Store(true)
				fr, err := s.Finish(bg, engine.FinishParams{Outcomes: completedAll([]engine.Claimed{a}),
					Claim: &engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute}})
				h.on.Store(false)
				if err != nil || len(fr.Settled) != 1 || fr.Settled[0].Err != nil {
					t.Fatalf("finish: %+v %v", fr, err)
				}
				if len(fr.Claimed) != 0 {
					t.Fatalf("the resent call handed out %v: its first run leased nothing", claimedIDs(fr.Claimed))
				}
				if b, err := s.GetJob(bg, "b"); err != nil || b.State != weir.Queued {
					t.Fatalf("b: %+v %v", b, err)
				}
			})
		}
	})
}

// TestResentFinishClaimKeepsTheRecord: where a finish's last outcome
// cannot carry the call's nonce, the claim keeps its record
// (P claim:<nonce>) as a claim alone does, and a resend finds it: a
// retention shorter than the lease (the outcome's record may be gone
// before a resend within the lease), and a last outcome that did not
// settle (a stale token).
func TestResentFinishClaimKeepsTheRecord(t *testing.T) {
	partServers(t, func(t *testing.T, rdb redis.UniversalClient) {
		for _, c := range []struct {
			name      string
			retention time.Duration
			stale     bool
		}{{"retention below the lease", time.Second, false}, {"last outcome stale", engine.DefaultRetention, true}} {
			t.Run(c.name, func(t *testing.T) {
				s, ns, h := resentEnv(t, rdb, true, c.retention)
				for i := range 4 {
					if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j" + strconv.Itoa(i), Queue: "q"}}); err != nil {
						t.Fatal(err)
					}
				}
				got, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 2, Lease: time.Minute})
				if err != nil || len(got) != 2 {
					t.Fatalf("claim: %v %v", got, err)
				}
				before := claimKeys(t, rdb, ns) // the claim's above
				outs := completedAll(got)
				if c.stale {
					outs[1].Token = "1-0000000000000000"
				}
				h.on.Store(true)
				fr, err := s.Finish(bg, engine.FinishParams{Outcomes: outs,
					Claim: &engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute}})
				h.on.Store(false)
				if err != nil {
					t.Fatal(err)
				}
				if ids := claimedIDs(fr.Claimed); !slices.Equal(ids, []string{"j2"}) {
					t.Fatalf("the resent call handed out %v, want the first run's [j2]", ids)
				}
				if k := claimKeys(t, rdb, ns); len(k) != len(before)+1 {
					t.Fatalf("claim records %v after the finish + claim, %v before: want the call's one more", k, before)
				}
			})
		}
	})
}
