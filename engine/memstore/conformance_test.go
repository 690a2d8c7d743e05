package memstore_test

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// The store is a conformance.QueueInspector: the suite compares its queue
// contents with the model's.
var _ conformance.QueueInspector = (*memstore.Store)(nil)

func newConformanceStore(_ conformance.TB, cfg engine.Config, clock func() time.Time) engine.Store {
	return memstore.New(memstore.WithConfig(cfg), memstore.WithClock(clock))
}

// TestConformance holds the in-process store to the model, with
// conformance.DefaultSequences random sequences, or 100 (one rapid.Check
// call: every kind of step) when WEIR_CONFORMANCE_SMALL is 1: CI's race
// suite sets it (.ci/run), as CI's conformance step runs this test right
// after with 3,500 without -race.
func TestConformance(t *testing.T) {
	n := conformance.DefaultSequences
	switch v := os.Getenv("WEIR_CONFORMANCE_SMALL"); v {
	case "", "0":
	case "1":
		n = 100
	default:
		t.Fatalf("WEIR_CONFORMANCE_SMALL=%q: want 1 (CI's race suite) or unset", v)
	}
	conformance.Run(t, newConformanceStore, conformance.Sequences(n))
}

// TestConformancePartitioned holds the in-process store of 8 partitions
// to the model of 8 (spec/partitions.md).
func TestConformancePartitioned(t *testing.T) {
	conformance.Run(t, newConformanceStore, conformance.Partitions(8))
}

// doublePush is a broken store: every finish reports each job it pushed
// twice (as a store that promotes a dependent twice would).
type doublePush struct{ engine.Store }

func (s doublePush) Finish(ctx context.Context, p engine.FinishParams) (engine.FinishResult, error) {
	r, err := s.Store.Finish(ctx, p)
	for i := range r.Settled {
		for _, ps := range r.Settled[i].Pushed {
			if !strings.HasSuffix(ps.JobID, "/undo") {
				r.Settled[i].Pushed = append(r.Settled[i].Pushed, ps)
				break
			}
		}
	}
	return r, err
}

// keepsDependents is a broken store: a task cancelled because a dependency
// did not complete (a non-Always dependent) still looks waiting.
type keepsDependents struct{ engine.Store }

func (s keepsDependents) GetWorkflow(ctx context.Context, id string) (weir.Workflow, error) {
	w, err := s.Store.GetWorkflow(ctx, id)
	for i, t := range w.Tasks {
		if t.State == weir.Cancelled && !t.Always && strings.HasPrefix(t.Error, "dependency ") {
			w.Tasks[i].State = weir.Waiting
			w.Tasks[i].Error = ""
		}
	}
	return w, err
}

// losesEvents is a broken store: its event stream misses the events of
// started attempts (as a claim that forgot its XADD would).
type losesEvents struct{ engine.Store }

func (s losesEvents) Events(ctx context.Context, p engine.EventsParams) (engine.EventPage, error) {
	pg, err := s.Store.(*memstore.Store).Events(ctx, p)
	pg.Events = slices.DeleteFunc(pg.Events, func(e weir.Event) bool { return e.Type == weir.EventStarted })
	return pg, err
}

// dropsPartitions is a broken store of partitions: a job list's page
// after the first partition is empty (as a store that followed only
// partition 0 of its cursors would give).
type dropsPartitions struct{ engine.Store }

func (s dropsPartitions) ListJobs(ctx context.Context, p weir.ListJobsParams) (weir.JobPage, error) {
	if strings.Contains(p.Cursor, "|") && !strings.HasPrefix(p.Cursor, "0|") {
		return weir.JobPage{}, nil
	}
	return s.Store.ListJobs(ctx, p)
}

// TestBrokenStoreHelper runs the suite on the broken store named by
// WEIR_BROKEN_STORE; it is run in a child process by
// TestConformanceCatchesBrokenStores.
func TestBrokenStoreHelper(t *testing.T) {
	var wrap func(engine.Store) engine.Store
	var opts []conformance.Option
	switch os.Getenv("WEIR_BROKEN_STORE") {
	case "":
		t.Skip("run by TestConformanceCatchesBrokenStores")
	case "double_push":
		wrap = func(s engine.Store) engine.Store { return doublePush{s} }
	case "keeps_dependents":
		wrap = func(s engine.Store) engine.Store { return keepsDependents{s} }
	case "loses_events":
		wrap = func(s engine.Store) engine.Store { return losesEvents{s} }
	case "drops_partitions":
		wrap = func(s engine.Store) engine.Store { return dropsPartitions{s} }
		opts = append(opts, conformance.Partitions(8))
	default:
		t.Fatalf("unknown broken store %q", os.Getenv("WEIR_BROKEN_STORE"))
	}
	conformance.Run(t, func(t conformance.TB, cfg engine.Config, clock func() time.Time) engine.Store {
		return wrap(memstore.New(memstore.WithConfig(cfg), memstore.WithClock(clock)))
	}, opts...)
}

// TestConformanceCatchesBrokenStores: the suite fails on stores that break
// the contract, and says where.
func TestConformanceCatchesBrokenStores(t *testing.T) {
	if os.Getenv("WEIR_BROKEN_STORE") != "" {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for _, c := range []struct{ name, want, also string }{
		// the checked-in regression tape catches double_push without
		// random luck
		{"double_push", "--- FAIL: TestBrokenStoreHelper/Sequences", "--- FAIL: TestBrokenStoreHelper/Regressions/dependent_pushed_twice"},
		{"keeps_dependents", "--- FAIL: TestBrokenStoreHelper/Sequences", "regression tape"},
		{"loses_events", "--- FAIL: TestBrokenStoreHelper/Sequences", "events differ"},
		{"drops_partitions", "--- FAIL: TestBrokenStoreHelper/Sequences", "list jobs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenStoreHelper$", "-test.count=1", "-test.v",
				"-rapid.nofailfile", "-rapid.shrinktime=5s")
			cmd.Env = append(os.Environ(), "WEIR_BROKEN_STORE="+c.name, conformance.SequencesEnv+"=200")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a broken store:\n%s", tail(out))
			}
			if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) {
				t.Fatal(err)
			}
			for _, want := range []string{c.want, c.also} {
				if !strings.Contains(string(out), want) {
					t.Fatalf("output lacks %q:\n%s", want, tail(out))
				}
			}
			if !strings.Contains(string(out), "QueueContents") || !strings.Contains(string(out), "does not implement conformance.QueueInspector") {
				t.Fatalf("the missing QueueInspector was not skipped with a reason:\n%s", tail(out))
			}
		})
	}
}

func tail(b []byte) string {
	const n = 6000
	if len(b) > n {
		return "...\n" + string(b[len(b)-n:])
	}
	return string(b)
}
