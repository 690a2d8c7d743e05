package conformance_test

import (
	"context"
	"github.com/weirflow/weir"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

func newMem(_ conformance.TB, cfg engine.Config, clock func() time.Time) engine.Store {
	return memstore.New(memstore.WithConfig(cfg), memstore.WithClock(clock))
}

// withoutInspector is the in-process store without its QueueContents
// method (the field hides it): the suite skips its QueueContents case.
type withoutInspector struct {
	*memstore.Store
	QueueContents struct{}
}

func newMemWithoutInspector(_ conformance.TB, cfg engine.Config, clock func() time.Time) engine.Store {
	return withoutInspector{Store: memstore.New(memstore.WithConfig(cfg), memstore.WithClock(clock))}
}

func byName(r conformance.Report) map[string]conformance.Result {
	m := map[string]conformance.Result{}
	for _, res := range r.Results {
		m[res.Name] = res
	}
	return m
}

// TestRunReportPasses: outside go test's runner, the suite passes the
// in-process store, runs the sequences and replays the regression tapes;
// a case the store lacks a capability for is skipped with the reason.
func TestRunReportPasses(t *testing.T) {
	rep := conformance.RunReport(context.Background(), newMemWithoutInspector, conformance.Sequences(100))
	if !rep.OK() || rep.Passed < 50 {
		t.Fatalf("report: %d passed, %d failed: %+v", rep.Passed, rep.Failed, rep.Results)
	}
	if rep.Sequences < 100 {
		t.Errorf("%d sequences, want at least 100", rep.Sequences)
	}
	m := byName(rep)
	if m["Regressions/dependent_pushed_twice"].Status != conformance.Passed {
		t.Errorf("regression tape: %+v", m["Regressions/dependent_pushed_twice"])
	}
	qc := m["QueueContents"]
	if qc.Status != conformance.Skipped || !strings.Contains(strings.Join(qc.Output, "\n"), "QueueInspector") {
		t.Errorf("QueueContents without an inspector: %+v, want skipped with the reason", qc)
	}
	if rep.Skipped != 1 {
		t.Errorf("%d skipped, want 1", rep.Skipped)
	}
}

// twicePushed reports every push of a finish twice.
type twicePushed struct{ engine.Store }

func (s twicePushed) Finish(ctx context.Context, p engine.FinishParams) (engine.FinishResult, error) {
	r, err := s.Store.Finish(ctx, p)
	for i := range r.Settled {
		r.Settled[i].Pushed = append(r.Settled[i].Pushed, r.Settled[i].Pushed...)
	}
	return r, err
}

// panicky panics when asked for its queues.
type panicky struct{ engine.Store }

func (panicky) Queues(context.Context) ([]weir.QueueInfo, error) { panic("queues exploded") }

// TestRunReportFails: failures (from the regression tape alone, with no
// random sequence) and panics of a store are reported as failed tests,
// with what happened.
func TestRunReportFails(t *testing.T) {
	rep := conformance.RunReport(context.Background(), func(t conformance.TB, cfg engine.Config, clock func() time.Time) engine.Store {
		return twicePushed{newMem(t, cfg, clock)}
	}, conformance.Sequences(0))
	if rep.OK() {
		t.Fatal("a store that pushes twice passed")
	}
	reg := byName(rep)["Regressions/dependent_pushed_twice"]
	out := strings.Join(reg.Output, "\n")
	if reg.Status != conformance.Failed || !strings.Contains(out, "finish differs") || !strings.Contains(out, "regression tape") {
		t.Errorf("regression tape on a store that pushes twice: %+v", reg)
	}
	if s := byName(rep)["Sequences"]; s.Status != conformance.Skipped {
		t.Errorf("Sequences with a count of 0: %+v, want skipped", s)
	}

	rep = conformance.RunReport(context.Background(), func(t conformance.TB, cfg engine.Config, clock func() time.Time) engine.Store {
		return panicky{newMem(t, cfg, clock)}
	}, conformance.Sequences(0))
	ek := byName(rep)["Errors/UnknownIDs"]
	if ek.Status != conformance.Failed || !strings.Contains(strings.Join(ek.Output, "\n"), "queues exploded") {
		t.Errorf("a panicking store: %+v, want failed with the panic", ek)
	}
}

// TestRunReportCanceled: with ctx done, no test runs.
func TestRunReportCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep := conformance.RunReport(ctx, newMem)
	if rep.Passed != 0 || rep.Failed != 0 || rep.Skipped == 0 {
		t.Fatalf("canceled run: %d passed, %d failed, %d skipped", rep.Passed, rep.Failed, rep.Skipped)
	}
}
