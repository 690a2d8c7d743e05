package main

import (
	"context"
	"fmt"
	weirpkg "github.com/weirflow/weir"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/rest"
)

// weir queue retry-jobs, cancel-jobs, delete-jobs: act on many jobs of a
// queue in one call (client.RetryJobs and the others, spec/rest.md "Many
// jobs of a queue"), a page of one list or the jobs named by --id.

func newBulkJobsCmd(g *globalFlags, verb string) *cobra.Command {
	var state, cursor string
	var ids []string
	var limit int
	var asJSON bool
	def, done, lists := "failed", "retried", "failed or cancelled"
	act := (*client.Client).RetryJobs
	short := "Run again the plain jobs of a queue that ended failed (or cancelled), a page a call"
	switch verb {
	case "cancel":
		def, done, lists = "ready", "cancelled", "ready, delayed or running"
		act = (*client.Client).CancelJobs
		short = "Cancel the jobs of a queue that have not ended (ready, delayed or running), a page a call"
	case "delete":
		done, lists = "deleted", "failed, cancelled or completed"
		act = (*client.Client).DeleteJobs
		short = "Delete the plain jobs of a queue that ended (failed, cancelled or completed), a page a call"
	}
	c := &cobra.Command{
		Use:   verb + "-jobs QUEUE",
		Short: short,
		Long: fmt.Sprintf("weir queue %s-jobs QUEUE looks at the first --limit jobs (at most %d) of the queue's\n"+
			"--state list (%s), or at the jobs named by --id, and %s each it may; the others\n"+
			"(a workflow's job, one in another state) are skipped and listed. When the list has\n"+
			"more it prints \"more: --cursor C\": run it again with --cursor C to go on.",
			verb, client.MaxBulkJobs, lists, map[string]string{"retry": "runs again", "cancel": "cancels", "delete": "deletes"}[verb]),
		Example: fmt.Sprintf("  weir queue %s-jobs default --state %s --limit 500\n"+
			"  weir queue %s-jobs default --id 8f3c2a --id 91d0e4", verb, def, verb),
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			p := client.JobsParams{Queue: args[0], IDs: ids, Limit: limit, Cursor: cursor}
			if len(ids) == 0 {
				p.State = weirpkg.JobList(state)
			} else if c.Flags().Changed("state") || c.Flags().Changed("limit") {
				return command.Usage(fmt.Errorf("weir queue %s-jobs: give --id, or --state (with --limit, --cursor), not both", verb))
			} else {
				p.Limit = 0
			}
			if err := client.ValidateJobsParams(verb, p); err != nil {
				return command.Usage(fmt.Errorf("weir queue %s-jobs: %w", verb, err))
			}
			res, err := act(client.New(s), ctx, p)
			if err != nil {
				return storeErr("queue "+args[0], err)
			}
			out := c.OutOrStdout()
			if asJSON {
				rec := rest.BulkRecord{Queue: args[0], Action: verb, Done: res.Done, Skipped: []rest.BulkSkipped{}, More: res.NextCursor != ""}
				if rec.Done == nil {
					rec.Done = []string{}
				}
				if res.NextCursor != "" {
					rec.NextCursor = &res.NextCursor
				}
				for _, sk := range res.Skipped {
					rec.Skipped = append(rec.Skipped, rest.BulkSkipped{ID: sk.ID, Code: sk.Code, Message: sk.Message})
				}
				return printJSON(out, rec)
			}
			fmt.Fprintf(out, "queue %s: %d job(s) %s, %d skipped\n", args[0], len(res.Done), done, len(res.Skipped))
			for _, sk := range res.Skipped {
				fmt.Fprintf(out, "skipped %s: %s (%s)\n", sk.ID, oneLine(sk.Message), sk.Code)
			}
			printMore(out, res.NextCursor)
			return nil
		}),
	}
	c.Flags().StringVar(&state, "state", def, "the list whose jobs to "+verb+": "+lists)
	c.Flags().StringArrayVar(&ids, "id", nil, "a job to "+verb+" instead of a list's (repeatable)")
	c.Flags().IntVar(&limit, "limit", client.DefaultBulkJobs, fmt.Sprintf("jobs of the list to look at, 1 to %d", client.MaxBulkJobs))
	c.Flags().StringVar(&cursor, "cursor", "", "go on after the jobs the call that printed this cursor looked at")
	c.Flags().BoolVar(&asJSON, "json", false, "print what was done as JSON, the answer of POST /v1/queues/{name}/jobs/"+verb)
	return c
}
