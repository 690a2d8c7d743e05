package engine

import (
	"fmt"
	"github.com/weirflow/weir"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPartitionsOnePartitionUsed: a namespace of 4 partitions whose
// records all land in partition 0 answers every call as a namespace of one
// partition does (claims visit the empty partitions and take nothing
// there; a jobs cursor names partition 0): random operations on both, each
// reply and the whole state after each step compared. A method that
// forgot to dispatch, or a merge that changed a reply's shape, differs.
func TestPartitionsOnePartitionUsed(t *testing.T) {
	in0 := func(prefix string, n int) []string {
		var out []string
		for k := 0; len(out) < n; k++ {
			if id := prefix + strconv.Itoa(k); Partition(id, 4) == 0 {
				out = append(out, id)
			}
		}
		return out
	}
	wfs, plain := in0("w", 3), in0("j", 3)
	queues := []string{"q1", "q2", "q3"}
	rapid.Check(t, func(rt *rapid.T) {
		cfg := DefaultConfig()
		cfg.Limits.MaxBackoff = 700 * time.Millisecond
		cfg.Retention = time.Duration(rapid.SampledFrom([]int{0, 800, 100000}).Draw(rt, "retention")) * time.Millisecond
		one := NewModel(cfg)
		cfg.Partitions = 4
		four := NewPartitioned(cfg)
		now := rtT0
		var leases []LeaseRef
		same := func(op string, a, b any, ea, eb error) {
			if fmt.Sprint(ea) != fmt.Sprint(eb) || !reflect.DeepEqual(a, b) {
				rt.Fatalf("%s:\none  %+v (%v)\nfour %+v (%v)", op, a, ea, b, eb)
			}
		}
		claimP := func() ClaimParams {
			qs := []string{rapid.SampledFrom(queues).Draw(rt, "q")}
			if rapid.Bool().Draw(rt, "2q") {
				qs = append(qs, rapid.SampledFrom(queues).Draw(rt, "q2"))
			}
			return ClaimParams{Queues: qs, Max: rapid.IntRange(1, 3).Draw(rt, "max"), Lease: time.Duration(rapid.SampledFrom([]int{50, 1000}).Draw(rt, "lease")) * time.Millisecond}
		}
		noteClaims := func(cs []Claimed) {
			for _, c := range cs {
				leases = append(leases, LeaseRef{JobID: c.Job.ID, Token: c.Lease.Token})
			}
		}
		anyJob := func() string {
			ids := slices.Clone(plain)
			for _, w := range wfs {
				ids = append(ids, weir.TaskJobID(w, "t0"), weir.TaskJobID(w, "t1"), weir.UndoJobID(w, "t0"))
			}
			return rapid.SampledFrom(ids).Draw(rt, "job")
		}
		steps := rapid.IntRange(5, 40).Draw(rt, "steps")
		for step := range steps {
			op := rapid.IntRange(0, 17).Draw(rt, "op")
			name := fmt.Sprintf("step %d op %d", step, op)
			switch op {
			case 0, 1: // submit
				p := Plan{ID: rapid.SampledFrom(wfs).Draw(rt, "wf"), FailFast: rapid.Bool().Draw(rt, "ff")}
				for i := range rapid.IntRange(1, 3).Draw(rt, "tasks") {
					ts := TaskSpec{Name: "t" + strconv.Itoa(i), Queue: rapid.SampledFrom(queues[:2]).Draw(rt, "tq"),
						MaxAttempts: rapid.IntRange(0, 2).Draw(rt, "att"), Priority: rapid.IntRange(-1, 1).Draw(rt, "prio")}
					if i > 0 && rapid.Bool().Draw(rt, "dep") {
						ts.After = []string{"t0"}
					}
					if rapid.IntRange(0, 2).Draw(rt, "undo") == 0 {
						ts.Undo = &UndoSpec{Queue: "q3"}
					}
					p.Tasks = append(p.Tasks, ts)
				}
				a, ea := one.Submit(now, SubmitParams{Plan: p})
				b, eb := four.Submit(now, SubmitParams{Plan: p})
				same(name+" submit", a, b, ea, eb)
			case 2: // enqueue
				s := JobSpec{ID: rapid.SampledFrom(plain).Draw(rt, "jid"), Queue: rapid.SampledFrom(queues[:2]).Draw(rt, "jq"),
					Priority: rapid.IntRange(-1, 1).Draw(rt, "prio"), Key: rapid.SampledFrom([]string{"", "A", "B"}).Draw(rt, "key")}
				if rapid.Bool().Draw(rt, "delay") {
					s.RunAt = now.Add(time.Duration(rapid.IntRange(-100, 1000).Draw(rt, "runat")) * time.Millisecond)
				}
				if rapid.Bool().Draw(rt, "unique") {
					s.Unique = &Unique{Key: "k"}
				}
				a, ea := one.Enqueue(now, EnqueueParams{Job: s})
				b, eb := four.Enqueue(now, EnqueueParams{Job: s})
				same(name+" enqueue", a, b, ea, eb)
			case 3, 4: // claim
				p := claimP()
				a, ea := one.Claim(now, p)
				b, eb := four.Claim(now, p)
				same(name+" claim", a, b, ea, eb)
				noteClaims(a)
			case 5, 6: // finish, maybe with a claim
				var fp FinishParams
				for range rapid.IntRange(0, 2).Draw(rt, "nout") {
					if len(leases) == 0 {
						break
					}
					l := rapid.SampledFrom(leases).Draw(rt, "lease")
					fp.Outcomes = append(fp.Outcomes, Outcome{JobID: l.JobID, Token: l.Token,
						Kind: rapid.SampledFrom([]OutcomeKind{OutcomeCompleted, OutcomeFailed, OutcomeCancelled, OutcomeReleased}).Draw(rt, "kind")})
				}
				if len(fp.Outcomes) == 0 || rapid.Bool().Draw(rt, "andclaim") {
					c := claimP()
					fp.Claim = &c
				}
				a, ea := one.Finish(now, fp)
				b, eb := four.Finish(now, fp)
				same(name+" finish", a, b, ea, eb)
				noteClaims(a.Claimed)
			case 7: // heartbeat
				var hp HeartbeatParams
				hp.Extend = time.Second
				for range rapid.IntRange(0, 2).Draw(rt, "nhb") {
					if len(leases) > 0 {
						hp.Leases = append(hp.Leases, rapid.SampledFrom(leases).Draw(rt, "hb"))
					}
				}
				a, ea := one.Heartbeat(now, hp)
				b, eb := four.Heartbeat(now, hp)
				same(name+" heartbeat", a, b, ea, eb)
			case 8, 9: // time passes
				now = now.Add(time.Duration(rapid.SampledFrom([]int{5, 30, 200, 1500}).Draw(rt, "adv")) * time.Millisecond)
			case 10: // expire
				p := ExpireParams{Max: rapid.IntRange(0, 2).Draw(rt, "emax")}
				a, ea := one.ExpireLeases(now, p)
				b, eb := four.ExpireLeases(now, p)
				same(name+" expire", a, b, ea, eb)
			case 11: // cancel
				if rapid.Bool().Draw(rt, "cwf") {
					p := CancelWorkflowParams{ID: rapid.SampledFrom(wfs).Draw(rt, "cw")}
					a, ea := one.CancelWorkflow(now, p)
					b, eb := four.CancelWorkflow(now, p)
					same(name+" cancel workflow", a, b, ea, eb)
				} else {
					p := CancelJobParams{ID: anyJob()}
					a, ea := one.CancelJob(now, p)
					b, eb := four.CancelJob(now, p)
					same(name+" cancel job", a, b, ea, eb)
				}
			case 12: // queue settings
				q := rapid.SampledFrom(append(queues, "bad name")).Draw(rt, "sq")
				n := rapid.IntRange(0, 2).Draw(rt, "n")
				switch rapid.IntRange(0, 5).Draw(rt, "qop") {
				case 0:
					same(name+" pause", nil, nil, one.PauseQueue(now, q), four.PauseQueue(now, q))
				case 1:
					same(name+" resume", nil, nil, one.ResumeQueue(now, q), four.ResumeQueue(now, q))
				case 2:
					a, ea := one.PurgeQueue(now, q)
					b, eb := four.PurgeQueue(now, q)
					same(name+" purge", a, b, ea, eb)
				case 3:
					p := LimitQueueParams{Queue: q, Concurrency: n}
					same(name+" limit", nil, nil, one.LimitQueue(now, p), four.LimitQueue(now, p))
				case 4:
					p := RateLimitQueueParams{Queue: q, Limit: n, Period: 100 * time.Millisecond}
					same(name+" rate", nil, nil, one.RateLimitQueue(now, p), four.RateLimitQueue(now, p))
				case 5:
					p := LimitKeysParams{Queue: q, Concurrency: n}
					same(name+" keys", nil, nil, one.LimitKeys(now, p), four.LimitKeys(now, p))
				}
			case 13: // retry, delete
				id := anyJob()
				if rapid.Bool().Draw(rt, "retry") {
					a, ea := one.RetryJob(now, RetryJobParams{ID: id})
					b, eb := four.RetryJob(now, RetryJobParams{ID: id})
					same(name+" retry", a, b, ea, eb)
				} else if rapid.Bool().Draw(rt, "delwf") {
					w := rapid.SampledFrom(wfs).Draw(rt, "dw")
					same(name+" delete workflow", nil, nil, one.DeleteWorkflow(now, w), four.DeleteWorkflow(now, w))
				} else {
					same(name+" delete job", nil, nil, one.DeleteJob(now, id), four.DeleteJob(now, id))
				}
			case 14: // rerun
				p := RerunWorkflowParams{ID: rapid.SampledFrom(wfs).Draw(rt, "rw")}
				a, ea := one.RerunWorkflow(now, p)
				b, eb := four.RerunWorkflow(now, p)
				same(name+" rerun", a, b, ea, eb)
			case 15: // progress
				if len(leases) > 0 {
					l := rapid.SampledFrom(leases).Draw(rt, "pl")
					p := ProgressParams{JobID: l.JobID, Token: l.Token, Checkpoint: []byte("c")}
					same(name+" progress", nil, nil, one.Progress(now, p), four.Progress(now, p))
				}
			case 16: // signal (no signal tasks: refusals)
				p := SignalParams{Workflow: rapid.SampledFrom(wfs).Draw(rt, "sw"), Task: "t0", Kind: OutcomeCompleted}
				a, ea := one.Signal(now, p)
				b, eb := four.Signal(now, p)
				same(name+" signal", a, b, ea, eb)
			case 17: // lists, following cursors
				lp := weir.ListParams{Limit: rapid.IntRange(1, 2).Draw(rt, "wl")}
				for range 4 {
					a, ea := one.ListWorkflows(now, lp)
					b, eb := four.ListWorkflows(now, lp)
					same(name+" list workflows", a, b, ea, eb)
					if a.NextCursor == "" {
						break
					}
					lp.Cursor = a.NextCursor
				}
				jp := weir.ListJobsParams{Queue: rapid.SampledFrom(queues).Draw(rt, "lq"),
					State: rapid.SampledFrom([]weir.JobList{weir.ListReady, weir.ListDelayed, weir.ListRunning, weir.ListFailed, weir.ListCancelled, weir.ListCompleted}).Draw(rt, "ls"),
					Limit: rapid.IntRange(1, 2).Draw(rt, "ll")}
				fp := jp
				for range 4 {
					a, ea := one.ListJobs(now, jp)
					b, eb := four.ListJobs(now, fp)
					if b.NextCursor != "" {
						if !strings.HasPrefix(b.NextCursor, "0|") || b.NextCursor[2:] != a.NextCursor {
							rt.Fatalf("%s: list jobs cursor %q, one partition's %q", name, b.NextCursor, a.NextCursor)
						}
						fp.Cursor = b.NextCursor
						b.NextCursor = b.NextCursor[2:]
					}
					same(name+" list jobs", a, b, ea, eb)
					if a.NextCursor == "" {
						break
					}
					jp.Cursor = a.NextCursor
				}
			}
			// the whole state
			same(name+" queues", one.Queues(now), four.Queues(now), nil, nil)
			for _, q := range queues {
				same(name+" contents "+q, one.QueueContents(now, q), four.QueueContents(now, q), nil, nil)
			}
			for _, w := range wfs {
				a, ea := one.GetWorkflow(now, w)
				b, eb := four.GetWorkflow(now, w)
				same(name+" workflow "+w, a, b, ea, eb)
			}
			for _, id := range append(slices.Clone(plain), anyJob()) {
				a, ea := one.GetJob(now, id)
				b, eb := four.GetJob(now, id)
				same(name+" job "+id, a, b, ea, eb)
			}
			same(name+" events", one.TakeEvents(), four.TakeEvents(), nil, nil)
			same(name+" sweep stops", one.TakeSweepStops(), four.TakeSweepStops(), nil, nil)
			same(name+" next due", one.NextDue(queues), four.NextDue(queues), nil, nil)
			// a call refused before any partition, or a heartbeat of no
			// lease, moves no partition's clock: never later than one's
			if four.Now().After(one.Now()) {
				rt.Fatalf("%s: now %v, one partition's %v", name, four.Now(), one.Now())
			}
		}
	})
}
