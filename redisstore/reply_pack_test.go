package redisstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// TestClaimedPackedReply: a claim's reply packs a Claimed's fields that
// cannot hold a newline into one value (lua/include/lease.lua's
// put_claimed, spec/scripts.md Replies): the claim of one plain job
// without payload, error or checkpoint is now, next due, the count and
// that one value, on the fast paths and off; a finish's packs each
// Settled whole (reply.lua's put_settled): the finish of that job is the
// count, the Settled and the count of Claimed.
func TestClaimedPackedReply(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			e := newEnv(t, engine.DefaultConfig())
			s := e.store
			if err := s.SetFastPaths(bg, fast); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j1", Queue: "q"}}); err != nil {
				t.Fatal(err)
			}
			sc := scripts["claim"]
			v, err := s.call(bg, sc, append(s.argv(sc, 6), 1, 60000, "", "00112233aabbccdd", "w1", "q"))
			if err != nil {
				t.Fatal(err)
			}
			if len(v) != 4 {
				t.Fatalf("claim reply of %d values: %q", len(v), v)
			}
			r := newReader(v)
			r.int()
			r.int()
			cs := r.claimed()
			if err := r.done(); err != nil || len(cs) != 1 || cs[0].Job.ID != "j1" || cs[0].Job.Queue != "q" ||
				cs[0].Job.Attempt != 1 || cs[0].Job.Payload != nil || cs[0].ReadyAt.IsZero() {
				t.Fatalf("claimed %+v, %v", cs, err)
			}
			// its finish: the count of Settled, the one Settled, packed
			// (reply.lua's put_settled), and no Claimed
			sc = scripts["finish"]
			v, err = s.call(bg, sc, append(s.argv(sc, 16), 1, "j1", cs[0].Lease.Token, "completed", "", "", "", "", 0, "",
				0, "", 0, 0, "", ""))
			if err != nil {
				t.Fatal(err)
			}
			if len(v) != 3 {
				t.Fatalf("finish reply of %d values: %q", len(v), v)
			}
			r = newReader(v)
			r.count()
			st := r.settled()
			nc := r.count()
			if err := r.done(); err != nil || nc != 0 || st.JobID != "j1" || st.Err != nil || st.State != weir.Completed {
				t.Fatalf("settled %+v, %d claimed, %v", st, nc, err)
			}
		})
	}
}

// TestClaimedBinaryValuesNotPacked: payloads, errors, results and
// checkpoints holding the packed values' separator (a newline) and other
// bytes come back whole in a Claimed, on every path that hands out a
// lease (a plain job's fast claim and the general claim, a task's, a chain
// step's finish + claim, a join's dependencies, with a trace context), on
// the fast paths and off.
func TestClaimedBinaryValuesNotPacked(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			e := newEnv(t, engine.DefaultConfig())
			s := e.store
			if err := s.SetFastPaths(bg, fast); err != nil {
				t.Fatal(err)
			}
			claim := func(q string) engine.Claimed {
				t.Helper()
				return claimOne(t, s, q)
			}
			finish := func(o engine.Outcome, cp *engine.ClaimParams) []engine.Claimed {
				t.Helper()
				r, err := s.Finish(bg, engine.FinishParams{Outcomes: []engine.Outcome{o}, Claim: cp})
				if err != nil || len(r.Settled) != 1 || r.Settled[0].Err != nil {
					t.Fatalf("finish %s: %+v %v", o.JobID, r, err)
				}
				return r.Claimed
			}
			// a plain job: payload, checkpoint, then the error of its
			// failed attempt
			pay := []byte("p\n1\x00\n")
			if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j", Queue: "pq", Payload: pay, MaxAttempts: 3},
				TraceParent: tp}); err != nil {
				t.Fatal(err)
			}
			c := claim("pq")
			if string(c.Job.Payload) != string(pay) || c.TraceParent != tp || c.Checkpoint != nil || c.Job.Error != "" {
				t.Fatalf("first claim %+v", c)
			}
			if err := s.Progress(bg, engine.ProgressParams{JobID: "j", Token: c.Lease.Token, Checkpoint: []byte("c\nk")}); err != nil {
				t.Fatal(err)
			}
			finish(engine.Outcome{JobID: "j", Token: c.Lease.Token, Kind: engine.OutcomeFailed, Error: "e\nr\n"}, nil)
			e.advance(time.Hour)
			c = claim("pq")
			if string(c.Job.Payload) != string(pay) || string(c.Checkpoint) != "c\nk" || c.Job.Error != "e\nr\n" ||
				c.Job.Attempt != 2 || c.TraceParent != tp {
				t.Fatalf("second claim %+v", c)
			}
			// a chain x -> y -> z alone in its queue (fast_chain.lua's step)
			if _, err := s.Submit(bg, engine.SubmitParams{TraceParent: tp, Plan: engine.Plan{ID: "w2", Tasks: []engine.TaskSpec{
				{Name: "x", Queue: "cq"},
				{Name: "y", Queue: "cq", After: []string{"x"}, Payload: []byte("y\n")},
				{Name: "z", Queue: "cq", After: []string{"y"}},
			}}}); err != nil {
				t.Fatal(err)
			}
			x := claim("cq")
			for k, res := range [][]byte{[]byte("x\nr"), nil} {
				cs := finish(engine.Outcome{JobID: x.Job.ID, Token: x.Lease.Token, Kind: engine.OutcomeCompleted, Result: res},
					&engine.ClaimParams{Queues: []string{"cq"}, Max: 1, Lease: time.Minute})
				if len(cs) != 1 || len(cs[0].Deps) != 1 || string(cs[0].Deps[0].Result) != string(res) ||
					(res == nil) != (cs[0].Deps[0].Result == nil) || cs[0].TraceParent != tp || cs[0].PromotedAfter.IsZero() {
					t.Fatalf("step %d: claimed %+v", k, cs)
				}
				if k == 0 && (cs[0].Job.ID != "w2/y" || string(cs[0].Job.Payload) != "y\n") {
					t.Fatalf("step %d: claimed %+v", k, cs)
				}
				if k == 1 && (cs[0].Job.ID != "w2/z" || cs[0].Job.Payload != nil) {
					t.Fatalf("step %d: claimed %+v", k, cs)
				}
				x = cs[0]
			}
			// a chain a -> b (a step with a hand-off) and a join c after a and b,
			// Always, that sees b's failure
			if _, err := s.Submit(bg, engine.SubmitParams{TraceParent: tp, Plan: engine.Plan{ID: "w", Tasks: []engine.TaskSpec{
				{Name: "a", Queue: "q", Payload: []byte("a\n")},
				{Name: "b", Queue: "q", After: []string{"a"}, Payload: []byte("\nb")},
				{Name: "c", Queue: "q", After: []string{"a", "b"}, Always: true},
			}}}); err != nil {
				t.Fatal(err)
			}
			a := claim("q")
			if a.Job.ID != "w/a" || string(a.Job.Payload) != "a\n" || len(a.Deps) != 0 || a.TraceParent != tp {
				t.Fatalf("claimed %+v", a)
			}
			cs := finish(engine.Outcome{JobID: "w/a", Token: a.Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte("r\na")},
				&engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
			if len(cs) != 1 {
				t.Fatalf("claimed %+v", cs)
			}
			b := cs[0]
			if b.Job.ID != "w/b" || string(b.Job.Payload) != "\nb" || b.TraceParent != tp || b.PromotedAfter.IsZero() ||
				len(b.Deps) != 1 || b.Deps[0].Task != "a" || string(b.Deps[0].Result) != "r\na" || b.Deps[0].Error != "" {
				t.Fatalf("claimed %+v", b)
			}
			cs = finish(engine.Outcome{JobID: "w/b", Token: b.Lease.Token, Kind: engine.OutcomeFailed, Error: "b\nerr", NonRetryable: true},
				&engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
			if len(cs) != 1 {
				t.Fatalf("claimed %+v", cs)
			}
			j := cs[0]
			want := []weir.DepOutcome{{Task: "a", State: weir.Completed, Result: []byte("r\na")}, {Task: "b", State: weir.Failed, Error: "b\nerr"}}
			if j.Job.ID != "w/c" || j.Job.Payload != nil || fmt.Sprintf("%q", j.Deps) != fmt.Sprintf("%q", want) {
				t.Fatalf("claimed %+v, deps %q", j, j.Deps)
			}
		})
	}
}

// TestPackedValueRead: the reader fails with ErrProtocol on a packed
// Claimed with fields left over or missing, or a dependency count the
// value cannot hold, and reads one that is whole.
func TestPackedValueRead(t *testing.T) {
	head := "j1\nq|0|3|1000|0\n1700000000000\n1\ntok\n1700000060000\n0\n"
	for _, c := range []struct {
		name string
		v    []string
		ok   bool
	}{
		{"whole", []string{"1", head + "pc\n0\nt00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nr5:4", "pay", "ck"}, true},
		{"field left", []string{"1", head + "\n0\nx"}, false},
		{"field missing", []string{"1", "j1\nq|0|3|1000|0\n1700000000000\n1\ntok"}, false},
		{"value missing", []string{"1", head + "p\n0"}, false},
		{"count too large", []string{"1", head + "\n9\na|q|0|1|1000|0||\ncompleted\n"}, false},
	} {
		r := newReader(c.v)
		cs := r.claimed()
		err := r.done()
		if c.ok != (err == nil) || (err != nil && !errors.Is(err, weir.ErrProtocol)) {
			t.Errorf("%s: %+v, %v", c.name, cs, err)
		}
		if c.ok && (string(cs[0].Job.Payload) != "pay" || string(cs[0].Checkpoint) != "ck" || cs[0].TraceParent == "" ||
			!cs[0].ReadyAt.Equal(time.UnixMilli(5)) || !cs[0].PromotedAfter.Equal(time.UnixMilli(4))) {
			t.Errorf("%s: %+v", c.name, cs)
		}
	}
}

// TestPackedSettledRead: a packed Settled with its pushes reads whole; one
// with fields left over or missing fails with ErrProtocol.
func TestPackedSettledRead(t *testing.T) {
	r := newReader([]string{"w/a\n\ncompleted\n0\nrunning\n\n2\nw/b\nq\nw/c\nq2", "j\nLEASELOST\n\n0\n\n\n0"})
	s, lost := r.settled(), r.settled()
	if err := r.done(); err != nil || s.JobID != "w/a" || s.State != weir.Completed || s.WorkflowState != weir.WorkflowRunning ||
		fmt.Sprint(s.Pushed) != "[{w/b q} {w/c q2}]" || !errors.Is(lost.Err, weir.ErrLeaseLost) {
		t.Fatalf("%+v %+v %v", s, lost, err)
	}
	for _, v := range []string{"j\n\ncompleted\n0\n\n\n0\nx", "j\n\ncompleted\n0\n\n\n1\nw/b", "j\n\ncompleted\n0"} {
		r := newReader([]string{v})
		r.settled()
		if err := r.done(); !errors.Is(err, weir.ErrProtocol) {
			t.Errorf("%q: %v", v, err)
		}
	}
}
