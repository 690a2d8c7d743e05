package shell_test

import (
	"context"
	"github.com/weirflow/weir"
	"testing"
	"time"

	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/worker"
)

// shellWorker starts a worker that runs shell tasks of queue "sh" on a
// new memstore, stopped when t ends; the context ends after 30 s.
func shellWorker(t *testing.T) (context.Context, *memstore.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	store := memstore.New()
	w := worker.New(store, worker.Config{})
	shell.Register(w, []string{"sh"}, weir.DefaultLimits().MaxResult)
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(context.Background()) })
	return ctx, store
}
