// Package exampletest runs the examples' tests on every kind of store: the
// in-process one, lua on miniredis, and lua on the Redis server named by
// WEIR_REDIS_URL when it is set.
package exampletest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/lua"
)

// Store is the store an example runs on.
type Store = engine.Store

var seq atomic.Int64

// OnEachStore runs f as a subtest per store, each a fresh one.
func OnEachStore(t *testing.T, f func(t *testing.T, s Store)) {
	t.Run("memstore", func(t *testing.T) { f(t, memstore.New()) })
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		f(t, openLua(t, &redis.Options{Addr: m.Addr()}))
	})
	if url := os.Getenv("WEIR_REDIS_URL"); url != "" {
		t.Run("redis", func(t *testing.T) {
			opt, err := redis.ParseURL(url)
			if err != nil {
				t.Fatal(err)
			}
			f(t, openLua(t, opt))
		})
	}
}

// openLua opens a lua.Store in a namespace of its own, removed at the end.
func openLua(t *testing.T, opt *redis.Options) Store {
	t.Helper()
	rdb := redis.NewClient(opt)
	ns := fmt.Sprintf("ex%d-%d", time.Now().UnixNano(), seq.Add(1))
	s, err := lua.New(rdb, lua.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, "weir:{"+ns+":*", 1000).Iterator()
		var ks []string
		for iter.Next(ctx) {
			ks = append(ks, iter.Val())
		}
		if len(ks) > 0 {
			rdb.Del(ctx, ks...)
		}
		rdb.Close()
	})
	return s
}
