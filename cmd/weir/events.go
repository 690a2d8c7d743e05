package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	weirpkg "github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
)

// newEventsCmd is `weir events [--follow] [--workflow ID] [--after ID]`,
// with `weir events on|off` switching the namespace's stream.
func newEventsCmd(g *globalFlags) *cobra.Command {
	var follow, asJSON bool
	var p client.EventsParams
	c := &cobra.Command{
		Use:   "events [on|off]",
		Short: "Print the namespace's events (--follow: as they come); on|off switches them",
		Long: "weir events prints the events every transition wrote to the namespace's event\n" +
			"stream (spec/events.md), oldest first, one a line: ID, time, type, workflow or\n" +
			"job, attempt, reason. --after resumes after an event's ID, --workflow keeps one\n" +
			"workflow's events, --follow waits for more until interrupted, --json prints one\n" +
			"JSON object a line. `weir events off` stops every process of the namespace from\n" +
			"writing events; `weir events on` starts them again (with the default cap).",
		Example: "  weir events --workflow photo-42\n" +
			"  weir events --follow --json\n" +
			"  weir events off",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 || (len(args) == 1 && args[0] != "on" && args[0] != "off") {
				return command.Usage(fmt.Errorf("events takes no argument, or on or off (usage: %s)", c.UseLine()))
			}
			return nil
		},
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			cl := client.New(s)
			if len(args) == 1 {
				if err := cl.SetEventsOff(ctx, args[0] == "off"); err != nil {
					return storeErr("events", err)
				}
				fmt.Fprintf(c.OutOrStdout(), "events %s\n", args[0])
				return nil
			}
			out := c.OutOrStdout()
			print := func(e weirpkg.Event) error { return printEvent(out, e, asJSON) }
			if follow {
				err := cl.FollowEvents(ctx, p, print)
				if ctx.Err() != nil {
					return nil // interrupted: the normal end of a follow
				}
				return storeErr("events", err)
			}
			for {
				pg, err := cl.Events(ctx, p)
				if err != nil {
					return storeErr("events", err)
				}
				for _, e := range pg.Events {
					if err := print(e); err != nil {
						return err
					}
				}
				if len(pg.Events) == 0 || pg.Next == p.After {
					return nil
				}
				p.After = pg.Next
			}
		}),
	}
	c.Flags().BoolVarP(&follow, "follow", "f", false, "wait for more events until interrupted")
	c.Flags().StringVar(&p.Workflow, "workflow", "", "print only this workflow's events")
	c.Flags().StringVar(&p.After, "after", "", "start after this event ID")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object a line")
	return c
}

// printEvent prints one event: a line of text, or of JSON.
func printEvent(w io.Writer, e weirpkg.Event, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	what := e.Job
	if what == "" {
		what = e.Workflow
	}
	line := fmt.Sprintf("%s %s %s %s", e.ID, e.Time.UTC().Format(weirpkg.TimeLayout), e.Type, what)
	if e.Attempt > 0 {
		line += fmt.Sprintf(" attempt=%d", e.Attempt)
	}
	if e.Reason != "" {
		line += fmt.Sprintf(" reason=%q", e.Reason)
	}
	if e.Worker != "" {
		line += " worker=" + e.Worker
	}
	_, err := fmt.Fprintln(w, line)
	return err
}
