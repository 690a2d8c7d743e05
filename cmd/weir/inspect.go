package main

import (
	"context"
	"errors"
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/rest"
)

// The inspector's commands: jobs of a queue by state, cancel-job, purge.

func newJobsCmd(g *globalFlags) *cobra.Command {
	var state, cursor string
	var limit int
	var asJSON bool
	c := &cobra.Command{
		Use:   "jobs QUEUE",
		Short: "List a queue's jobs in one state: ready, delayed, running, failed (dead letters), cancelled, completed",
		Example: "  weir jobs default --state failed\n" +
			"  weir jobs default --state running --limit 20 --json",
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			p := weirpkg.ListJobsParams{Queue: args[0], State: weirpkg.JobList(state), Limit: limit, Cursor: cursor}
			page, err := s.ListJobs(ctx, p)
			if err != nil {
				return storeErr("jobs of "+args[0], err)
			}
			out := c.OutOrStdout()
			if asJSON {
				recs := make([]any, len(page.Jobs))
				for i, j := range page.Jobs {
					recs[i] = rest.JobJSON(j)
				}
				if err := printJSON(out, recs); err != nil {
					return err
				}
				printMore(c.ErrOrStderr(), page.NextCursor)
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tATTEMPT\tWORKER\tAT\tPROGRESS\tERROR")
			for _, j := range page.Jobs {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", j.ID, j.State, j.Attempt, cell(j.Worker), jobTime(j), progressCell(j.Progress), cell(j.Error))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			printMore(out, page.NextCursor)
			return nil
		}),
	}
	c.Flags().StringVar(&state, "state", "ready", "the list: ready, delayed, running, failed, cancelled or completed")
	c.Flags().IntVar(&limit, "limit", 100, "jobs a page, 1 to 1000")
	c.Flags().StringVar(&cursor, "cursor", "", "go on after the page that printed this cursor (more: --cursor ...)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the page's jobs as a JSON array, each the object of GET /v1/jobs/{id} (docs/cli.md)")
	return c
}

// jobTime is the time that matters for a job in its list: when it ended,
// when it is due, or when its lease ends.
func jobTime(j weirpkg.Job) string {
	t := j.EndedAt
	switch {
	case j.State == weirpkg.Running && j.Lease != nil:
		t = j.Lease.Deadline
	case j.State == weirpkg.Queued:
		t = j.RunAt
	}
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// progressCell is a job's last progress report on its table row, "-"
// for none.
func progressCell(p *weirpkg.Progress) string {
	if p == nil {
		return "-"
	}
	return strings.Join(strings.Fields(progressText(p)), " ")
}

// cell keeps a job's error on its table row.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Join(strings.Fields(oneLine(s)), " ")
}

func newCancelJobCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel-job ID",
		Short: "Cancel a job (plain, or a workflow's <workflow>/<task>): one not started never runs, a running one is told to stop",
		Example: "  weir cancel-job 8f3c2a\n" +
			"  weir cancel-job photo-42/resize",
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			r, err := s.CancelJob(ctx, engine.CancelJobParams{ID: args[0]})
			if err != nil {
				if errors.Is(err, weirpkg.ErrJobEnded) {
					return command.Fail(fmt.Errorf("job %s has already ended (%s)", args[0], r.State))
				}
				return storeErr("job "+args[0], err)
			}
			out := c.OutOrStdout()
			if r.State == weirpkg.Running {
				fmt.Fprintf(out, "job %s running: told to stop\n", args[0])
			} else {
				fmt.Fprintf(out, "job %s %s\n", args[0], r.State)
			}
			for _, id := range r.Cancelled {
				if id != args[0] {
					fmt.Fprintf(out, "job %s cancelled (its workflow's cascade)\n", id)
				}
			}
			return nil
		}),
	}
}

// newPurgeCmd is weir queue purge; alias: the top level's weir purge.
func newPurgeCmd(g *globalFlags, alias bool) *cobra.Command {
	return &cobra.Command{
		Use:     "purge QUEUE",
		Short:   "Cancel every job waiting in a queue (ready or delayed); running jobs go on" + aliasNote(alias, "queue purge"),
		Example: "  weir queue purge default",
		Args:    exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			if !engine.ValidName(args[0]) {
				return command.Usage(fmt.Errorf("queue name %q must "+engine.NameRule, args[0]))
			}
			r, err := s.PurgeQueue(ctx, args[0])
			if err != nil {
				return storeErr("queue "+args[0], err)
			}
			fmt.Fprintf(c.OutOrStdout(), "queue %s purged: %d job(s) cancelled\n", args[0], len(r.Purged))
			return nil
		}),
	}
}

func newRetryJobCmd(g *globalFlags) *cobra.Command {
	var at string
	c := &cobra.Command{
		Use:   "retry-job ID",
		Short: "Run a plain job that ended failed or cancelled again (now, or --at a time)",
		Example: "  weir retry-job 8f3c2a\n" +
			"  weir retry-job 8f3c2a --at 10m",
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			p := engine.RetryJobParams{ID: args[0]}
			if at != "" {
				t, err := parseAt(at, time.Now())
				if err != nil {
					return command.Usage(err)
				}
				p.RunAt = t
			}
			r, err := s.RetryJob(ctx, p)
			if err != nil {
				if errors.Is(err, weirpkg.ErrJobNotRetryable) {
					return command.Fail(fmt.Errorf("job %s cannot be retried (%s): only a plain job that ended failed or cancelled can", args[0], r.State))
				}
				return storeErr("job "+args[0], err)
			}
			if r.RunAt.IsZero() {
				fmt.Fprintf(c.OutOrStdout(), "job %s queued\n", args[0])
			} else {
				fmt.Fprintf(c.OutOrStdout(), "job %s queued until %s\n", args[0], r.RunAt.UTC().Format(time.RFC3339))
			}
			return nil
		}),
	}
	c.Flags().StringVar(&at, "at", "", "when it runs: an RFC 3339 time (2026-12-04T18:00:00Z) or a delay from now (10m)")
	return c
}

func newRerunCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "rerun ID",
		Short:   "Run an ended workflow's failed part again: its failed and cancelled tasks and what comes after them (completed tasks keep their results)",
		Example: "  weir rerun photo-42",
		Args:    exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			r, err := s.RerunWorkflow(ctx, engine.RerunWorkflowParams{ID: args[0]})
			if err != nil {
				if errors.Is(err, weirpkg.ErrNotRerunnable) {
					return command.Fail(fmt.Errorf("workflow %s cannot be re-run (%s): only an ended workflow with a failed or cancelled task, not compensated, can", args[0], r.WorkflowState))
				}
				return storeErr("workflow "+args[0], err)
			}
			fmt.Fprintf(c.OutOrStdout(), "workflow %s running (run %d): %d task(s) run again\n", args[0], r.Run, len(r.Reset))
			return nil
		}),
	}
}

// parseAt reads --at: an RFC 3339 time, or a Go duration from now.
func parseAt(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("--at %q is neither an RFC 3339 time nor a delay such as 10m", s)
	}
	return now.Add(d), nil
}

func newDeleteCmd(g *globalFlags, workflow bool) *cobra.Command {
	use, what := "delete-job ID", "job"
	short := "Delete a plain job that ended, before its retention passed"
	example := "  weir delete-job 8f3c2a"
	if workflow {
		use, what = "delete-workflow ID", "workflow"
		short = "Delete a workflow that ended, with its jobs, before its retention passed"
		example = "  weir delete-workflow photo-42"
	}
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			f := s.DeleteJob
			if workflow {
				f = s.DeleteWorkflow
			}
			if err := f(ctx, args[0]); err != nil {
				if errors.Is(err, weirpkg.ErrNotEnded) {
					return command.Fail(fmt.Errorf("%s %s has not ended: cancel it first, or wait", what, args[0]))
				}
				return storeErr(what+" "+args[0], err)
			}
			fmt.Fprintf(c.OutOrStdout(), "%s %s deleted\n", what, args[0])
			return nil
		}),
	}
}
