// Package command is what weir's commands share around their cobra root:
// the main function (signals, quiet go-redis logs, the exit status) and
// errors that carry an exit status.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// Exit statuses every command shares: 0 when it did its job, 1 when it
// failed (Fail), 2 for a usage or validation error (Usage, and cobra's own
// errors: an unknown command, a bad flag, wrong arguments).
const (
	ExitOK    = 0
	ExitFail  = 1
	ExitUsage = 2
)

// ExitError is an error that ends the command with status Code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Usage ends the command with ExitUsage and err's message.
func Usage(err error) error { return &ExitError{ExitUsage, err} }

// Fail ends the command with ExitFail and err's message.
func Fail(err error) error { return &ExitError{ExitFail, err} }

// ErrQuiet, as (or wrapped in) a command's error, ends the command with
// nothing more printed: the command's own output said why.
var ErrQuiet = errors.New("")

// Main runs the root command that newRoot makes on the process's
// arguments until it returns or SIGINT/SIGTERM cancels its context, then
// exits with its status (Run).
func Main(name string, newRoot func(stdout, stderr io.Writer) *cobra.Command) {
	redis.SetLogger(quietRedisLog{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, name, newRoot(os.Stdout, os.Stderr), os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// Run runs root with args and returns the exit status: ExitOK, an
// ExitError's Code, else ExitUsage (cobra's own errors). It prints the
// error to stderr as "name: message" unless it is ErrQuiet.
func Run(ctx context.Context, name string, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitUsage
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	if !errors.Is(err, ErrQuiet) {
		fmt.Fprintln(stderr, name+":", err)
	}
	return code
}

// quietRedisLog drops go-redis's internal log lines (connection pool
// notes printed at shutdown); errors that matter reach the command as
// errors.
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}
