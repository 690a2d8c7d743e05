package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	weirpkg "github.com/weirflow/weir"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/workflowfile"
)

// newSignalCmd is `weir signal ID TASK [--value JSON | --fail REASON]`:
// it completes (or fails) an open signal task, as the REST API's signal
// route does, with the value encoded the same way.
func newSignalCmd(g *globalFlags) *cobra.Command {
	var value, fail string
	c := &cobra.Command{
		Use:   "signal ID TASK",
		Short: "Complete an open signal task with --value JSON (default null), or fail it with --fail REASON",
		Example: "  weir signal photo-42 approve --value '{\"by\": \"ann\"}'\n" +
			"  weir signal photo-42 approve --fail \"rejected by ann\"",
		Args: exactArgs(2),
		RunE: withStore(g, func(ctx context.Context, s engine.Store, c *cobra.Command, args []string) error {
			doc := map[string]any{}
			switch {
			case c.Flags().Changed("value") && c.Flags().Changed("fail"):
				return command.Usage(errors.New("--value completes the task, --fail fails it: give one"))
			case c.Flags().Changed("fail"):
				doc["fail"] = fail
			case c.Flags().Changed("value"):
				if !json.Valid([]byte(value)) {
					return command.Usage(fmt.Errorf("--value %q is not one JSON value", value))
				}
				doc["value"] = json.RawMessage(value)
			}
			body, err := json.Marshal(doc)
			if err != nil {
				return command.Usage(fmt.Errorf("--value: %w", err))
			}
			sig, err := workflowfile.ParseSignal("--value", body, workflowfile.Options{Format: workflowfile.FormatJSON})
			if err != nil {
				return command.Usage(err)
			}
			sg, ok := s.(engine.Signaller)
			if !ok {
				return command.Fail(fmt.Errorf("the store %T has no signal tasks", s))
			}
			what := "task " + args[1] + " of workflow " + args[0]
			r, err := sg.Signal(ctx, engine.SignalParams{Workflow: args[0], Task: args[1], Kind: sig.Kind, Value: sig.Value, Reason: sig.Reason})
			switch {
			case errors.Is(err, weirpkg.ErrNotOpen):
				return command.Fail(fmt.Errorf("%s is not open yet: its dependencies have not all ended", what))
			case errors.Is(err, weirpkg.ErrSignalled):
				return command.Fail(fmt.Errorf("%s has ended otherwise (%w)", what, err))
			case err != nil:
				return storeErr(what, err)
			}
			note := ""
			if !r.Signalled {
				note = " (already, by the same signal)"
			}
			fmt.Fprintf(c.OutOrStdout(), "%s %s%s; workflow %s\n", what, r.State, note, r.WorkflowState)
			return nil
		}),
	}
	c.Flags().StringVar(&value, "value", "null", "the task's result, one JSON value")
	c.Flags().StringVar(&fail, "fail", "", "fail the task with this reason instead")
	return c
}
