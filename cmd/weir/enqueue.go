package main

import (
	"context"
	"errors"
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"io"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/workflowfile"
)

// newEnqueueCmd is `weir enqueue FILE`: the job document of POST /v1/jobs
// (spec/rest.md#enqueueing-a-job), from a file or standard input.
func newEnqueueCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "enqueue FILE",
		Short: "Enqueue a job for a Go handler from a job document (JSON or YAML; - reads stdin) and print its ID",
		Long: "enqueue reads a job document, the body of the REST API's POST /v1/jobs\n" +
			"(spec/rest.md, \"Enqueueing a job\"): {\"queue\": \"resize\", \"payload\": {...}, \"id\": ...},\n" +
			"from FILE or, with -, standard input, and enqueues it on the shared Redis. The\n" +
			"payload is stored as a Go producer would store it, for the worker.Handle handler\n" +
			"of the queue. It prints the job's ID; the same job under the same ID again changes\n" +
			"nothing, and a job whose unique key another job holds prints that job's ID.\n" +
			"A well-formed TRACEPARENT variable (W3C) is stored with the job: its attempts'\n" +
			"spans join that trace (spec/tracing.md).",
		Example: "  weir enqueue job.json\n" +
			"  echo '{\"queue\": \"resize\", \"payload\": {\"w\": 100}}' | weir enqueue -",
		Args: exactArgs(1),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			name, data, err := readJobFile(args[0], c.InOrStdin())
			if err != nil {
				return command.Usage(err)
			}
			limits := s.(interface{ Config() engine.Config }).Config().Limits
			j, err := workflowfile.ParseJob(name, data, workflowfile.Options{Limits: limits})
			if err != nil {
				return command.Usage(err)
			}
			res, err := s.Enqueue(ctx, engine.EnqueueParams{Job: j.Spec, TraceParent: envTraceParent()})
			if err != nil {
				if errors.Is(err, weirpkg.ErrJobExists) {
					return command.Fail(fmt.Errorf("%s: a job %q exists with a different queue, payload or options", name, j.Spec.ID))
				}
				return storeErr(name, err)
			}
			if res.Existing != "" {
				// another job holds the unique key: that job is the answer
				fmt.Fprintf(c.ErrOrStderr(), "weir enqueue: job %s holds the unique key (%s); nothing enqueued\n", res.Existing, res.State)
				fmt.Fprintln(c.OutOrStdout(), res.Existing)
				return nil
			}
			fmt.Fprintln(c.OutOrStdout(), j.Spec.ID)
			return nil
		}),
	}
}

// readJobFile reads path, or stdin for "-" (named "stdin"), each at most
// workflowfile.MaxFileSize bytes, as workflowfile.Load reads a workflow
// file.
func readJobFile(path string, stdin io.Reader) (string, []byte, error) {
	if path == "-" {
		b, err := workflowfile.Read("stdin", stdin)
		return "stdin", b, err
	}
	b, err := workflowfile.ReadFile(path)
	return path, b, err
}
