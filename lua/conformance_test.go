package lua_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/conformance/luastore"
	"github.com/weirflow/weir/lua"
)

// Default numbers of random sequences under go test (the README's
// `go test -race ./...`); WEIR_CONFORMANCE_SEQUENCES raises them (CI runs
// 10,000 per store without -race, see spec/conformance.md). The three
// tests run in parallel with each other.
const (
	miniredisSequences = 300
	redisSequences     = 300
	clusterSequences   = 300
)

func confRun(t *testing.T, sequences int, rdb redis.UniversalClient, more ...redis.UniversalClient) {
	confRunOn(t, lua.PathAuto, sequences, rdb, more...)
}

// confRunPaths runs the suite on the function library and on the scripts,
// as subtests.
func confRunPaths(t *testing.T, sequences int, rdb redis.UniversalClient) {
	for _, p := range []lua.CallPath{lua.PathFunctions, lua.PathScripts} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			confRunOn(t, p, sequences, rdb)
		})
	}
}

func confRunOn(t *testing.T, path lua.CallPath, sequences int, rdb redis.UniversalClient, more ...redis.UniversalClient) {
	prefix := fmt.Sprintf("conf%d", time.Now().UnixNano())
	t.Cleanup(func() {
		for _, c := range append([]redis.UniversalClient{rdb}, more...) {
			luastore.Clean(context.Background(), c, prefix)
		}
	})
	conformance.Run(t, luastore.NewStoreOn(prefix, path, rdb, more...), conformance.Sequences(sequences))
}

// TestConformanceMiniredis holds lua.Store on miniredis to the model. A
// miniredis runs one script at a time, so the stores are spread over
// several, one core each.
func TestConformanceMiniredis(t *testing.T) {
	t.Parallel()
	var rdbs []redis.UniversalClient
	for range max(2, runtime.GOMAXPROCS(0)) {
		m := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { rdb.Close() })
		rdbs = append(rdbs, rdb)
	}
	confRun(t, miniredisSequences, rdbs[0], rdbs[1:]...)
}

// TestConformanceRedis holds lua.Store on the redis-server of
// WEIR_REDIS_URL to the model.
func TestConformanceRedis(t *testing.T) {
	t.Parallel()
	url := os.Getenv("WEIR_REDIS_URL")
	if url == "" {
		t.Skip("WEIR_REDIS_URL is not set")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	confRunPaths(t, redisSequences, rdb)
}

// TestConformanceCluster holds lua.Store on the Redis Cluster whose seed
// addresses WEIR_REDIS_CLUSTER lists (comma-separated) to the model.
func TestConformanceCluster(t *testing.T) {
	t.Parallel()
	addrs := os.Getenv("WEIR_REDIS_CLUSTER")
	if addrs == "" {
		t.Skip("WEIR_REDIS_CLUSTER is not set")
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	confRunPaths(t, clusterSequences, rdb)
}

// TestConformanceSmallBudget holds lua.Store to the model with a step
// budget of 2 (lua.Store.SetStepBudget): every cascade past two dependents
// stops, is drained over more calls, and must still come out as the
// model's, on miniredis and, with WEIR_REDIS_URL, on redis-server.
func TestConformanceSmallBudget(t *testing.T) {
	t.Parallel()
	budgetRun := func(t *testing.T, path lua.CallPath, rdb redis.UniversalClient) {
		prefix := fmt.Sprintf("confb%d", time.Now().UnixNano())
		t.Cleanup(func() { luastore.Clean(context.Background(), rdb, prefix) })
		conformance.Run(t, luastore.NewStoreBudget(prefix, path, 2, rdb), conformance.Sequences(miniredisSequences/3))
	}
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		m := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { rdb.Close() })
		budgetRun(t, lua.PathScripts, rdb)
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		url := os.Getenv("WEIR_REDIS_URL")
		if url == "" {
			t.Skip("WEIR_REDIS_URL is not set")
		}
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(opt)
		t.Cleanup(func() { rdb.Close() })
		budgetRun(t, lua.PathAuto, rdb)
	})
}
