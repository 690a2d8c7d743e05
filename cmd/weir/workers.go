package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/rest"
)

// newWorkersCmd is `weir workers`: the live worker processes.
func newWorkersCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "workers",
		Short: "List the live worker processes: host, pid, queues, running jobs, last heartbeat",
		Long: "weir workers lists every worker process that runs on the namespace now (weir worker,\n" +
			"weir dev's, and Go programs' worker.Worker), by ID. A worker registers itself when it\n" +
			"starts, refreshes its record at every heartbeat (its lease / 3) and removes it when it\n" +
			"stops; one that died (kill -9, a lost machine) leaves the list once its lease from its\n" +
			"last heartbeat has passed. RUNNING is jobs running / concurrency; HEARTBEAT is how long\n" +
			"ago the store last heard from it, by the store's clock.",
		Example: "  weir workers\n  weir workers --json | jq '.[] | {id, running_jobs}'",
		Args:    exactArgs(0),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			reg, ok := s.(engine.WorkerRegistry)
			if !ok {
				return storeErr("workers", fmt.Errorf("weir: the store (%T) keeps no worker registry", s))
			}
			l, err := reg.Workers(ctx)
			if err != nil {
				return storeErr("workers", err)
			}
			if asJSON {
				if more := l.Total - len(l.Workers); more > 0 {
					fmt.Fprintf(c.ErrOrStderr(), "%d more live workers not listed (at most %d are)\n", more, engine.MaxWorkers)
				}
				return printJSON(c.OutOrStdout(), rest.NewWorkerList(l).Workers)
			}
			return printWorkers(c.OutOrStdout(), l)
		}),
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the workers as JSON: an array of the workers of GET /v1/workers")
	return c
}

// printWorkers prints one line a worker, and how many more live than
// the list holds.
func printWorkers(out io.Writer, l engine.WorkerList) error {
	if len(l.Workers) == 0 {
		_, err := fmt.Fprintln(out, "no live workers")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tHOST\tPID\tQUEUES\tRUNNING\tSTARTED\tHEARTBEAT\tVERSION")
	for _, w := range l.Workers {
		qs := make([]string, len(w.Queues))
		for i, q := range w.Queues {
			qs[i] = q.Name
			if q.Weight != 1 {
				qs[i] += ":" + strconv.Itoa(q.Weight)
			}
		}
		queues := strings.Join(qs, ",")
		if w.StrictPriority {
			queues += " (strict)"
		}
		started := "-"
		if !w.Started.IsZero() {
			started = w.Started.UTC().Format(time.RFC3339)
		}
		ago := max(l.Now.Sub(w.LastHeartbeat), 0).Round(100 * time.Millisecond)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d/%d\t%s\t%s ago\t%s\n", w.ID, w.Host, w.PID, queues, w.Running, w.Concurrency, started, ago, w.Version)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if more := l.Total - len(l.Workers); more > 0 {
		_, err := fmt.Fprintf(out, "%d more live workers not listed (at most %d are)\n", more, engine.MaxWorkers)
		return err
	}
	return nil
}
