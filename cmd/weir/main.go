// Command weir runs workflow files of shell tasks on weir, on an embedded
// in-process Redis-protocol server or on a shared Redis. The file format is
// spec/workflow-file.md.
//
// The command only wires weir's packages together: workflowfile reads the
// files, shell runs their tasks, rest is the REST API of `weir serve` and
// `weir dev`, lua the Redis store and bench the scenarios of `weir bench`.
// The conformance suite is the command weir-conformance (cmd/weir-conformance),
// so that this binary links neither package testing nor rapid.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/weirflow/weir/lua"
)

// Exit statuses.
const (
	exitOK    = 0 // the workflow completed (or the command did its job)
	exitEnded = 1 // the workflow ended another way, or the command failed
	exitUsage = 2 // usage or validation error
)

// exitError carries the exit status of an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(err error) error { return &exitError{exitUsage, err} }
func failErr(err error) error  { return &exitError{exitEnded, err} }

// errQuiet ends the command with status 1 and nothing more to print (the
// summary said it).
var errQuiet = errors.New("")

type globalFlags struct {
	redisURL  string
	namespace string
	// durable is lua.Options.Durable (--durable-replicas, --durable-timeout)
	durable lua.Durable
}

// quietRedisLog drops go-redis's internal log lines (connection pool
// notes printed at shutdown); errors that matter reach the commands as
// errors.
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

func main() {
	redis.SetLogger(quietRedisLog{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitUsage // cobra's own errors: unknown command, bad flag, arguments
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if !errors.Is(err, errQuiet) {
		fmt.Fprintln(stderr, "weir:", err)
	}
	return code
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "weir",
		Short: "Run workflows of shell tasks on weir",
		Long: "weir runs workflow files (spec/workflow-file.md) of shell tasks. With no Redis URL\n" +
			"(--redis or WEIR_REDIS_URL) `weir run` uses an embedded in-process server.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageErr(err) })
	root.PersistentFlags().StringVar(&g.redisURL, "redis", "", "Redis URL (redis:// or rediss://); default $WEIR_REDIS_URL")
	root.PersistentFlags().StringVar(&g.namespace, "namespace", "", "weir namespace in Redis (default \"default\")")
	root.PersistentFlags().IntVar(&g.durable.Replicas, "durable-replicas", 0,
		"acknowledge a transition only once this many replicas have it (Redis WAIT; 0: off)")
	root.PersistentFlags().DurationVar(&g.durable.Timeout, "durable-timeout", time.Second,
		"how long a transition waits for --durable-replicas before it fails as not replicated")
	root.AddCommand(newRunCmd(g), newSubmitCmd(g), newStatusCmd(g), newWaitCmd(g), newCancelCmd(g),
		newLsCmd(g), newQueuesCmd(g), newPauseCmd(g, true), newPauseCmd(g, false), newQueueCmd(g), newWorkerCmd(g),
		newDevCmd(g), newServeCmd(g), newBenchCmd(g), newEnqueueCmd(g), newScheduleCmd(g))
	root.AddCommand(newJobsCmd(g), newCancelJobCmd(g), newPurgeCmd(g), newRetryJobCmd(g),
		newDeleteCmd(g, false), newDeleteCmd(g, true), newSignalCmd(g))
	return root
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr(fmt.Errorf("%s takes %d argument(s), got %d (usage: %s)", c.Name(), n, len(args), c.UseLine()))
		}
		return nil
	}
}
