// Package exampletest runs the examples' tests on every kind of store: the
// in-process one, lua on miniredis, and lua on the Redis server named by
// WEIR_REDIS_URL when it is set.
package exampletest

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
)

// Store is the store an example runs on.
type Store = client.Store

// OnEachStore runs f as a subtest per store, each a fresh one.
func OnEachStore(t *testing.T, f func(t *testing.T, s Store)) {
	t.Run("memstore", func(t *testing.T) { f(t, memstore.New()) })
	t.Run("miniredis", func(t *testing.T) {
		f(t, openLua(t, redistest.Mini(t).Options))
	})
	if redistest.Wanted() {
		t.Run("redis", func(t *testing.T) {
			f(t, openLua(t, redistest.Shared(t).Options))
		})
	}
}

// CheckOutput runs run on each store (OnEachStore), with a context that
// ends after timeout, and fails the test unless it succeeds and writes
// exactly want.
func CheckOutput(t *testing.T, timeout time.Duration, want string, run func(ctx context.Context, s Store, out io.Writer) error) {
	OnEachStore(t, func(t *testing.T, s Store) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var out strings.Builder
		if err := run(ctx, s, &out); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
		}
	})
}

// openLua opens a redisstore.Store in a namespace of its own, removed at the end.
func openLua(t *testing.T, opt *redis.Options) Store {
	t.Helper()
	rdb := redistest.Client(t, opt)
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: redistest.Namespace(t, rdb, "ex")})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
