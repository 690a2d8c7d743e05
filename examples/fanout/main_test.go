package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/examples/internal/exampletest"
)

func TestFanOutFanInOverAThousandTasks(t *testing.T) {
	exampletest.OnEachStore(t, func(t *testing.T, store exampletest.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		var out strings.Builder
		if err := run(ctx, store, &out, Options{Tasks: 1000, PerTask: 1000, Workers: 2}); err != nil {
			t.Fatal(err)
		}
		if want := "sum of squares below 1000000 over 1000 tasks: 333332833333500000 (true)\n"; out.String() != want {
			t.Fatalf("output %q; want %q", out.String(), want)
		}
	})
}
