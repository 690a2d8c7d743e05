package lua

import (
	"strconv"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// BenchmarkChainStepTwoScripts compares two ways of making a chain step
// (the running task finishes, which promotes the next task, and the next
// task is claimed) in one client round trip:
//
//   - finish-claims: what the worker does, one finish call whose claim
//     (FinishParams.Claim) runs inside the same script, after the settle;
//   - finish-then-claim: a pipeline of two scripts, finish without a claim,
//     then claim with no wait (the pipelined alternative of issue 7).
//
// Both are one round trip per step; the report shows what the second
// script costs the server (cmds/step, lua-us/step) and the client (ns/op,
// allocs). See docs/benchmarks.md, "Finish and claim in one round trip".
func BenchmarkChainStepTwoScripts(b *testing.B) {
	for _, mode := range []string{"finish-claims", "finish-then-claim"} {
		b.Run(mode, func(b *testing.B) {
			eachBenchEnv(b, func(b *testing.B, e *benchEnv) { chainSteps(b, e, 100, mode == "finish-then-claim") })
		})
	}
}

// chainSteps runs b.N steps of n-task chains (a new chain, outside the
// measurement, whenever one ends); pipelined selects finish-then-claim.
func chainSteps(b *testing.B, e *benchEnv, n int, pipelined bool) {
	plan := func(id string) engine.Plan {
		p := engine.Plan{ID: id}
		for i := range n {
			ts := engine.TaskSpec{Name: "t" + strconv.Itoa(i), Queue: "q"}
			if i > 0 {
				ts.After = []string{"t" + strconv.Itoa(i-1)}
			}
			p.Tasks = append(p.Tasks, ts)
		}
		return p
	}
	cp := engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute}
	var claimed []engine.Claimed
	next := func(wf int) {
		b.StopTimer()
		e.skip(b, func() {
			if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: plan("c" + strconv.Itoa(wf))}); err != nil {
				b.Fatal(err)
			}
			var err error
			if claimed, err = e.store.Claim(bg, cp); err != nil || len(claimed) != 1 {
				b.Fatalf("claim: %v, %d claimed", err, len(claimed))
			}
		})
		b.StartTimer()
	}
	common := []any{"", e.store.cfg.Retention.Milliseconds(), e.store.cfg.Limits.MaxBackoff.Milliseconds()}
	wf := 0
	e.counters(b)
	next(wf)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(claimed) == 0 {
			wf++
			next(wf)
		}
		c := claimed[0]
		if !pipelined {
			res, err := e.store.Finish(bg, engine.FinishParams{
				Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}},
				Claim:    &cp,
			})
			if err != nil {
				b.Fatal(err)
			}
			claimed = res.Claimed
			continue
		}
		// The same ARGV as Store.Finish without a claim and Store.Claim
		// without a wait (spec/scripts.md).
		pipe := e.rdb.Pipeline()
		fargs := append(append([]any(nil), common...), 1, c.Job.ID, c.Lease.Token, string(engine.OutcomeCompleted), "", "", "", "", 0, 0, 0)
		fin := scripts["finish"].rs.EvalSha(bg, pipe, e.store.keys.common(), fargs...)
		cargs := append(append([]any(nil), common...), cp.Max, cp.Lease.Milliseconds(), "", "q")
		cl := scripts["claim"].rs.EvalSha(bg, pipe, e.store.keys.common(), cargs...)
		if _, err := pipe.Exec(bg); err != nil {
			b.Fatal(err)
		}
		r := newReader(fin.Val())
		if k := r.count(); k != 1 {
			b.Fatalf("finish settled %d outcomes", k)
		}
		if s := r.settled(); s.Err != nil || s.State != engine.Completed {
			b.Fatalf("finish: %+v", s)
		}
		r = newReader(cl.Val())
		r.int()
		r.int()
		claimed = r.claimed()
		if r.err != nil {
			b.Fatal(r.err)
		}
	}
	b.StopTimer()
	e.report(b, b.N, "step")
}
