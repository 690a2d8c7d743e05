package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/redisstore"
)

// newMigrateCmd is `weir migrate`: redisstore.Store.Migrate.
func newMigrateCmd(g *globalFlags) *cobra.Command {
	var (
		asJSON bool
		p      redisstore.MigrateParams
	)
	c := &cobra.Command{
		Use:   "migrate",
		Short: "Convert a namespace written by an older weir (protocol 2) to this build's protocol",
		Long: "weir migrate converts the namespace from protocol 2 (weir before the protocol marker) to\n" +
			"protocol 3, which this build speaks (docs/upgrading.md, spec/protocol3.md): each partition's\n" +
			"seq hash takes protocol 3's name and every queue's ready jobs of the default priority move\n" +
			"to its ready list in claim order. It runs in bounded steps, each one Lua call in one\n" +
			"partition that moves at most --step jobs; a run stopped (Ctrl-C, a crash, kill -9) goes\n" +
			"on where it stopped when run again. Then, and on a namespace of protocol 3 written before the\n" +
			"index of workflow IDs (weir ls --prefix reads it), it builds that index, --step workflows a\n" +
			"call, while the namespace stays in use. On a namespace of protocol 3 with its index it does\n" +
			"nothing and says so.\n" +
			"\n" +
			"Until it is done, the namespace refuses the calls of both protocols (PROTOCOL errors, nothing\n" +
			"written). Stop the older build's workers and producers first (a job one of them was running\n" +
			"runs again once its lease expires), run weir migrate, then start this build's processes.",
		Example: "  weir migrate --redis redis://127.0.0.1:6379/0 --dry-run\n" +
			"  weir migrate --redis redis://127.0.0.1:6379/0 --namespace orders\n" +
			"  weir migrate --json | jq .moved",
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if p.Step < 1 || p.Step > 1000 {
				return command.Usage(fmt.Errorf("--step %d: want 1 to 1000 ready jobs a call", p.Step))
			}
			cn, err := g.open(c.Context(), false)
			if err != nil {
				return err
			}
			defer cn.Close()
			ns := g.namespace
			if ns == "" {
				ns = "default"
			}
			res, err := cn.store.Migrate(c.Context(), p)
			stopped := err != nil && errors.Is(err, context.Canceled)
			if err != nil && !stopped {
				return storeErr("migrate", err)
			}
			if asJSON {
				if err := printJSON(c.OutOrStdout(), struct {
					Namespace string `json:"namespace"`
					redisstore.MigrateResult
				}{ns, res}); err != nil {
					return err
				}
			} else if err := printMigrate(c.OutOrStdout(), ns, res); err != nil {
				return err
			}
			if stopped {
				return command.Fail(fmt.Errorf("migrate: stopped after %d calls; run weir migrate again to go on", res.Calls))
			}
			return nil
		},
	}
	c.Flags().IntVar(&p.Step, "step", redisstore.DefaultMigrateStep, "the most ready jobs one call moves, and the most queues it looks at (1 to 1000)")
	c.Flags().BoolVar(&p.DryRun, "dry-run", false, "write nothing: say what a migration would move")
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON: namespace, from, resumed, partitions, done, dry_run, moved, queues, flagged, indexed, calls")
	return c
}

// printMigrate says what a migration found and did.
func printMigrate(out io.Writer, ns string, r redisstore.MigrateResult) error {
	var err error
	switch {
	case r.From == 0:
		_, err = fmt.Fprintf(out, "namespace %q holds nothing: nothing to migrate (this build writes a new namespace as protocol %d)\n", ns, redisstore.ProtocolVersion)
	case r.From == 3 && r.Calls == 0:
		_, err = fmt.Fprintf(out, "namespace %q is of protocol %d already: nothing to do\n", ns, redisstore.ProtocolVersion)
	case r.From == 3 && r.DryRun:
		_, err = fmt.Fprintf(out, "namespace %q is of protocol %d, written before its index of workflow IDs: a migration would build it from %d index entries; nothing written\n", ns, redisstore.ProtocolVersion, r.Indexed)
	case r.From == 3 && r.Done:
		_, err = fmt.Fprintf(out, "namespace %q is of protocol %d: its index of workflow IDs built (%d IDs, %d calls)\n", ns, redisstore.ProtocolVersion, r.Indexed, r.Calls)
	case r.From == 3:
		_, err = fmt.Fprintf(out, "namespace %q: the index of workflow IDs under way: %d IDs in %d calls so far\n", ns, r.Indexed, r.Calls)
	case r.DryRun:
		_, err = fmt.Fprintf(out, "namespace %q is of protocol 2 (%s%s): a migration would move %d ready jobs of the default priority into their queues' ready lists (%d queues, %d of which keep jobs of other priorities); nothing written\n",
			ns, plural(r.Partitions, "partition"), resumedNote(r), r.Moved, r.Queues, r.Flagged)
	case r.Done:
		_, err = fmt.Fprintf(out, "namespace %q migrated from protocol 2 to %d (%s%s): %d ready jobs of the default priority moved into their queues' ready lists (%d queues, %d of which keep jobs of other priorities), %d calls\n",
			ns, redisstore.ProtocolVersion, plural(r.Partitions, "partition"), resumedNote(r), r.Moved, r.Queues, r.Flagged, r.Calls)
	default:
		_, err = fmt.Fprintf(out, "namespace %q: migration under way (%s%s): %d ready jobs moved in %d calls so far\n",
			ns, plural(r.Partitions, "partition"), resumedNote(r), r.Moved, r.Calls)
	}
	return err
}

// plural is "n word", with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func resumedNote(r redisstore.MigrateResult) string {
	if r.Resumed {
		return ", resuming an earlier run"
	}
	return ""
}
