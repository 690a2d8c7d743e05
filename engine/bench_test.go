package engine

import (
	"fmt"
	"github.com/weirflow/weir"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Benchmarks of the model's transitions (go test -bench . -benchmem). The
// clock stands still, so no lease expires and nothing is removed by
// retention while a benchmark runs. Every setup, timer stopped, ends with a
// garbage collection, so that collecting the setup's garbage is not charged
// to the few operations timed after it.

var btNow = time.UnixMilli(1_700_000_000_000)

// btFan is the number of dependents of each task BenchmarkFinish finishes.
const btFan = 3

// btFanPlan is n tasks in groups of one root (queue "roots") and btFan
// children (queue "kids") that depend on it: a wide layer of independent
// two-level trees, so finishing any root promotes exactly btFan tasks,
// whatever n is.
func btFanPlan(id string, n int) Plan {
	p := Plan{ID: id}
	for g := 0; len(p.Tasks)+btFan+1 <= n; g++ {
		root := "r" + strconv.Itoa(g)
		p.Tasks = append(p.Tasks, TaskSpec{Name: root, Queue: "roots", Payload: []byte("p")})
		for k := range btFan {
			p.Tasks = append(p.Tasks, TaskSpec{
				Name: fmt.Sprintf("c%d-%d", g, k), Queue: "kids", Payload: []byte("p"), After: []string{root},
			})
		}
	}
	return p
}

// btLayeredPlan is n tasks in layers of width tasks; each task after the
// first layer depends on two tasks of the layer before. Tasks of the first
// layer have an undo when undo is set.
func btLayeredPlan(id string, n, width int, undo bool) Plan {
	p := Plan{ID: id, Tasks: make([]TaskSpec, n)}
	for i := range n {
		t := TaskSpec{Name: "t" + strconv.Itoa(i), Queue: "q", Payload: []byte("p")}
		if i < width {
			if undo {
				t.Undo = &UndoSpec{Queue: "undo", Payload: []byte("u")}
			}
		} else {
			layer := i - i%width
			a, b := i-width, layer-width+(i-layer+1)%width
			t.After = []string{"t" + strconv.Itoa(a)}
			if b != a {
				t.After = append(t.After, "t"+strconv.Itoa(b))
			}
		}
		p.Tasks[i] = t
	}
	return p
}

// btClaimAll claims every ready job of queue, in batches of MaxBatch.
func btClaimAll(b *testing.B, m *Model, queue string) []Claimed {
	var all []Claimed
	for {
		c, err := m.Claim(btNow, ClaimParams{Queues: []string{queue}, Max: m.cfg.Limits.MaxBatch, Lease: 24 * time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		if len(c) == 0 {
			return all
		}
		all = append(all, c...)
	}
}

// BenchmarkFinish finishes one task that has btFan dependents in a workflow
// of 100, 1,000 and 10,000 tasks. Its cost must follow the task's dependents,
// not the workflow's size: ns/op and allocs/op stay flat across sizes (the
// queue heaps add a log factor).
func BenchmarkFinish(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		b.Run("tasks="+strconv.Itoa(n), func(b *testing.B) {
			var m *Model
			var leases []Claimed
			wf := 0
			setup := func() {
				m = NewModel(DefaultConfig())
				wf++
				if _, err := m.Submit(btNow, SubmitParams{Plan: btFanPlan("w"+strconv.Itoa(wf), n)}); err != nil {
					b.Fatal(err)
				}
				leases = btClaimAll(b, m, "roots")
				runtime.GC()
			}
			setup()
			next := 0
			result := []byte("result")
			for b.Loop() {
				if next == len(leases) {
					b.StopTimer()
					setup()
					next = 0
					b.StartTimer()
				}
				c := leases[next]
				next++
				res, err := m.Finish(btNow, FinishParams{Outcomes: []Outcome{{
					JobID: c.Job.ID, Token: c.Lease.Token, Kind: OutcomeCompleted, Result: result,
				}}})
				if err != nil || len(res.Settled[0].Pushed) != btFan {
					b.Fatalf("finish %s: %+v, %v", c.Job.ID, res, err)
				}
			}
		})
	}
}

// BenchmarkSubmit submits a layered workflow (width 100, two dependencies
// per task) of 100, 1,000 and 10,000 tasks: validation, plan hash, writes and
// the roots' pushes.
func BenchmarkSubmit(b *testing.B) {
	for _, n := range []int{100, 1_000, 10_000} {
		b.Run("tasks="+strconv.Itoa(n), func(b *testing.B) {
			p := btLayeredPlan("w", n, 100, false)
			perModel := max(1, 100_000/n) // keep the model's memory bounded
			m := NewModel(DefaultConfig())
			i := 0
			for b.Loop() {
				if i%perModel == 0 && i > 0 {
					b.StopTimer()
					m = NewModel(DefaultConfig())
					runtime.GC()
					b.StartTimer()
				}
				i++
				p.ID = "w" + strconv.Itoa(i)
				res, err := m.Submit(btNow, SubmitParams{Plan: p})
				if err != nil || !res.Created {
					b.Fatalf("submit: %+v, %v", res, err)
				}
			}
		})
	}
}

// BenchmarkClaimFinish is a busy worker's steady state on plain jobs: each
// op finishes the jobs of the previous claim and claims the next batch in the
// same call. ns/job divides by the batch.
func BenchmarkClaimFinish(b *testing.B) {
	const jobs = 8192
	for _, batch := range []int{1, 8} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) {
			claim := ClaimParams{Queues: []string{"q"}, Max: batch, Lease: time.Minute}
			var m *Model
			var claimed []Claimed
			setup := func() {
				m = NewModel(DefaultConfig())
				for k := range jobs {
					if _, err := m.Enqueue(btNow, EnqueueParams{Job: JobSpec{ID: "j" + strconv.Itoa(k), Queue: "q", Payload: []byte("p")}}); err != nil {
						b.Fatal(err)
					}
				}
				var err error
				if claimed, err = m.Claim(btNow, claim); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
			}
			setup()
			outs := make([]Outcome, 0, batch)
			result := []byte("ok")
			for b.Loop() {
				if len(claimed) == 0 {
					b.StopTimer()
					setup()
					b.StartTimer()
				}
				outs = outs[:0]
				for _, c := range claimed {
					outs = append(outs, Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: OutcomeCompleted, Result: result})
				}
				res, err := m.Finish(btNow, FinishParams{Outcomes: outs, Claim: &claim})
				if err != nil {
					b.Fatal(err)
				}
				claimed = res.Claimed
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/job")
		})
	}
}

// btJoinPlan is half the tasks as roots with an undo (queue "q"), one join
// after all of them, and the rest in a chain after the join: every root
// reaches every later task.
func btJoinPlan(id string, n int) Plan {
	p := Plan{ID: id}
	roots := n / 2
	var all []string
	for i := range roots {
		name := "r" + strconv.Itoa(i)
		all = append(all, name)
		p.Tasks = append(p.Tasks, TaskSpec{Name: name, Queue: "q", Payload: []byte("p"), Undo: &UndoSpec{Queue: "undo"}})
	}
	p.Tasks = append(p.Tasks, TaskSpec{Name: "join", Queue: "q", After: all})
	prev := "join"
	for i := len(p.Tasks); i < n; i++ {
		name := "c" + strconv.Itoa(i)
		p.Tasks = append(p.Tasks, TaskSpec{Name: name, Queue: "q", After: []string{prev}})
		prev = name
	}
	return p
}

// btUndoChainPlan is the shape of the reliability issue's item 5: roots
// tasks with an undo, a hub after all of them, a chain of chain tasks
// without undos after it, a task with an undo at its end, and a last task
// after that in queue "last" (left queued by btCompleteQueue): every root
// reaches the undo at the end through the whole chain.
func btUndoChainPlan(id string, roots, chain int) Plan {
	p := Plan{ID: id}
	var all []string
	for i := range roots {
		name := "r" + strconv.Itoa(i)
		all = append(all, name)
		p.Tasks = append(p.Tasks, TaskSpec{Name: name, Queue: "q", Undo: &UndoSpec{Queue: "undo"}})
	}
	p.Tasks = append(p.Tasks, TaskSpec{Name: "hub", Queue: "q", After: all})
	prev := "hub"
	for i := range chain {
		name := "c" + strconv.Itoa(i)
		p.Tasks = append(p.Tasks, TaskSpec{Name: name, Queue: "q", After: []string{prev}})
		prev = name
	}
	p.Tasks = append(p.Tasks, TaskSpec{Name: "end", Queue: "q", After: []string{prev}, Undo: &UndoSpec{Queue: "undo"}},
		TaskSpec{Name: "last", Queue: "last", After: []string{"end"}})
	return p
}

// btCompleteQueue completes jobs of queue until none is ready.
func btCompleteQueue(b *testing.B, m *Model, queue string) {
	for {
		claimed := btClaimAll(b, m, queue)
		if len(claimed) == 0 {
			return
		}
		var outs []Outcome
		for _, c := range claimed {
			outs = append(outs, Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: OutcomeCompleted})
			if len(outs) == m.cfg.Limits.MaxBatch {
				if _, err := m.Finish(btNow, FinishParams{Outcomes: outs}); err != nil {
					b.Fatal(err)
				}
				outs = nil
			}
		}
		if len(outs) > 0 {
			if _, err := m.Finish(btNow, FinishParams{Outcomes: outs}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// btCompleteAll claims and completes every ready job of queue.
func btCompleteAll(b *testing.B, m *Model, queue string) {
	claimed := btClaimAll(b, m, queue)
	for len(claimed) > 0 {
		k := min(len(claimed), m.cfg.Limits.MaxBatch)
		var outs []Outcome
		for _, c := range claimed[:k] {
			outs = append(outs, Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: OutcomeCompleted})
		}
		if _, err := m.Finish(btNow, FinishParams{Outcomes: outs}); err != nil {
			b.Fatal(err)
		}
		claimed = claimed[k:]
	}
}

// BenchmarkCancel cancels a 10,000-task workflow:
//   - queued: a layered plan (width 100, two dependencies per task) just
//     submitted (100 queued roots, the rest waiting);
//   - running: the same with the 100 roots running (told to stop);
//   - compensate: the same plan with an undo on each root, the roots
//     completed; the cancel (undo true) cancels the other 9,900 tasks and
//     starts compensation at once;
//   - compensate-join: 5,000 completed roots with an undo, a queued join
//     after all of them and a chain of 4,999 tasks after it; no root has
//     a compensated descendant, so nothing below them is searched;
//   - compensate-chain: 1,000 completed roots with an undo, a hub, a
//     chain of 2,000 tasks without undos and a task with an undo at its
//     end, all completed; every root's nearest compensated descendant is
//     that last undo, 2,000 tasks down (a walk per root: 2,000,000 steps;
//     one pass: 3,000).
func BenchmarkCancel(b *testing.B) {
	const n = 10_000
	cases := []struct {
		name    string
		plan    Plan
		undo    bool
		prepare func(b *testing.B, m *Model)
	}{
		{"queued", btLayeredPlan("w", n, 100, false), false, func(*testing.B, *Model) {}},
		{"running", btLayeredPlan("w", n, 100, false), false, func(b *testing.B, m *Model) { btClaimAll(b, m, "q") }},
		{"compensate", btLayeredPlan("w", n, 100, true), true, func(b *testing.B, m *Model) { btCompleteAll(b, m, "q") }},
		{"compensate-join", btJoinPlan("w", n), true, func(b *testing.B, m *Model) { btCompleteAll(b, m, "q") }},
		{"compensate-chain", btUndoChainPlan("w", 1000, 2000), true, func(b *testing.B, m *Model) { btCompleteQueue(b, m, "q") }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var m *Model
			setup := func() {
				m = NewModel(DefaultConfig())
				if _, err := m.Submit(btNow, SubmitParams{Plan: tc.plan}); err != nil {
					b.Fatal(err)
				}
				tc.prepare(b, m)
				runtime.GC()
			}
			setup()
			undo := tc.undo
			for b.Loop() {
				if m == nil {
					b.StopTimer()
					setup()
					b.StartTimer()
				}
				res, err := m.CancelWorkflow(btNow, CancelWorkflowParams{ID: "w", Undo: &undo})
				if err != nil || len(res.Cancelled) == 0 {
					b.Fatalf("cancel: %v", err)
				}
				if tc.undo && res.WorkflowState != weir.WorkflowCompensating {
					b.Fatalf("cancel: workflow %s, want compensating", res.WorkflowState)
				}
				m = nil
			}
		})
	}
}
