// Command weir runs workflow files of shell tasks on weir, on an embedded
// in-process Redis-protocol server or on a shared Redis. The file format is
// spec/workflow-file.md.
//
// The command only wires weir's packages together: workflowfile reads the
// files, shell runs their tasks, rest is the REST API of `weir serve` and
// `weir dev`, redisstore the Redis store (`weir lua` prints the Lua it
// runs) and bench the scenarios of `weir bench`.
// The conformance suite is the command weir-conformance (cmd/weir-conformance),
// so that this binary links neither package testing nor rapid.
package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/redisstore"
)

// Exit statuses.
const (
	exitOK    = command.ExitOK    // the workflow completed (or the command did its job)
	exitEnded = command.ExitFail  // the workflow ended another way, or the command failed
	exitUsage = command.ExitUsage // usage or validation error
)

type globalFlags struct {
	redisURL string
	// cluster is --cluster: a Redis Cluster's seed addresses
	cluster   string
	namespace string
	// partitions is --partitions (else WEIR_PARTITIONS): the
	// engine.Config.Partitions of the stores the command opens
	partitions int
	// durable is redisstore.Options.Durable (--durable-replicas, --durable-timeout)
	durable redisstore.Durable
	// cfg is the engine.Config of the stores the command opens (check)
	cfg engine.Config
}

func main() { command.Main("weir", newRoot) }

// run runs the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return command.Run(ctx, "weir", newRoot(stdout, stderr), args, stderr)
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "weir",
		Short: "Run workflows of shell tasks on weir",
		Long: "weir runs workflow files (spec/workflow-file.md) of shell tasks. With no Redis URL\n" +
			"(--redis or WEIR_REDIS_URL) and no Redis Cluster (--cluster or WEIR_REDIS_CLUSTER)\n" +
			"`weir run` uses an embedded in-process server. --redis and --cluster exclude each other;\n" +
			"a flag beats both variables, and WEIR_REDIS_URL beats WEIR_REDIS_CLUSTER when both are set.",
		Example: "  weir run examples/pipeline.yaml\n" +
			"  weir submit examples/pipeline.yaml --redis redis://127.0.0.1:6379/0\n" +
			"  WEIR_REDIS_URL=redis://127.0.0.1:6379/0 weir worker --queues default",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command checks the global flags before it runs.
		PersistentPreRunE: func(c *cobra.Command, _ []string) error { return g.check(c.Flags().Changed("partitions")) },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return command.Usage(err) })
	root.PersistentFlags().StringVar(&g.redisURL, "redis", "", "Redis URL (redis:// or rediss://); default $WEIR_REDIS_URL")
	root.PersistentFlags().StringVar(&g.cluster, "cluster", "",
		"Redis Cluster seed addresses, `host:port,...` (or a redis:// cluster URL); default $WEIR_REDIS_CLUSTER")
	root.PersistentFlags().IntVar(&g.partitions, "partitions", 0,
		"partitions of the namespace when it is first written (spec/partitions.md; 0: the namespace's own, 1 for a new one); default $WEIR_PARTITIONS")
	root.PersistentFlags().StringVar(&g.namespace, "namespace", "", "weir namespace in Redis (default \"default\")")
	root.PersistentFlags().IntVar(&g.durable.Replicas, "durable-replicas", 0,
		"acknowledge a transition only once this many replicas have it (Redis WAIT; 0: off)")
	root.PersistentFlags().DurationVar(&g.durable.Timeout, "durable-timeout", time.Second,
		"how long a transition waits for --durable-replicas before it fails as not replicated")
	root.AddCommand(newRunCmd(g), newSubmitCmd(g), newStatusCmd(g), newWaitCmd(g), newCancelCmd(g),
		newLsCmd(g), newQueuesCmd(g, "queues"), newPauseCmd(g, true, true), newPauseCmd(g, false, true), newQueueCmd(g), newWorkerCmd(g),
		newDevCmd(g), newServeCmd(g), newBenchCmd(g), newEnqueueCmd(g), newScheduleCmd(g))
	root.AddCommand(newJobsCmd(g), newCancelJobCmd(g), newPurgeCmd(g, true), newRetryJobCmd(g), newRerunCmd(g),
		newDeleteCmd(g, false), newDeleteCmd(g, true), newSignalCmd(g), newEventsCmd(g), newLuaCmd())
	root.AddCommand(newWorkersCmd(g), newMigrateCmd(g))
	cobraExamples(root)
	return root
}

// aliasNote ends the Short of a command kept at the top level as an
// alias of weir PATH (alias set): weir pause, resume and purge.
func aliasNote(alias bool, path string) string {
	if !alias {
		return ""
	}
	return " (alias of weir " + path + ")"
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return command.Usage(fmt.Errorf("%s takes %d argument(s), got %d (usage: %s)", c.Name(), n, len(args), c.UseLine()))
		}
		return nil
	}
}
