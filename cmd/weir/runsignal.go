package main

import (
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"io"
	"strings"
)

// signalCommand returns, for weir run, the command another terminal runs
// to signal a task of workflow id: with the embedded server's URL (url;
// empty for a shared Redis, which the other terminal reaches as this one
// does: a URL may hold a password, so it is not printed) and the
// namespace (ns, when given).
func signalCommand(id, url, ns string) func(task string) string {
	return func(task string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "weir signal %s %s", id, task)
		if url != "" {
			fmt.Fprintf(&b, " --redis %s", url)
		}
		if ns != "" {
			fmt.Fprintf(&b, " --namespace %s", ns)
		}
		b.WriteString(" --value JSON")
		return b.String()
	}
}

// signalLines returns one line per open signal task of w: how to signal
// it (command gives the command).
func signalLines(w weirpkg.Workflow, command func(task string) string) []string {
	if command == nil {
		return nil
	}
	var lines []string
	for _, t := range w.Tasks {
		if t.State == weirpkg.Open {
			lines = append(lines, fmt.Sprintf("signal %s: %s", t.Name, command(t.Name)))
		}
	}
	return lines
}

// newSignalPrinter returns a function that prints to out, once per task,
// how to signal each task of the workflow that is open.
func newSignalPrinter(out io.Writer, command func(task string) string) func(weirpkg.Workflow) {
	shown := map[string]bool{}
	return func(w weirpkg.Workflow) {
		for _, l := range signalLines(w, command) {
			if !shown[l] {
				shown[l] = true
				fmt.Fprintln(out, l)
			}
		}
	}
}
