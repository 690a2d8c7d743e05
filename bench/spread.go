package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// SpreadScenarios are the shapes a spread runs (Options.Spread), in run
// order.
var SpreadScenarios = []string{ScenarioPlain, ScenarioChain, ScenarioFanin}

// Sizes of a spread's workflows and worker.
const (
	// SpreadChainTasks is the length of a spread's chain workflows.
	SpreadChainTasks = 5
	// SpreadFaninWidth is the parallel tasks of a spread's fan-in
	// workflows (joined by one more).
	SpreadFaninWidth = 10
	// SpreadConcurrency is the concurrency of a spread run's one worker.
	SpreadConcurrency = 50
)

// checkSpread validates the spread options (before the defaults fill
// Scenarios).
func (o Options) checkSpread() error {
	if o.Cluster == "" {
		return fmt.Errorf("%w: a spread measures a Redis Cluster's masters: give the cluster (--cluster)", ErrUsage)
	}
	if o.Partitions != 0 {
		return fmt.Errorf("%w: a spread sets the partitions of each run: partitions %d does not apply", ErrUsage, o.Partitions)
	}
	seen := map[int]bool{}
	for _, p := range o.Spread {
		if p < 1 || p > engine.MaxPartitions {
			return fmt.Errorf("%w: spread: partition count %d outside [1, %d]", ErrUsage, p, engine.MaxPartitions)
		}
		if seen[p] {
			return fmt.Errorf("%w: spread: partition count %d given twice", ErrUsage, p)
		}
		seen[p] = true
	}
	for _, s := range o.Scenarios {
		if !slices.Contains(SpreadScenarios, s) {
			return fmt.Errorf("%w: a spread runs the scenarios %s, not %q", ErrUsage, strings.Join(SpreadScenarios, ","), s)
		}
	}
	return nil
}

// spread runs each shape of the scenarios at each partition count of
// Options.Spread, each on a namespace of its own, deleted after it.
func (r *runner) spread(ctx context.Context) error {
	o := r.opts
	base := r.srv.namespace
	defer func() { r.srv.namespace = base }()
	for _, p := range o.Spread {
		for _, shape := range SpreadScenarios {
			if !o.has(shape) {
				continue
			}
			row, err := r.spreadRun(ctx, shape, p)
			r.rep.KeysLeft += row.KeysLeft
			if err != nil {
				return fmt.Errorf("spread %s at %d partitions: %w", shape, p, err)
			}
			r.rep.Spread = append(r.rep.Spread, row)
		}
	}
	fillSpreadRatios(r.rep.Spread)
	return nil
}

// spreadRun is one run of a spread: shape at p partitions on a new
// namespace, deleted (and its keys counted) before it returns.
func (r *runner) spreadRun(ctx context.Context, shape string, p int) (row SpreadRow, err error) {
	o := r.opts
	ns := newNamespace()
	r.srv.namespace = ns
	row = SpreadRow{Shape: shape, Partitions: p, Unit: "workflow", Namespace: ns}
	switch shape {
	case ScenarioPlain:
		row.Unit, row.Units = "job", o.SpreadJobs
	case ScenarioChain:
		row.Units = o.SpreadChains
	case ScenarioFanin:
		row.Units = o.SpreadFanins
	}
	o.logf("spread: %s, %d %ss, %d partitions, namespace %s", shape, row.Units, row.Unit, p, ns)
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		cerr := r.srv.clean(cctx)
		if cerr == nil {
			row.KeysLeft, cerr = r.srv.keysLeft(cctx)
		}
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean namespace %s: %w", ns, cerr))
		}
	}()
	store, err := redisstore.New(r.srv.rdb, redisstore.Options{Namespace: ns, Config: engine.Config{Partitions: p}})
	if err != nil {
		return row, err
	}
	if err := store.Load(ctx); err != nil {
		return row, fmt.Errorf("load scripts: %w", err)
	}
	if o.EventsOff {
		if err := store.SetEventsOff(ctx, true); err != nil {
			return row, fmt.Errorf("events off: %w", err)
		}
	}
	ms, err := r.srv.clusterMasters(ctx)
	if err != nil {
		return row, err
	}
	slots, err := r.srv.partitionSlots(ctx, ns, p)
	if err != nil {
		return row, err
	}
	parts, err := partitionsPerMaster(slots, ms)
	if err != nil {
		return row, err
	}

	cl := client.New(store)
	q := noopQueue("spread-" + shape)
	kind := worker.EventWorkflowEnded
	if shape == ScenarioPlain {
		kind = worker.EventSucceeded
	}
	if err := r.produce(ctx, row.Units, func(int) error { return spreadUnit(ctx, cl, q, shape) }); err != nil {
		return row, err
	}
	prog := newProgress(kind, row.Units)
	w := worker.New(store, worker.Config{Concurrency: SpreadConcurrency, Observer: prog.observe,
		Logger: discardLogger, ShutdownTimeout: 10 * time.Second})
	worker.Handle(w, q, noop)
	before, err := r.srv.perMaster(ctx)
	if err != nil {
		return row, err
	}
	trips := r.srv.trips.Load()
	start := time.Now()
	werr := prog.runUntil(ctx, w, nil)
	row.Ended = int(prog.done.Load()) - int(prog.bad.Load())
	if werr != nil {
		return row, werr
	}
	trips = r.srv.trips.Load() - trips
	after, err := r.srv.perMaster(ctx)
	if err != nil {
		return row, err
	}
	if row.Masters, err = spreadMasters(ms, parts, before, after); err != nil {
		return row, err
	}
	n := float64(row.Units)
	row.Seconds = prog.lastTime().Sub(start).Seconds()
	row.UnitsPerS = ratio(n, row.Seconds)
	var cpu int64
	for _, m := range row.Masters {
		cpu += m.CPUUs
	}
	row.CPUUsPerUnit = float64(cpu) / n
	d := scriptDelta(before, after)
	row.ScriptUsPerUnit = float64(d.scriptUsec) / n
	row.ScriptCallsPerUnit = float64(d.scriptCall) / n
	row.RoundTripsPerUnit = float64(trips) / n
	return row, nil
}

// spreadUnit enqueues or submits one unit of shape on q.
func spreadUnit(ctx context.Context, cl *client.Client, q client.Queue[empty, empty], shape string) error {
	switch shape {
	case ScenarioPlain:
		_, err := client.Enqueue(ctx, cl, q, empty{})
		return err
	case ScenarioChain:
		return cl.Submit(ctx, chainWorkflow(q, SpreadChainTasks))
	case ScenarioFanin:
		return cl.Submit(ctx, faninWorkflow(q, SpreadFaninWidth))
	}
	return fmt.Errorf("bench: no spread shape %q", shape)
}

// produce calls f n times from the Producers in parallel and returns the
// first errors.
func (r *runner) produce(ctx context.Context, n int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, r.opts.Producers)
	for pi := range r.opts.Producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) || ctx.Err() != nil {
					return
				}
				if err := f(int(i)); err != nil {
					errs[pi] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("enqueue or submit: %w", err)
	}
	return ctx.Err()
}
