package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// helpPaths walks the command table from c: the argument path of every
// command a user sees (hidden ones left out), c's own first.
func helpPaths(c *cobra.Command, path []string) [][]string {
	out := [][]string{path}
	for _, sub := range c.Commands() {
		if sub.Hidden {
			continue
		}
		out = append(out, helpPaths(sub, append(append([]string{}, path...), sub.Name()))...)
	}
	return out
}

// TestHelpHasExamples: every command's --help, walked from the command
// table (cobra's help and completion too), has an Examples section whose
// lines show the command, indented, and prints no stray blank line: none
// first, none doubled, none at the end.
func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	paths := helpPaths(newRoot(io.Discard, io.Discard), nil)
	if len(paths) < 40 {
		t.Errorf("walked %d commands; the table has more", len(paths))
	}
	for _, path := range paths {
		name := strings.Join(append([]string{"weir"}, path...), " ")
		t.Run(strings.Join(append([]string{"weir"}, path...), "_"), func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			if code := run(t.Context(), append(append([]string{}, path...), "--help"), &out, &errb); code != exitOK || errb.Len() > 0 {
				t.Fatalf("%s --help: status %d, stderr %q", name, code, errb.String())
			}
			help := out.String()
			checkBlankLines(t, name+" --help", help)
			_, examples, ok := strings.Cut(help, "\nExamples:\n")
			if !ok {
				t.Fatalf("%s --help has no Examples section:\n%s", name, help)
			}
			examples, _, _ = strings.Cut(examples, "\n\n")
			cmdName := "weir"
			if len(path) > 0 {
				cmdName = path[len(path)-1]
			}
			for _, l := range strings.Split(examples, "\n") {
				if !strings.HasPrefix(l, "  ") || strings.TrimSpace(l) == "" || !strings.Contains(l, "weir") {
					t.Errorf("%s: example line %q is not an indented weir command", name, l)
				}
			}
			if !strings.Contains(examples, cmdName) {
				t.Errorf("%s: no example shows %s:\n%s", name, cmdName, examples)
			}
		})
	}
}
