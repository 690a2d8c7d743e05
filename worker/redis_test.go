package worker_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
)

// redisBackends returns a miniredis backend and, when WEIR_REDIS_URL is
// set, one on that server. Each open is a new connection pool, as another
// process would have; all of a backend's handles share one namespace.
func redisBackends(t testing.TB) []backend {
	t.Helper()
	bs := []backend{{name: "miniredis", open: func() func(testing.TB) client.Store {
		var opt *redis.Options
		ns := redistest.NewNamespace("wt")
		return func(t testing.TB) client.Store {
			if opt == nil {
				opt = redistest.Mini(t).Options
			}
			return openLua(t, opt, ns)
		}
	}()}}
	if redistest.Wanted() {
		opt := redistest.Shared(t).Options
		ns := redistest.NewNamespace("wt")
		bs = append(bs, backend{name: "redis", open: func(t testing.TB) client.Store {
			return openLua(t, opt, ns)
		}})
	}
	return bs
}

// openLua opens a redisstore.Store on a new client; the test's end closes the
// client and removes the namespace's keys.
func openLua(t testing.TB, opt *redis.Options, ns string) client.Store {
	t.Helper()
	rdb := redistest.Client(t, opt)
	redistest.CleanupNamespace(t, rdb, ns)
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
