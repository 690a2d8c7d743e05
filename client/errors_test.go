package client_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
)

// redisStores returns a redisstore.Store on miniredis, and one on the Redis server
// of WEIR_REDIS_URL when it is set, each in a namespace of its own.
func redisStores(t *testing.T) map[string]client.Store {
	t.Helper()
	servers := map[string]redistest.Server{"miniredis": redistest.Mini(t)}
	if redistest.Wanted() {
		servers["redis"] = redistest.Shared(t)
	}
	stores := map[string]client.Store{}
	for name, srv := range servers {
		rdb := redistest.Client(t, srv.Options)
		s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t, rdb, "cl")})
		if err != nil {
			t.Fatal(err)
		}
		stores[name] = s
	}
	return stores
}

// The Redis store's errors match the sentinels of package weir with
// errors.Is (and the same values under package engine's names), and its
// validation errors are *weir.ValidationError.
func TestRedisStoreErrorsAreWeirErrors(t *testing.T) {
	for name, store := range redisStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			c := client.New(store)
			_, err := client.OpenJob(c, strQ, "no-such-job").Status(ctx)
			if !errors.Is(err, weir.ErrNotFound) {
				t.Fatalf("Status of an unknown job: %v, want weir.ErrNotFound", err)
			}
			if weir.Sentinel(err) != weir.ErrNotFound || weir.Sentinel(err).Code != "NOTFOUND" {
				t.Fatalf("Sentinel(%v) = %v", err, weir.Sentinel(err))
			}
			if _, err := c.OpenWorkflow("no-such-wf").Status(ctx); !errors.Is(err, weir.ErrNotFound) {
				t.Fatalf("Status of an unknown workflow: %v, want weir.ErrNotFound", err)
			}
			j, err := client.Enqueue(ctx, c, strQ, "x", client.ID("j1"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.Cancel(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := j.Cancel(ctx); !errors.Is(err, weir.ErrJobEnded) {
				t.Fatalf("second Cancel: %v, want weir.ErrJobEnded", err)
			}
			_, err = j.Wait(ctx)
			var je *weir.JobError
			if !errors.As(err, &je) || je.State != weir.Cancelled || !errors.Is(err, weir.ErrCancelled) {
				t.Fatalf("Wait of a cancelled job: %v", err)
			}
			if _, err := client.Enqueue(ctx, c, strQ, "y", client.ID("j1")); !errors.Is(err, weir.ErrJobExists) {
				t.Fatalf("Enqueue of another spec under j1: %v, want weir.ErrJobExists", err)
			}
			_, err = client.Enqueue(ctx, c, strQ, "x", client.Priority(weir.MaxPriority+1))
			var ve *weir.ValidationError
			if !errors.As(err, &ve) || ve.Field != "priority" || !errors.Is(err, weir.ErrInvalid) {
				t.Fatalf("Enqueue with priority %d: %v, want a *weir.ValidationError", weir.MaxPriority+1, err)
			}
		})
	}
}

func TestOptionsPrintThemselves(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		opt  fmt.Stringer
		want string
	}{
		{client.ID("job-1"), `ID("job-1")`},
		{client.Priority(-5), "Priority(-5)"},
		{client.RunAt(at), `RunAt("2030-01-02T03:04:05Z")`},
		{client.Delay(1500 * time.Millisecond), "Delay(1.5s)"},
		{client.MaxAttempts(3), "MaxAttempts(3)"},
		{client.MaxExpiries(weir.NoExpiries), "MaxExpiries(-1)"},
		{client.Backoff(time.Second), "Backoff(1s)"},
		{client.Timeout(2 * time.Minute), "Timeout(2m0s)"},
		{client.WithUndo(false), "WithUndo(false)"},
		{client.WorkflowID("wf-1"), `WorkflowID("wf-1")`},
		{client.FailFast(), "FailFast()"},
		{client.UndoOnCancel(false), "UndoOnCancel(false)"},
	} {
		if got := tc.opt.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
		if got := fmt.Sprint(tc.opt); got != tc.want {
			t.Errorf("Sprint = %s, want %s", got, tc.want)
		}
	}
	if got := fmt.Sprint(client.CancelOption{}); got != "CancelOption{}" {
		t.Errorf("zero CancelOption prints %s", got)
	}
}
