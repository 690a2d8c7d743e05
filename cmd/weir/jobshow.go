package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	weirpkg "github.com/weirflow/weir"
	"github.com/weirflow/weir/rest"
)

// showJob prints a job (weir status of a job ID): its state, attempts,
// worker and error, then its attempt history, oldest first (spec/states.md,
// Attempt history); with asJSON the object of GET /v1/jobs/{id}.
func showJob(out io.Writer, j weirpkg.Job, asJSON bool) error {
	if asJSON {
		return printJSON(out, rest.JobJSON(j))
	}
	fmt.Fprintf(out, "job %s %s (queue %s, attempt %d of %d)\n", j.ID, j.State, j.Queue, j.Attempt, max(j.MaxAttempts, 1))
	if j.Worker != "" {
		fmt.Fprintf(out, "  worker %s\n", j.Worker)
	}
	if j.Error != "" {
		fmt.Fprintf(out, "  error %s\n", cell(j.Error))
	}
	if len(j.Attempts) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ATTEMPT\tWORKER\tSTARTED\tDURATION\tOUTCOME\tERROR")
	for _, a := range j.Attempts {
		outcome, took := string(a.Outcome), a.Duration().String()
		if a.Outcome == "" {
			outcome, took = "running", "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", strconv.Itoa(a.Attempt), cell(a.Worker),
			a.Started.UTC().Format(weirpkg.TimeLayout), took, outcome, cell(a.Error))
	}
	return tw.Flush()
}
