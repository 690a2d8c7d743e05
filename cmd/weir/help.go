package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/weirflow/weir/internal/command"
)

// cobraExamples adds cobra's own commands, help and completion (with a
// command a shell), to root now rather than when it runs, and gives each
// an example as every weir command has one (TestHelpHasExamples).
func cobraExamples(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  weir help queue limit"
		case "completion":
			c.Example = "  source <(weir completion bash)"
			for _, sh := range c.Commands() {
				switch sh.Name() {
				case "bash":
					sh.Example = "  weir completion bash > /etc/bash_completion.d/weir"
				case "zsh":
					sh.Example = "  weir completion zsh > \"${fpath[1]}/_weir\""
				case "fish":
					sh.Example = "  weir completion fish > ~/.config/fish/completions/weir.fish"
				case "powershell":
					sh.Example = "  weir completion powershell | Out-String | Invoke-Expression"
				}
			}
		}
	}
}

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
