package worker_test

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
	"github.com/weirflow/weir/lua"
)

var nsSeq atomic.Int64

// redisBackends returns a miniredis backend and, when WEIR_REDIS_URL is
// set, one on that server. Each open is a new connection pool, as another
// process would have; all of a backend's handles share one namespace.
func redisBackends(t testing.TB) []backend {
	t.Helper()
	bs := []backend{{name: "miniredis", open: func() func(testing.TB) engine.Store {
		var m *miniredis.Miniredis
		ns := newNamespace()
		return func(t testing.TB) engine.Store {
			if m == nil {
				m = miniredis.RunT(t)
			}
			return openLua(t, &redis.Options{Addr: m.Addr()}, ns)
		}
	}()}}
	if url := os.Getenv("WEIR_REDIS_URL"); url != "" {
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("WEIR_REDIS_URL: %v", err)
		}
		ns := newNamespace()
		bs = append(bs, backend{name: "redis", open: func(t testing.TB) engine.Store {
			return openLua(t, opt, ns)
		}})
	}
	return bs
}

func newNamespace() string {
	return fmt.Sprintf("wt%d-%d", time.Now().UnixNano(), nsSeq.Add(1))
}

// openLua opens a lua.Store on a new client; the test's end closes the
// client and removes the namespace's keys.
func openLua(t testing.TB, opt *redis.Options, ns string) engine.Store {
	t.Helper()
	rdb := redis.NewClient(opt)
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
