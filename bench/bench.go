package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
)

// runner is one Run in progress.
type runner struct {
	opts   Options
	srv    *server
	store  *redisstore.Store
	client *client.Client
	rep    *Report
}

// Run measures weir on the Redis of opts.RedisURL or the cluster of
// opts.Cluster (an embedded miniredis when both are empty) and returns the report. It works in a namespace of its own,
// deleted before it returns, also after an error. Sizes left zero in opts
// take those of Defaults.
func Run(ctx context.Context, opts Options) (*Report, error) {
	return RunWith(ctx, opts, Defaults())
}

// RunWith is Run with the zero sizes of opts taken from defaults (Defaults
// or Quick).
func RunWith(ctx context.Context, opts Options, defaults Options) (rep *Report, err error) {
	began := time.Now()
	machine := thisMachine(os.ReadFile)
	opts, err = opts.withDefaults(defaults)
	if err != nil {
		return nil, err
	}
	srv, err := openServer(ctx, opts.RedisURL, opts.Cluster)
	if err != nil {
		return nil, err
	}
	defer srv.close()
	rep = &Report{Server: RedisServer, RedisVersion: srv.version, Namespace: srv.namespace,
		GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), CeilingClients: opts.CeilingClients,
		CommandsSource: "INFO commandstats (commands inside scripts included, INFO excluded)",
		Machine:        machine, CallPath: CallPathScripts}
	if srv.masters > 0 {
		rep.Masters = srv.masters
		rep.CommandsSource = fmt.Sprintf("INFO commandstats summed over the cluster's %d masters (commands inside scripts included, INFO excluded)", srv.masters)
	}
	rep.Partitions = opts.Partitions
	if srv.lite {
		rep.Server = LiteServer
		if srv.embedded != nil {
			rep.Server = EmbeddedServer
		}
		rep.CommandsSource = "INFO stats total_commands_processed of miniredis (commands inside scripts included, INFO excluded)"
	}
	defer func() {
		rep.Machine.LoadAfter = currentLoad(os.ReadFile)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		cerr := srv.clean(cctx)
		if cerr == nil {
			var n int
			n, cerr = srv.keysLeft(cctx)
			rep.KeysLeft += n // a spread's runs add theirs
		}
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean namespace %s: %w", srv.namespace, cerr))
		}
		rep.WallSeconds = time.Since(began).Seconds()
		if err != nil {
			rep = nil
		}
	}()
	store, err := redisstore.New(srv.rdb, redisstore.Options{Namespace: srv.namespace, Config: engine.Config{Partitions: opts.Partitions}})
	if err != nil {
		return rep, err
	}
	if err := store.Load(ctx); err != nil {
		return rep, fmt.Errorf("load scripts: %w", err)
	}
	if opts.EventsOff {
		if err := store.SetEventsOff(ctx, true); err != nil {
			return rep, fmt.Errorf("events off: %w", err)
		}
	}
	rep.EventsOff = opts.EventsOff
	r := &runner{opts: opts, srv: srv, store: store, client: client.New(store), rep: rep}
	if len(opts.Spread) > 0 {
		err = r.spread(ctx)
	} else {
		err = r.run(ctx)
	}
	rep.CallPath = callPath(store)
	return rep, err
}

func (r *runner) run(ctx context.Context) error {
	o := r.opts
	where := r.rep.Server
	if r.rep.RedisVersion != "" {
		where += " " + r.rep.RedisVersion
	}
	o.logf("%s, namespace %s", where, r.srv.namespace)
	if err := r.ceiling(ctx, "before the scenarios"); err != nil {
		return err
	}
	if o.has(ScenarioPlain) {
		for _, c := range o.Concurrencies {
			o.logf("plain: %d jobs at concurrency %d", o.Jobs, c)
			if err := r.add(r.plain(ctx, c)); err != nil {
				return err
			}
		}
		if o.WorkerCommand != nil {
			for _, p := range o.Processes {
				o.logf("plain: %d jobs, %d worker processes at concurrency %d", o.Jobs, p, o.ProcessConcurrency)
				if err := r.add(r.plainProcesses(ctx, p, o.ProcessConcurrency)); err != nil {
					return err
				}
			}
		}
	}
	if o.has(ScenarioChain) {
		o.logf("chain: %d tasks", o.ChainTasks)
		if err := r.add(r.chain(ctx, o.ChainTasks)); err != nil {
			return err
		}
	}
	if o.has(ScenarioFanin) {
		o.logf("fanin: %d workflows of %d+1 tasks at concurrency %d", o.FaninWorkflows, o.FaninWidth, o.FaninConcurrency)
		if err := r.add(r.fanin(ctx, o.FaninWorkflows, o.FaninWidth, o.FaninConcurrency)); err != nil {
			return err
		}
	}
	if o.has(ScenarioSubmit) {
		o.logf("submit: one %d-task DAG", o.SubmitTasks)
		if err := r.add(r.submit(ctx, o.SubmitTasks)); err != nil {
			return err
		}
	}
	if o.has(ScenarioLimits) {
		for _, v := range LimitVariants {
			o.logf("limits: %d jobs at concurrency %d, %s", o.Jobs, o.LimitsConcurrency, v.Name)
			if err := r.add(r.limited(ctx, v)); err != nil {
				return err
			}
		}
	}
	if err := r.ceiling(ctx, "after the scenarios"); err != nil {
		return err
	}
	rep := r.rep
	rep.CeilingPerS = float64(rep.CeilingCalls) / rep.CeilingSeconds
	for i := range rep.Scenarios {
		s := &rep.Scenarios[i]
		s.CeilingRatio = ratio(s.JobsPerS, rep.CeilingPerS)
		s.EnqueueCeilingRatio = ratio(s.EnqueuePerS, rep.CeilingPerS)
	}
	return nil
}

// ceiling measures the ceiling once more (it runs before and after the
// scenarios, so that a machine whose speed drifts during the run gets a
// ceiling from both ends).
func (r *runner) ceiling(ctx context.Context, when string) error {
	o := r.opts
	o.logf("ceiling %s: %d clients for %s", when, o.CeilingClients, o.CeilingDuration)
	calls, secs, err := ceiling(ctx, r.srv, o.CeilingClients, o.CeilingDuration)
	if err != nil {
		return err
	}
	r.rep.CeilingCalls += calls
	r.rep.CeilingSeconds += secs
	r.rep.CeilingRunsPerS = append(r.rep.CeilingRunsPerS, float64(calls)/secs)
	return nil
}

// add appends res to the report (its ceiling ratios come at the end).
func (r *runner) add(res Result, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", res.Name, err)
	}
	r.rep.Scenarios = append(r.rep.Scenarios, res)
	return nil
}

// snapshot is the server's and the client's counters at one moment.
type snapshot struct {
	at    time.Time
	cmds  cmdStats
	trips int64
	mem   int64
	memOK bool
	// cpuUs is the server's CPU so far (INFO cpu used_cpu_user +
	// used_cpu_sys, summed over a cluster's masters), cpuOK false on
	// miniredis (no INFO cpu)
	cpuUs int64
	cpuOK bool
}

func (r *runner) snap(ctx context.Context, withMemory bool) (snapshot, error) {
	s := snapshot{trips: r.srv.trips.Load()}
	var err error
	if withMemory {
		if s.mem, s.memOK, err = r.srv.usedMemory(ctx); err != nil {
			return s, err
		}
	}
	if s.cmds, err = r.srv.commandStats(ctx); err != nil {
		return s, err
	}
	if !r.srv.lite {
		if s.cpuUs, err = r.srv.serverCPU(ctx); err != nil {
			return s, err
		}
		s.cpuOK = true
	}
	s.at = time.Now()
	return s, nil
}

// perJob is (b-a)/n for the commands and the round trips.
func perJob(a, b snapshot, n int) (cmds, trips float64) {
	return float64(b.cmds.calls-a.cmds.calls) / float64(n), float64(b.trips-a.trips) / float64(n)
}

// scriptUsPer is the server time of the script calls from a to b per n
// jobs, in µs, or nil on miniredis (which does not measure it).
func (r *runner) scriptUsPer(a, b snapshot, n int) *float64 {
	if r.srv.lite {
		return nil
	}
	v := float64(b.cmds.scriptUsec-a.cmds.scriptUsec) / float64(n)
	return &v
}

// serverCPUPer is the server's CPU from a to b per n jobs, in µs, or nil
// on miniredis (which has no INFO cpu).
func serverCPUPer(a, b snapshot, n int) *float64 {
	if !a.cpuOK || !b.cpuOK || n <= 0 {
		return nil
	}
	v := float64(b.cpuUs-a.cpuUs) / float64(n)
	return &v
}

// memPer is the memory growth from a to b per n records, nil when the
// server has no memory figures.
func memPer(a, b snapshot, n int) *float64 {
	if !a.memOK || !b.memOK {
		return nil
	}
	v := float64(b.mem-a.mem) / float64(n)
	return &v
}
