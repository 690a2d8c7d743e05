package shell

import (
	"fmt"
	"strings"
)

// MaxCommand is the most bytes one shell command (a task's run, an undo's
// run) may have. A worker runs it as the one argument of `sh -c`, and Linux
// bounds one argument of exec to 32 pages (MAX_ARG_STRLEN, 128 KiB) with
// its terminating NUL: a longer command could never start, and every
// attempt would fail with "argument list too long". Other systems bound
// only the total of arguments and environment, which is larger.
const MaxCommand = 128<<10 - 1

// CheckCommand says why no worker could start the shell command run: a NUL
// byte (exec takes each argument as a C string, which ends at the first
// NUL) or a length over MaxCommand; nil when neither. Package workflowfile
// refuses such a command at the submit; a worker fails a job that holds
// one at its first attempt, without retrying it (a Go producer may enqueue
// any Payload).
func CheckCommand(run string) error {
	if i := strings.IndexByte(run, 0); i >= 0 {
		return fmt.Errorf("the command holds a NUL byte (at byte %d): a command is passed to sh -c as a C string, which cannot hold one", i)
	}
	if len(run) > MaxCommand {
		return fmt.Errorf("the command is %d bytes, over the limit of %d (the longest argument sh -c can be given on Linux): put it in a script file and run that", len(run), MaxCommand)
	}
	return nil
}
