package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/bench"
	"github.com/weirflow/weir/internal/command"
)

// newBenchCmd is `weir bench`: the measurements of package bench, as a
// table or JSON. Its hidden subcommand `weir bench worker` is the worker
// process of the multi-process runs.
func newBenchCmd(g *globalFlags) *cobra.Command {
	var (
		asJSON, quick, noProcs, eventsOff bool
		jobs, workflows                   int
		scenarios, concs, pros            string
		compare, against, spread          string
		cpuProfile                        string
	)
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure weir on a Redis (or the embedded server): throughput, latency, commands, round trips and CPU per job",
		Long: "weir bench runs the scenarios plain, chain, fanin, submit and limits against the Redis of --redis or\n" +
			"WEIR_REDIS_URL (the embedded miniredis when neither is set: its figures say nothing about Redis),\n" +
			"or the Redis Cluster of --cluster or WEIR_REDIS_CLUSTER (commands, script time and memory summed\n" +
			"over its masters; the namespace has --partitions partitions),\n" +
			"in a namespace of its own that it deletes at the end. --compare OLD.json prints each figure next\n" +
			"to a saved --json report's, as new/old ratios; with --against NEW.json it compares two saved\n" +
			"reports without running.\n\n" +
			"--spread 1,3,12 (a Redis Cluster only: --cluster or WEIR_REDIS_CLUSTER) measures how the server's\n" +
			"work spreads over the cluster's masters instead: for each partition count of the list (each in\n" +
			"[1, 1024]) and each shape plain (20,000 jobs; --jobs), chain (3,000 workflows of a 5-task chain;\n" +
			"--workflows) and fanin (2,000 workflows of 10 parallel tasks joined by one; --workflows)\n" +
			"(--scenarios picks among these three;\n" +
			"--quick shrinks the sizes), one run on a namespace of its own of that many partitions: every unit\n" +
			"enqueued or submitted first, then run by one worker at concurrency 50, measured until every unit\n" +
			"has ended. Each row gives units/s, the server CPU (INFO cpu summed over the masters), script time,\n" +
			"script calls and round trips per unit, the ratios to the P=1 row, the partitions each master\n" +
			"serves and its share of the CPU. A spread skips the ceiling and the usual scenarios, and does not\n" +
			"take --partitions, --concurrency, --processes or --no-processes. --compare with a saved spread\n" +
			"report matches rows by shape and partition count. See docs/benchmarks.md.",
		Example: "  weir bench --quick\n" +
			"  weir bench --redis redis://127.0.0.1:6379/0 --json > new.json\n" +
			"  weir bench --compare old.json --against new.json",
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if g.namespace != "" {
				return command.Usage(errors.New("bench uses a namespace of its own (bench-<random>); --namespace does not apply"))
			}
			var old *bench.Report
			if against != "" && compare == "" {
				return command.Usage(errors.New("--against NEW.json needs --compare OLD.json"))
			}
			if compare != "" {
				var err error
				if old, err = bench.ReadReport(compare); err != nil {
					return command.Usage(fmt.Errorf("--compare: %w", err))
				}
			}
			if against != "" {
				return compareSaved(c, old, compare, against, asJSON)
			}
			defaults := bench.Defaults()
			if quick {
				defaults = bench.Quick()
			}
			url, cluster, err := g.target()
			if err != nil {
				return err
			}
			opts := bench.Options{RedisURL: url, Cluster: cluster, Partitions: g.cfg.Partitions, Jobs: jobs}
			if c.Flags().Changed("spread") {
				if err := spreadOptions(c, &opts, spread); err != nil {
					return err
				}
				opts.SpreadChains, opts.SpreadFanins = workflows, workflows
			} else if c.Flags().Changed("workflows") {
				return command.Usage(errors.New("--workflows sizes the runs of --spread; without it, it does not apply"))
			}
			if scenarios != "" {
				opts.Scenarios = splitList(scenarios)
			}
			if opts.Concurrencies, err = intList("--concurrency", concs); err != nil {
				return command.Usage(err)
			}
			if opts.Processes, err = intList("--processes", pros); err != nil {
				return command.Usage(err)
			}
			if noProcs {
				opts.Processes = []int{}
			}
			opts.EventsOff = eventsOff
			if !asJSON {
				opts.Log = c.ErrOrStderr()
			}
			opts.WorkerCommand = benchWorkerCommand(c.Context())
			stopProfile, err := startCPUProfile(cpuProfile)
			if err != nil {
				return command.Usage(err)
			}
			rep, err := bench.RunWith(c.Context(), opts, defaults)
			if perr := stopProfile(); perr != nil && err == nil {
				return command.Fail(perr)
			}
			if err != nil {
				if errors.Is(err, bench.ErrUsage) {
					return command.Usage(err)
				}
				return command.Fail(err)
			}
			var cmp *bench.Comparison
			if old != nil {
				cmp = bench.Compare(old, rep, compare, "this run")
			}
			if asJSON {
				rep.Compare = cmp
				return printJSON(c.OutOrStdout(), rep)
			}
			if err := rep.WriteTable(c.OutOrStdout()); err != nil || cmp == nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout())
			return cmp.WriteTable(c.OutOrStdout())
		},
	}
	f := c.Flags()
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&quick, "quick", false, "tiny sizes that run in seconds (a smoke test, not figures)")
	f.BoolVar(&eventsOff, "events-off", false, "measure with the namespace's event stream off (spec/events.md)")
	f.IntVar(&jobs, "jobs", 0, "plain jobs per plain run (default 20000; 200 with --quick; with --spread 20000, 100 with --quick)")
	f.IntVar(&workflows, "workflows", 0, "with --spread, the workflows of each chain and fanin run (default 3000 chains, 2000 fan-ins; 20 with --quick)")
	f.StringVar(&scenarios, "scenarios", "", "comma-separated scenarios to run: plain,chain,fanin,submit,limits (default all)")
	f.StringVar(&concs, "concurrency", "", "comma-separated concurrencies of the one-process plain runs (default 1,10,50)")
	f.StringVar(&pros, "processes", "", "comma-separated worker-process counts of the multi-process plain runs (default 2,4)")
	f.BoolVar(&noProcs, "no-processes", false, "skip the multi-process plain runs")
	f.StringVar(&compare, "compare", "", "after the run, print each figure next to those of `OLD.json` (a saved --json report), as new/old ratios")
	f.StringVar(&spread, "spread", "", "comma-separated partition counts `LIST`: measure how the work spreads over a Redis Cluster's masters at each (see above)")
	f.StringVar(&against, "against", "", "with --compare, compare with the saved report `NEW.json` instead of running (no Redis needed)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of this process (go tool pprof) to `FILE`")
	_ = f.MarkHidden("cpuprofile")
	c.AddCommand(newBenchWorkerCmd())
	return c
}

// startCPUProfile starts a CPU profile of this process into path (nothing
// for ""), and returns what stops it and closes the file: weir bench's
// hidden --cpuprofile, for looking at where the worker's CPU goes.
func startCPUProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// runFlags are the flags of `weir bench` that only a run uses.
var runFlags = []string{"redis", "cluster", "partitions", "quick", "jobs", "workflows", "scenarios", "concurrency", "processes", "no-processes", "spread", "cpuprofile"}

// spreadOptions sets the spread of opts from --spread's list: the flags
// of the usual runs do not apply, --jobs sizes the plain runs, and the
// partitions are the list's (WEIR_PARTITIONS is ignored).
func spreadOptions(c *cobra.Command, opts *bench.Options, list string) error {
	for _, name := range []string{"partitions", "concurrency", "processes", "no-processes"} {
		if c.Flags().Changed(name) {
			return command.Usage(fmt.Errorf("--spread sets its own runs: --%s does not apply", name))
		}
	}
	ps, err := intList("--spread", list)
	if err != nil {
		return command.Usage(err)
	}
	if len(ps) == 0 {
		return command.Usage(errors.New("--spread: give at least one partition count (e.g. 1,3,12)"))
	}
	opts.Spread, opts.Partitions = ps, 0
	opts.SpreadJobs, opts.Jobs = opts.Jobs, 0
	return nil
}

// compareSaved is `weir bench --compare OLD.json --against NEW.json`: two
// saved reports compared, nothing run. With --json it prints the new
// report with its comparison.
func compareSaved(c *cobra.Command, old *bench.Report, oldPath, newPath string, asJSON bool) error {
	for _, name := range runFlags {
		if c.Flags().Changed(name) {
			return command.Usage(fmt.Errorf("--against compares two saved reports without running: --%s does not apply", name))
		}
	}
	cur, err := bench.ReadReport(newPath)
	if err != nil {
		return command.Usage(fmt.Errorf("--against: %w", err))
	}
	cmp := bench.Compare(old, cur, oldPath, newPath)
	if asJSON {
		cur.Compare = cmp
		return printJSON(c.OutOrStdout(), cur)
	}
	return cmp.WriteTable(c.OutOrStdout())
}

// benchWorkerCommand starts `weir bench worker` of this very binary.
func benchWorkerCommand(ctx context.Context) func(args []string) *exec.Cmd {
	return func(args []string) *exec.Cmd {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		return exec.CommandContext(ctx, exe, append([]string{"bench", "worker"}, args...)...)
	}
}

// newBenchWorkerCmd is the hidden worker process of `weir bench`: it talks
// to its parent on stdin and stdout (bench.RunWorkerProcess).
func newBenchWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "worker",
		Short:              "A worker process of weir bench (started by weir bench itself)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			cfg, err := bench.ParseWorkerArgs(args)
			if err != nil {
				return command.Usage(err)
			}
			if err := bench.RunWorkerProcess(c.Context(), cfg, c.InOrStdin(), c.OutOrStdout()); err != nil {
				return command.Fail(err)
			}
			return nil
		},
	}
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// intList parses a comma-separated list of integers; empty is nil.
func intList(flag, s string) ([]int, error) {
	var out []int
	for _, v := range splitList(s) {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a number", flag, v)
		}
		out = append(out, n)
	}
	return out, nil
}
