package main

import (
	"context"
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/rest"
	"github.com/weirflow/weir/workflowfile"
)

// schedulerOf is s's engine.Scheduler, or an error saying it keeps no
// schedules.
func schedulerOf(s engine.Store) (engine.Scheduler, error) {
	sc, ok := s.(engine.Scheduler)
	if !ok {
		return nil, fmt.Errorf("weir: the store (%T) keeps no schedules", s)
	}
	return sc, nil
}

// newScheduleCmd is `weir schedule put|ls|delete|pause|resume`: put and
// delete are the verbs of client.Client and of the store (add and rm stay
// as aliases).
func newScheduleCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "schedule",
		Short: "Manage cron and interval schedules (fired by running workers, once per tick)",
		Example: "  weir schedule ls\n" +
			"  weir schedule put nightly --cron '0 30 2 * * *' --tz Europe/Paris --workflow examples/pipeline.yaml",
		Args: cobra.ArbitraryArgs,
		RunE: groupRun,
	}
	c.AddCommand(newScheduleAddCmd(g), newScheduleLsCmd(g), newScheduleRmCmd(g),
		newSchedulePauseCmd(g, true), newSchedulePauseCmd(g, false))
	return c
}

func newScheduleAddCmd(g *globalFlags) *cobra.Command {
	var p engine.ScheduleSpec
	var queue, payload, file, missed, overlap string
	var priority, attempts int
	c := &cobra.Command{
		Use:     "put NAME (--cron EXPR [--tz ZONE] | --every DURATION) (--queue QUEUE [--payload JSON] | --workflow FILE)",
		Aliases: []string{"add"},
		Short:   "Put a schedule: create it, or replace the one of that name",
		Long: "Each tick enqueues a job (--queue, --payload) or submits the workflow of a file without id (--workflow),\n" +
			"with the ID NAME.<unix seconds of the tick> (NAME@<unix seconds> in a namespace of several\n" +
			"partitions). --cron takes five fields, six with seconds first,\n" +
			"or a descriptor (@hourly, @every 90m: whole seconds); --every ticks at each multiple of DURATION since the\n" +
			"Unix epoch. Workers started with `weir worker` (--schedules, on by default) fire the ticks.",
		Example: "  weir schedule put nightly --cron '0 30 2 * * *' --tz Europe/Paris --workflow examples/pipeline.yaml\n" +
			"  weir schedule put ping --every 5m --queue default --payload '{\"url\": \"https://example.com\"}'",
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			p.Name = args[0]
			p.Missed, p.Overlap = weirpkg.MissedPolicy(missed), weirpkg.OverlapPolicy(overlap)
			if c.Flags().Changed("every") && p.Every == 0 {
				// the spec's zero Every means none: say what is wrong here
				return command.Usage(fmt.Errorf("--every %v is no interval: give whole seconds, at least 1s", p.Every))
			}
			switch {
			case (queue == "") == (file == ""):
				return command.Usage(fmt.Errorf("give --queue or --workflow, exactly one"))
			case file != "":
				if c.Flags().Changed("payload") || c.Flags().Changed("priority") || c.Flags().Changed("max-attempts") {
					return command.Usage(fmt.Errorf("--payload, --priority and --max-attempts go with --queue, not --workflow"))
				}
				limits := s.(engine.ConfigReporter).Config().Limits
				lf, err := workflowfile.Load(file, limits)
				if err == nil {
					err = lf.CheckSchedule()
				}
				if err != nil {
					return command.Usage(err)
				}
				p.Plan = &lf.Plan
			default:
				p.Job = &engine.JobSpec{Queue: queue, Priority: priority, MaxAttempts: attempts}
				if c.Flags().Changed("payload") {
					b, err := client.JSONPayload([]byte(payload))
					if err != nil {
						return command.Usage(fmt.Errorf("--payload %q: %w", payload, err))
					}
					p.Job.Payload = b
				}
			}
			sched, err := schedulerOf(s)
			if err != nil {
				return storeErr("schedule "+p.Name, err)
			}
			sc, err := engine.PutSchedule(ctx, sched, p, time.Now())
			if err != nil {
				return storeErr("schedule "+p.Name, err)
			}
			fmt.Fprintf(c.OutOrStdout(), "schedule %s added: next tick %s\n", sc.Name, sc.Next.Format(time.RFC3339))
			return nil
		}),
	}
	f := c.Flags()
	f.StringVar(&p.Cron, "cron", "", "cron expression (5 fields, 6 with seconds, or @descriptor)")
	f.StringVar(&p.TZ, "tz", "", "IANA time zone of --cron (default UTC; not Local)")
	f.DurationVar(&p.Every, "every", 0, "tick at each multiple of this duration (whole seconds)")
	f.StringVar(&queue, "queue", "", "queue of the job each tick enqueues")
	f.StringVar(&payload, "payload", "", "JSON payload of the job")
	f.IntVar(&priority, "priority", 0, "priority of the job (lower first)")
	f.IntVar(&attempts, "max-attempts", 0, "attempts of the job (0: 1)")
	f.StringVar(&file, "workflow", "", "workflow file each tick submits")
	f.StringVar(&missed, "missed", "skip", "after missed ticks: skip (start nothing) or once (start the latest)")
	f.StringVar(&overlap, "overlap", "allow", "while the last tick's job or workflow runs: allow or skip")
	return c
}

func newScheduleLsCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "ls",
		Short: "List schedules",
		Example: "  weir schedule ls\n" +
			"  weir schedule ls --json",
		Args: exactArgs(0),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			sched, err := schedulerOf(s)
			if err != nil {
				return storeErr("schedules", err)
			}
			l, err := sched.Schedules(ctx)
			if err != nil {
				return storeErr("schedules", err)
			}
			list := l.Schedules
			if asJSON {
				recs := make([]rest.ScheduleRecord, len(list))
				for i, s := range list {
					recs[i] = rest.NewScheduleRecord(s)
				}
				return printJSON(c.OutOrStdout(), recs)
			}
			return printSchedules(c.OutOrStdout(), list)
		}),
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the schedules as JSON")
	return c
}

// printSchedules prints one line a schedule.
func printSchedules(out io.Writer, list []engine.Schedule) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWHEN\tTARGET\tPAUSED\tNEXT\tLAST")
	for _, s := range list {
		when := s.Cron
		if s.TZ != "" {
			when += " (" + s.TZ + ")"
		}
		if s.Every != 0 {
			when = "every " + s.Every.String()
		}
		target := "workflow"
		if s.Job != nil {
			target = "queue " + s.Job.Queue
		}
		next, last := "-", "-"
		if !s.Next.IsZero() {
			next = s.Next.Format(time.RFC3339)
		}
		if s.LastID != "" {
			last = s.LastID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%s\t%s\n", s.Name, when, target, s.Paused, next, last)
	}
	return tw.Flush()
}

func newScheduleRmCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "delete NAME",
		Aliases: []string{"rm"},
		Short:   "Delete a schedule (not the jobs or workflows it started)",
		Example: "  weir schedule delete nightly",
		Args:    exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			if err := client.New(s).DeleteSchedule(ctx, args[0]); err != nil {
				return storeErr("schedule "+args[0], err)
			}
			fmt.Fprintf(c.OutOrStdout(), "schedule %s deleted\n", args[0])
			return nil
		}),
	}
}

func newSchedulePauseCmd(g *globalFlags, pause bool) *cobra.Command {
	name, verb := "resume", "Resume"
	if pause {
		name, verb = "pause", "Pause"
	}
	return &cobra.Command{
		Use:     name + " NAME",
		Short:   verb + " a schedule's ticks",
		Example: "  weir schedule " + name + " nightly",
		Args:    exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			cl := client.New(s)
			f := cl.ResumeSchedule
			if pause {
				f = cl.PauseSchedule
			}
			if err := f(ctx, args[0]); err != nil {
				return storeErr("schedule "+args[0], err)
			}
			fmt.Fprintf(c.OutOrStdout(), "schedule %s %sd\n", args[0], name)
			return nil
		}),
	}
}
