package redisstore

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
)

// TestFastFinishWritesTheSame runs the cases of a finish's fast paths
// (fast_finish.lua: plain jobs finished 50 a call, a 100-task chain
// finished one step a call with the next claim, fan-ins of 10 + 1
// finished 10 a call, a completion after a failed attempt, finishes sent
// again in the same call and in a later one, with outcomes of the
// general code among them) twice on one server, in two namespaces, with
// the fast paths on and off, and requires the same replies and the same
// keys with the same contents. With the test clock, and with the server's
// (records then get Redis TTLs), times masked.
func TestFastFinishWritesTheSame(t *testing.T) { writesTheSame(t, fastFinishCases) }

// writesTheSame runs cases twice on one server, in two namespaces, with
// the fast paths on and off, with the test clock and with the server's,
// and requires the same replies (the text cases returns) and the same keys
// with the same contents (TTLs and, on the server's clock, times masked).
func writesTheSame(t *testing.T, cases func(*testing.T, *Store, *testclock.Clock) []string) {
	rdb := diffClient(t)
	for _, real := range []bool{false, true} {
		t.Run(fmt.Sprintf("server-clock=%v", real), func(t *testing.T) {
			var snaps [2]map[string]string
			var logs [2][]string
			for i, fast := range []bool{true, false} {
				ns := redistest.Namespace(t, rdb, "fastfinish")
				opts := Options{Namespace: ns, Config: engine.DefaultConfig()}
				var clk *testclock.Clock
				if !real {
					clk = testclock.New()
					opts.Clock = clk.Now
				}
				s, err := New(rdb, opts)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.SetFastPaths(bg, fast); err != nil {
					t.Fatal(err)
				}
				logs[i] = cases(t, s, clk)
				snaps[i] = namespaceContents(t, rdb, ns)
				for k, v := range snaps[i] {
					// TTLs as whole seconds differ by the run's timing;
					// on the server's clock so do times, and the order
					// of members that begin with one
					v = ttlText.ReplaceAllString(v, "expires")
					if real {
						lines := strings.Split(maskTimes(v), "\n")
						slices.Sort(lines)
						v = strings.Join(lines, "\n")
					}
					snaps[i][k] = v
				}
			}
			if len(logs[0]) != len(logs[1]) {
				t.Fatalf("%d replies with the fast paths on, %d off", len(logs[0]), len(logs[1]))
			}
			for x := range logs[0] {
				if logs[0][x] != logs[1][x] {
					t.Fatalf("reply %d differs:\n  on:  %s\n  off: %s", x, logs[0][x], logs[1][x])
				}
			}
			if d := diffContents(snaps[0], snaps[1]); d != "" {
				t.Errorf("the namespaces differ (fast paths on / off):\n%s", d)
			}
		})
	}
}

// timeText matches what differs between two runs on the server's clock:
// ms times (13 digits, 15 padded, or a score), formatted times and durations of
// TTLs.
var timeText = regexp.MustCompile(`\d\.\d+e\+12|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC|\d{13,15}|expires in [0-9hms.]+`)

// ttlText matches a TTL as namespaceContents shows it.
var ttlText = regexp.MustCompile(`expires in [0-9hms.]+`)

func maskTimes(s string) string { return timeText.ReplaceAllString(s, "<t>") }

// fastFinishCases runs the fast paths' cases on s (clk: its test clock,
// nil for the server's) and returns every reply as text, nonces and times
// masked.
func fastFinishCases(t *testing.T, s *Store, clk *testclock.Clock) []string {
	t.Helper()
	var log []string
	note := func(v any) {
		var text string
		switch v := v.(type) {
		case []engine.Claimed:
			text = claimedText(v)
		case engine.FinishResult:
			for _, st := range v.Settled {
				text += fmt.Sprintf("%s %v %s %v %v %s %v; ", st.JobID, st.Err, st.State, st.RunAt, st.Pushed, st.WorkflowState, st.WorkflowEnded)
			}
			text += "claimed " + claimedText(v.Claimed)
		}
		log = append(log, maskTimes(hexNonce.ReplaceAllString(text, "<nonce>")))
	}
	finish := func(p engine.FinishParams) engine.FinishResult {
		t.Helper()
		r, err := s.Finish(bg, p)
		if err != nil {
			t.Fatal(err)
		}
		note(r)
		return r
	}
	claim := func(q string, max int) []engine.Claimed {
		t.Helper()
		c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{q}, Max: max, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		note(c)
		return c
	}
	done := func(c engine.Claimed, r string) engine.Outcome {
		o := engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}
		if r != "" {
			o.Result = []byte(r)
		}
		return o
	}

	// plain jobs: 60 enqueued, 50 claimed and finished in one call (one
	// failed, one sent twice, some with a result) with the next claim
	var ps []engine.EnqueueParams
	for k := range 60 {
		ps = append(ps, engine.EnqueueParams{Job: engine.JobSpec{ID: "p-" + strconv.Itoa(k), Queue: "p", MaxAttempts: 3}})
	}
	if _, err := s.EnqueueBatch(bg, ps); err != nil {
		t.Fatal(err)
	}
	cs := claim("p", 50)
	var outs []engine.Outcome
	for k, c := range cs {
		o := done(c, "")
		switch {
		case k == 7:
			o.Kind, o.Error, o.RetryAfter = engine.OutcomeFailed, "boom", time.Hour
		case k%3 == 0:
			o.Result = []byte("r" + strconv.Itoa(k))
		}
		outs = append(outs, o)
		if k == 11 {
			outs = append(outs, o)
		}
	}
	r := finish(engine.FinishParams{Outcomes: outs, Claim: &engine.ClaimParams{Queues: []string{"p"}, Max: 50, Lease: time.Minute}})
	// the first finish again: the same Settleds
	finish(engine.FinishParams{Outcomes: outs[:3]})
	var rest []engine.Outcome
	for _, c := range r.Claimed {
		rest = append(rest, done(c, "x"))
	}
	finish(engine.FinishParams{Outcomes: rest})
	if clk != nil {
		// the failed job's second attempt completes
		clk.Advance(2 * time.Hour)
		cs = claim("p", 5)
		if len(cs) != 1 {
			t.Fatalf("claimed %d jobs after the failed one's retry time, want 1", len(cs))
		}
		var o2 []engine.Outcome
		for _, c := range cs {
			o2 = append(o2, done(c, "second"))
		}
		finish(engine.FinishParams{Outcomes: o2})
	}

	// a chain of 100, one step a call: finish + promotion + next claim;
	// its third task fails once
	chain := cpuPlan("ch", 100, false)
	for i := range chain.Tasks {
		chain.Tasks[i].MaxAttempts = 2
	}
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: chain}); err != nil {
		t.Fatal(err)
	}
	cp := engine.ClaimParams{Queues: []string{"qch"}, Max: 1, Lease: time.Minute}
	cs = claim("qch", 1)
	failed := false
	for len(cs) > 0 {
		o := done(cs[0], "step")
		if cs[0].Job.ID == "ch/t2" && !failed {
			// with the server's clock, released (queued again at once)
			// instead: no test waits for a retry's time
			failed = true
			o = engine.Outcome{JobID: o.JobID, Token: o.Token, Kind: engine.OutcomeReleased}
			if clk != nil {
				o.Kind, o.Error, o.RetryAfter = engine.OutcomeFailed, "once", time.Millisecond
			}
			finish(engine.FinishParams{Outcomes: []engine.Outcome{o}})
			if clk != nil {
				clk.Advance(time.Second)
			}
			cs = claim("qch", 1)
			continue
		}
		cs = finish(engine.FinishParams{Outcomes: []engine.Outcome{o}, Claim: &cp}).Claimed
	}

	// fan-ins of 10 + 1, claimed and finished 10 a call
	for k := range 3 {
		p := cpuPlan("fi", 11, true)
		p.ID = "fi-" + strconv.Itoa(k)
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
	}
	cp = engine.ClaimParams{Queues: []string{"qfi"}, Max: 10, Lease: time.Minute}
	cs = claim("qfi", 10)
	for len(cs) > 0 {
		outs = outs[:0]
		for _, c := range cs {
			outs = append(outs, done(c, c.Job.ID))
		}
		cs = finish(engine.FinishParams{Outcomes: outs, Claim: &cp}).Claimed
	}
	// a finish of the last join again
	finish(engine.FinishParams{Outcomes: outs})

	// a fan-in whose roots finish in one call out of their order: the
	// count-down's state bytes in runs written before the one after them
	// (6-8, then 3-5 and 1-2 before it, 10 and 9 alone)
	p := cpuPlan("fo", 11, true)
	if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
		t.Fatal(err)
	}
	cp = engine.ClaimParams{Queues: []string{"qfo"}, Max: 10, Lease: time.Minute}
	cs = claim("qfo", 10)
	if len(cs) != 10 {
		t.Fatalf("claimed %d roots, want 10", len(cs))
	}
	outs = outs[:0]
	for _, k := range []int{6, 7, 8, 3, 4, 5, 1, 2, 10, 9} {
		outs = append(outs, done(cs[k-1], cs[k-1].Job.ID))
	}
	cs = finish(engine.FinishParams{Outcomes: outs, Claim: &cp}).Claimed
	outs = outs[:0]
	for _, c := range cs {
		outs = append(outs, done(c, c.Job.ID))
	}
	finish(engine.FinishParams{Outcomes: outs})
	return log
}

// claimedText is what a test compares of claimed jobs: IDs, states,
// attempts, tokens, results and dependencies' outcomes.
func claimedText(cs []engine.Claimed) string {
	var text string
	for _, c := range cs {
		text += fmt.Sprintf("%s %s a%d %s %q %q %v; ", c.Job.ID, c.Job.State, c.Job.Attempt, c.Lease.Token, c.Job.Result, c.Job.Error, c.Deps)
	}
	return text
}
