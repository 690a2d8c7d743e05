// Package conformance holds any engine.Store to engine.Model: one call,
// Run, replays the golden scenarios of spec/testdata, the contract's error
// cases, concurrency cases and random operation sequences against a store
// and the model, comparing replies and observable state after every step.
//
// Time is an input of the model, so the suite owns the clock: the
// constructor gets a func() time.Time that the store must use as "now" for
// every call (redisstore.Options.Clock, memstore.WithClock). See
// spec/conformance.md.
//
// Stability: this package, like the engine.Store contract it checks, is
// unstable (pre-1.0); its API may change in any release.
package conformance

import (
	"context"
	"io/fs"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// NewStore returns a fresh store, isolated from every other store it
// returned (its own namespace), configured with cfg and reading the
// current time from clock only. It may register cleanups with t.Cleanup.
// When the store implements io.Closer the suite closes it as soon as it is
// done with it (the random sequences make thousands of stores).
type NewStore func(t TB, cfg engine.Config, clock func() time.Time) engine.Store

// QueueInspector is an optional capability: a store that implements it has
// its queue contents (ready, delayed and running job IDs in their order)
// compared with the model's. engine.QueueContents uses nil for empty lists.
type QueueInspector interface {
	QueueContents(ctx context.Context, queue string) (engine.QueueContents, error)
}

// SequencesEnv raises (or lowers) the number of random sequences.
const SequencesEnv = "WEIR_CONFORMANCE_SEQUENCES"

// DefaultSequences is the number of random operation sequences Run drives
// when SequencesEnv is unset and no Sequences option is given.
const DefaultSequences = 1000

// Option changes what Run does.
type Option func(*options)

type options struct {
	partitions  int
	sequences   int
	scenarios   string // directory of golden scenarios
	regressions fs.FS  // regression tapes; nil: the suite's own
}

// Partitions runs every case but the golden scenarios (which keep their
// own configuration) and the regression tapes (recorded with one
// partition) in a namespace of n partitions (spec/partitions.md):
// it sets engine.Config.Partitions of the store and of the model of each
// case. 0 leaves every case's own (one partition).
func Partitions(n int) Option { return func(o *options) { o.partitions = n } }

// maker makes the suite's stores and models: the constructor given to
// Run, with the options that change every case's configuration.
type maker struct {
	newStore   NewStore
	partitions int
}

// config is cfg with the options applied.
func (mk maker) config(cfg engine.Config) engine.Config {
	if mk.partitions != 0 {
		cfg.Partitions = mk.partitions
	}
	return cfg
}

// store makes a store of mk.config(cfg).
func (mk maker) store(t TB, cfg engine.Config, clock func() time.Time) engine.Store {
	return mk.newStore(t, mk.config(cfg), clock)
}

// model makes a model of mk.config(cfg).
func (mk maker) model(cfg engine.Config) engine.Namespace { return engine.NewNamespace(mk.config(cfg)) }

// Sequences sets the default number of random sequences (SequencesEnv
// still overrides it).
func Sequences(n int) Option { return func(o *options) { o.sequences = n } }

// ScenarioDir replays the *.txt scenarios of dir instead of the golden
// scenarios embedded in package spec (spec/testdata).
func ScenarioDir(dir string) Option { return func(o *options) { o.scenarios = dir } }

// Regressions replays the regression tapes (*.txt) of dir instead of the
// suite's own conformance/testdata/regressions (embedded in the package).
func Regressions(dir fs.FS) Option { return func(o *options) { o.regressions = dir } }

// Run holds the stores newStore makes to engine.Model. Its subtests run in
// parallel. RunReport runs the same tests outside go test.
func Run(t *testing.T, newStore NewStore, opts ...Option) {
	run(goT{t}, newStore, opts)
}

func run(t suiteT, newStore NewStore, opts []Option) {
	o := options{sequences: DefaultSequences}
	for _, f := range opts {
		f(&o)
	}
	if v := os.Getenv(SequencesEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("%s=%q: want a count", SequencesEnv, v)
		}
		o.sequences = n
	}
	if err := (engine.Config{Partitions: o.partitions}).ValidatePartitions(); err != nil {
		t.Fatalf("conformance.Partitions: %v", err)
	}
	mk := maker{newStore: newStore, partitions: o.partitions}
	t.Run("Scenarios", func(t suiteT) {
		t.Parallel()
		runScenarios(t, mk, o)
	})
	t.Run("Errors", func(t suiteT) {
		t.Parallel()
		runErrors(t, mk)
	})
	t.Run("Concurrency", func(t suiteT) {
		t.Parallel()
		runConcurrency(t, mk)
	})
	t.Run("QueueContents", func(t suiteT) {
		t.Parallel()
		s := mk.store(t, engine.DefaultConfig(), newClock().Now)
		defer closeStore(s)
		if _, ok := s.(QueueInspector); !ok {
			t.Skip("the store does not implement conformance.QueueInspector: queue contents are not compared, only Queues() counts")
		}
	})
	t.Run("Schedules", func(t suiteT) {
		t.Parallel()
		runSchedules(t, mk)
	})
	t.Run("Workers", func(t suiteT) {
		t.Parallel()
		runWorkers(t, mk)
	})
	t.Run("Attempts", func(t suiteT) {
		t.Parallel()
		runAttempts(t, mk)
	})
	t.Run("Trace", func(t suiteT) {
		t.Parallel()
		runTrace(t, mk)
	})
	t.Run("ReadyAt", func(t suiteT) {
		t.Parallel()
		runReadyAt(t, mk)
	})
	t.Run("Sequences", func(t suiteT) {
		t.Parallel()
		runSequences(t, mk, o.sequences)
	})
	t.Run("Regressions", func(t suiteT) {
		t.Parallel()
		// a tape replays the draws of a sequence of one partition: its
		// claims, and so the draws that follow them, hold there only
		runRegressions(t, maker{newStore: newStore}, o.regressions)
	})
}

// Clock is the suite's test clock: a millisecond count that only the suite
// moves.
type Clock struct{ ms atomic.Int64 }

// epoch is where every clock of the suite starts.
var epoch = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

func newClock() *Clock {
	c := &Clock{}
	c.ms.Store(epoch.UnixMilli())
	return c
}

// Now is the clock's time; pass it to the store.
func (c *Clock) Now() time.Time { return time.UnixMilli(c.ms.Load()).UTC() }

// Set moves the clock to t (whole milliseconds).
func (c *Clock) Set(t time.Time) { c.ms.Store(t.UnixMilli()) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

func closeStore(s engine.Store) {
	if c, ok := s.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}
