package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/command"
)

// groupRun is the RunE of a command that only groups others (weir queue,
// weir schedule): with no argument it prints its help; an argument is no
// command of it, a usage error (cobra alone would print the help and exit
// 0, so a mistyped verb would look done).
func groupRun(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return c.Help()
	}
	return command.Usage(fmt.Errorf("%s: unknown command %q (%s --help lists them)", c.CommandPath(), args[0], c.CommandPath()))
}
