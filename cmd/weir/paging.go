package main

import (
	"fmt"
	"io"
	"strings"

	weirpkg "github.com/weirflow/weir"
	"github.com/weirflow/weir/internal/command"
)

// What the listing commands (ls, jobs) share: a page of --limit read with
// one store call, and the cursor of the next.

// maxPage is the largest --limit: the store's largest page.
const maxPage = 1000

// workflowStates are the states weir ls --state takes.
var workflowStates = []weirpkg.WorkflowState{
	weirpkg.WorkflowRunning, weirpkg.WorkflowCompleted, weirpkg.WorkflowFailed, weirpkg.WorkflowCancelled,
	weirpkg.WorkflowCompensating, weirpkg.WorkflowCompensated, weirpkg.WorkflowCompensationFailed,
}

// joinStates is workflowStates for a message: "running, completed, ...".
func joinStates() string {
	s := make([]string, len(workflowStates))
	for i, st := range workflowStates {
		s[i] = string(st)
	}
	return strings.Join(s, ", ")
}

// checkLimit refuses a --limit outside [1, maxPage] (the store would read
// 0 as its default).
func checkLimit(n int) error {
	if n < 1 || n > maxPage {
		return command.Usage(fmt.Errorf("--limit %d: give a page size from 1 to %d", n, maxPage))
	}
	return nil
}

// printMore tells how to list the next page, when there is one.
func printMore(w io.Writer, next string) {
	if next != "" {
		fmt.Fprintf(w, "more: --cursor %s\n", next)
	}
}
