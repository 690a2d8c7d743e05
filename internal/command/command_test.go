package command

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"
)

// TestRun: the exit status comes from the error (ExitError's Code, else
// ExitUsage), the message is printed with the command's name, and
// ErrQuiet prints nothing.
func TestRun(t *testing.T) {
	cases := []struct {
		err      error
		args     []string
		code     int
		printed  string
		contains bool
	}{
		{nil, nil, ExitOK, "", false},
		{Fail(errors.New("it broke")), nil, ExitFail, "x: it broke\n", false},
		{fmt.Errorf("wrapped: %w", Usage(errors.New("bad flag value"))), nil, ExitUsage, "x: wrapped: bad flag value\n", false},
		{Fail(ErrQuiet), nil, ExitFail, "", false},
		{nil, []string{"--nope"}, ExitUsage, "unknown flag: --nope", true},
	}
	for _, c := range cases {
		root := &cobra.Command{Use: "x", SilenceErrors: true, SilenceUsage: true,
			RunE: func(*cobra.Command, []string) error { return c.err }}
		var stderr bytes.Buffer
		code := Run(t.Context(), "x", root, c.args, &stderr)
		got := stderr.String()
		if code != c.code || (!c.contains && got != c.printed) || (c.contains && !bytes.Contains(stderr.Bytes(), []byte(c.printed))) {
			t.Errorf("%v %v: status %d, printed %q; want %d, %q", c.err, c.args, code, got, c.code, c.printed)
		}
	}
}
