package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/weirflow/weir/examples/internal/exampletest"
)

func TestFanOutFanInOverAThousandTasks(t *testing.T) {
	exampletest.CheckOutput(t, 3*time.Minute, "sum of squares below 1000000 over 1000 tasks: 333332833333500000 (true)\n",
		func(ctx context.Context, s exampletest.Store, out io.Writer) error {
			return run(ctx, s, out, Options{Tasks: 1000, PerTask: 1000, Workers: 2})
		})
}
