package bench

import (
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// Scenario names, in the order Run runs them.
const (
	ScenarioPlain  = "plain"
	ScenarioChain  = "chain"
	ScenarioFanin  = "fanin"
	ScenarioSubmit = "submit"
	ScenarioLimits = "limits"
)

// AllScenarios lists every scenario, in run order.
var AllScenarios = []string{ScenarioPlain, ScenarioChain, ScenarioFanin, ScenarioSubmit, ScenarioLimits}

// Options configures a Run. Zero sizes take the defaults of Defaults.
type Options struct {
	// RedisURL is the Redis to measure; empty (with Cluster empty too)
	// starts an embedded miniredis.
	RedisURL string
	// Cluster, instead of RedisURL, is the seed addresses of a Redis
	// Cluster to measure ("host:port,..." or a cluster URL): the server
	// figures (commands, script time, memory) are the sums over its masters.
	Cluster string
	// Partitions is the engine.Config.Partitions of the run's namespace
	// (spec/partitions.md; 0: one).
	Partitions int
	// EventsOff measures with the namespace's event stream off
	// (spec/events.md); the default measures with it on, as shipped.
	EventsOff bool
	// Scenarios to run, a subset of AllScenarios; empty means all. The
	// ceiling always runs.
	Scenarios []string
	// Jobs is the number of plain jobs of each plain run.
	Jobs int
	// Concurrencies are the plain runs in this process; nil takes the
	// defaults, an empty slice runs none.
	Concurrencies []int
	// Processes are the plain runs with that many worker processes, each at
	// ProcessConcurrency (nil takes the defaults, empty runs none). They
	// need WorkerCommand.
	Processes          []int
	ProcessConcurrency int
	// ChainTasks is the length of the chain.
	ChainTasks int
	// FaninWorkflows workflows of FaninWidth parallel tasks joined by one,
	// run at FaninConcurrency.
	FaninWorkflows   int
	FaninWidth       int
	FaninConcurrency int
	// SubmitTasks is the size of the submitted DAG.
	SubmitTasks int
	// LimitsConcurrency is the worker concurrency of the limits scenario:
	// Jobs plain jobs once on a queue without limits and once under each
	// kind of limit (LimitVariants), so that their server time per job
	// compares within one run.
	LimitsConcurrency int
	// CeilingClients call the ceiling script in parallel for
	// CeilingDuration, before the scenarios and again after them.
	CeilingClients  int
	CeilingDuration time.Duration
	// Producers enqueue plain jobs and submit fan-in workflows in parallel.
	Producers int
	// WorkerCommand returns the command of one worker process, given the
	// arguments its program parses with ParseWorkerArgs before calling
	// RunWorkerProcess; the Redis URL is added to the command's environment
	// as WEIR_REDIS_URL (a cluster's seeds as WEIR_REDIS_CLUSTER). Nil
	// skips the multi-process runs.
	WorkerCommand func(args []string) *exec.Cmd
	// Spread, when not empty, replaces the scenarios and the ceiling by
	// a spread (spread.go, needs Cluster): for each partition count of
	// the list (each in [1, engine.MaxPartitions], no repeats) and each of
	// the Scenarios plain, chain and fanin (empty: all three; others are
	// refused), one run on a namespace of its own of that many
	// partitions, measuring how the server's work spreads over the
	// cluster's masters (Report.Spread). Partitions must be 0.
	Spread []int
	// SpreadJobs is the plain jobs of a spread's plain run;
	// SpreadChains the workflows of its chain run (each a chain of
	// SpreadChainTasks tasks); SpreadFanins the workflows of its fanin
	// run (each SpreadFaninWidth parallel tasks joined by one).
	SpreadJobs   int
	SpreadChains int
	SpreadFanins int
	// Log, when set, gets one line per step.
	Log io.Writer
}

// Defaults returns the sizes of a default run: the scenarios, about
// a minute against a local redis-server.
func Defaults() Options {
	return Options{
		Jobs:               20_000,
		Concurrencies:      []int{1, 10, 50},
		Processes:          []int{2, 4},
		ProcessConcurrency: 50,
		ChainTasks:         1_000,
		FaninWorkflows:     1_000,
		FaninWidth:         10,
		FaninConcurrency:   50,
		SubmitTasks:        10_000,
		LimitsConcurrency:  50,
		CeilingClients:     50,
		CeilingDuration:    2 * time.Second,
		Producers:          50,
		SpreadJobs:         20_000,
		SpreadChains:       3_000,
		SpreadFanins:       2_000,
	}
}

// Quick returns tiny sizes that run in seconds, even on the embedded
// server: for tests and smoke runs, not for figures.
func Quick() Options {
	return Options{
		Jobs:               200,
		Concurrencies:      []int{1, 10, 50},
		Processes:          []int{2},
		ProcessConcurrency: 10,
		ChainTasks:         30,
		FaninWorkflows:     20,
		FaninWidth:         10,
		FaninConcurrency:   50,
		SubmitTasks:        500,
		LimitsConcurrency:  10,
		CeilingClients:     50,
		CeilingDuration:    100 * time.Millisecond,
		Producers:          20,
		SpreadJobs:         100,
		SpreadChains:       20,
		SpreadFanins:       20,
	}
}

// withDefaults fills the zero sizes of o from d and checks them.
func (o Options) withDefaults(d Options) (Options, error) {
	if len(o.Spread) > 0 {
		if err := o.checkSpread(); err != nil {
			return o, err
		}
		if len(o.Scenarios) == 0 {
			o.Scenarios = SpreadScenarios
		}
	}
	if len(o.Scenarios) == 0 {
		o.Scenarios = AllScenarios
	}
	for _, s := range o.Scenarios {
		if !slices.Contains(AllScenarios, s) {
			return o, fmt.Errorf("%w: unknown scenario %q (have %s)", ErrUsage, s, strings.Join(AllScenarios, ","))
		}
	}
	fill := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&o.Jobs, d.Jobs)
	fill(&o.ProcessConcurrency, d.ProcessConcurrency)
	fill(&o.ChainTasks, d.ChainTasks)
	fill(&o.FaninWorkflows, d.FaninWorkflows)
	fill(&o.FaninWidth, d.FaninWidth)
	fill(&o.FaninConcurrency, d.FaninConcurrency)
	fill(&o.SubmitTasks, d.SubmitTasks)
	fill(&o.LimitsConcurrency, d.LimitsConcurrency)
	fill(&o.CeilingClients, d.CeilingClients)
	fill(&o.Producers, d.Producers)
	fill(&o.SpreadJobs, d.SpreadJobs)
	fill(&o.SpreadChains, d.SpreadChains)
	fill(&o.SpreadFanins, d.SpreadFanins)
	if o.CeilingDuration == 0 {
		o.CeilingDuration = d.CeilingDuration
	}
	if o.Concurrencies == nil {
		o.Concurrencies = d.Concurrencies
	}
	if o.Processes == nil {
		o.Processes = d.Processes
	}
	// in this order, so that of several bad sizes the same one is reported
	// every time
	type size struct {
		name string
		v    int
	}
	sizes := []size{
		{"jobs", o.Jobs}, {"process concurrency", o.ProcessConcurrency}, {"chain tasks", o.ChainTasks},
		{"fan-in workflows", o.FaninWorkflows}, {"fan-in width", o.FaninWidth}, {"fan-in concurrency", o.FaninConcurrency},
		{"submit tasks", o.SubmitTasks}, {"limits concurrency", o.LimitsConcurrency}, {"ceiling clients", o.CeilingClients}, {"producers", o.Producers},
	}
	if len(o.Spread) > 0 {
		sizes = append(sizes, size{"spread jobs", o.SpreadJobs}, size{"spread chains", o.SpreadChains}, size{"spread fan-ins", o.SpreadFanins})
	}
	for _, sz := range sizes {
		if sz.v < 1 {
			return o, fmt.Errorf("%w: %s must be at least 1, got %d", ErrUsage, sz.name, sz.v)
		}
	}
	for _, c := range o.Concurrencies {
		if c < 1 {
			return o, fmt.Errorf("%w: concurrency must be at least 1, got %d", ErrUsage, c)
		}
	}
	for _, p := range o.Processes {
		if p < 1 {
			return o, fmt.Errorf("%w: processes must be at least 1, got %d", ErrUsage, p)
		}
	}
	if o.RedisURL != "" && o.Cluster != "" {
		return o, fmt.Errorf("%w: a Redis URL and a cluster: give one", ErrUsage)
	}
	if o.Partitions < 0 || o.Partitions > engine.MaxPartitions {
		return o, fmt.Errorf("%w: partitions %d outside [0, %d]", ErrUsage, o.Partitions, engine.MaxPartitions)
	}
	if o.CeilingDuration < 0 {
		return o, fmt.Errorf("%w: negative ceiling duration", ErrUsage)
	}
	if o.FaninWidth+1 > 10_000 || o.ChainTasks > 10_000 || o.SubmitTasks > 10_000 {
		return o, fmt.Errorf("%w: a workflow has at most 10,000 tasks", ErrUsage)
	}
	return o, nil
}

func (o Options) has(scenario string) bool { return slices.Contains(o.Scenarios, scenario) }

func (o Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, "bench: "+format+"\n", args...)
	}
}
