package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/redisstore/redisconformance"
)

// Default numbers of random sequences under go test (the README's
// `go test -race ./...`); WEIR_CONFORMANCE_SEQUENCES raises them (CI runs
// 3,500 per store without -race, see .ci/run). The three
// tests run in parallel with each other.
const (
	miniredisSequences = 300
	redisSequences     = 300
	clusterSequences   = 300
)

// smallEnv, set to 1, cuts the default count of TestConformanceMiniredis,
// TestConformanceRedis and TestConformanceCluster to smallSequences per
// store and call path. CI's race suite sets it (.ci/run): CI's
// conformance step runs the same tests right after, without -race, with
// WEIR_CONFORMANCE_SEQUENCES at 3,500, so under -race they need only
// show the race detector every kind of step on each store, which one
// rapid.Check call of 100 sequences (10 to 30 steps each) does. Unset, a
// developer's `go test -race ./...` runs the defaults above.
const (
	smallEnv       = "WEIR_CONFORMANCE_SMALL"
	smallSequences = 100
)

// sequencesOf returns n, the default count of a test, or smallSequences
// when smallEnv is 1 and n is larger.
func sequencesOf(t *testing.T, n int) int {
	switch v := os.Getenv(smallEnv); v {
	case "", "0":
		return n
	case "1":
		return min(n, smallSequences)
	default:
		t.Fatalf("%s=%q: want 1 (CI's race suite) or unset", smallEnv, v)
		return n
	}
}

func confRun(t *testing.T, sequences int, rdb redis.UniversalClient, more ...redis.UniversalClient) {
	confRunOn(t, redisstore.PathAuto, sequences, rdb, more...)
}

// confRunPaths runs the suite on the function library and on the scripts,
// as subtests.
func confRunPaths(t *testing.T, sequences int, rdb redis.UniversalClient) {
	for _, p := range []redisstore.CallPath{redisstore.PathFunctions, redisstore.PathScripts} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			confRunOn(t, p, sequences, rdb)
		})
	}
}

func confRunOn(t *testing.T, path redisstore.CallPath, sequences int, rdb redis.UniversalClient, more ...redis.UniversalClient) {
	prefix := fmt.Sprintf("conf%d", time.Now().UnixNano())
	t.Cleanup(func() {
		for _, c := range append([]redis.UniversalClient{rdb}, more...) {
			_ = redisconformance.Clean(context.Background(), c, prefix)
		}
	})
	conformance.Run(t, redisconformance.NewStoreOn(prefix, path, rdb, more...), conformance.Sequences(sequences))
}

// TestConformanceMiniredis holds redisstore.Store on miniredis to the model. A
// miniredis runs one script at a time, so the stores are spread over
// several, one core each.
func TestConformanceMiniredis(t *testing.T) {
	t.Parallel()
	var rdbs []redis.UniversalClient
	for range max(2, runtime.GOMAXPROCS(0)) {
		rdbs = append(rdbs, redistest.Client(t, redistest.Mini(t).Options))
	}
	confRun(t, sequencesOf(t, miniredisSequences), rdbs[0], rdbs[1:]...)
}

// TestConformanceRedis holds redisstore.Store on the redis-server of
// WEIR_REDIS_URL to the model.
func TestConformanceRedis(t *testing.T) {
	t.Parallel()
	confRunPaths(t, sequencesOf(t, redisSequences), redistest.Client(t, redistest.Shared(t).Options))
}

// TestConformanceGeneralPaths holds redisstore.Store to the model with its
// fast paths off (redisstore.Store.SetFastPaths): every transition on its
// general code, on miniredis (the scripts path) and on the redis-server
// of WEIR_REDIS_URL (functions), as the other tests hold the fast paths.
func TestConformanceGeneralPaths(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, path redisstore.CallPath, rdb redis.UniversalClient) {
		prefix := fmt.Sprintf("confg%d", time.Now().UnixNano())
		t.Cleanup(func() { _ = redisconformance.Clean(context.Background(), rdb, prefix) })
		conformance.Run(t, redisconformance.WithoutFastPaths(redisconformance.NewStoreOn(prefix, path, rdb)), conformance.Sequences(miniredisSequences/3))
	}
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		run(t, redisstore.PathScripts, redistest.Client(t, redistest.Mini(t).Options))
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		run(t, redisstore.PathFunctions, redistest.Client(t, redistest.Shared(t).Options))
	})
}

// TestConformanceCluster holds redisstore.Store on the Redis Cluster whose seed
// addresses WEIR_REDIS_CLUSTER lists (comma-separated) to the model.
func TestConformanceCluster(t *testing.T) {
	t.Parallel()
	confRunPaths(t, sequencesOf(t, clusterSequences), redistest.Cluster(t))
}

// TestConformanceSmallBudget holds redisstore.Store to the model with a step
// budget of 2 (redisstore.Store.SetStepBudget): every cascade past two dependents
// stops, is drained over more calls, and must still come out as the
// model's, on miniredis and, with WEIR_REDIS_URL, on redis-server.
func TestConformanceSmallBudget(t *testing.T) {
	t.Parallel()
	budgetRun := func(t *testing.T, path redisstore.CallPath, rdb redis.UniversalClient) {
		prefix := fmt.Sprintf("confb%d", time.Now().UnixNano())
		t.Cleanup(func() { _ = redisconformance.Clean(context.Background(), rdb, prefix) })
		conformance.Run(t, redisconformance.NewStoreBudget(prefix, path, 2, rdb), conformance.Sequences(miniredisSequences/3))
	}
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		budgetRun(t, redisstore.PathScripts, redistest.Client(t, redistest.Mini(t).Options))
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		budgetRun(t, redisstore.PathAuto, redistest.Client(t, redistest.Shared(t).Options))
	})
}

// partitionSequences is the default number of random sequences of
// TestConformancePartitions per store; CI runs it as a step of its own
// with WEIR_CONFORMANCE_SEQUENCES (see .ci/run).
const partitionSequences = 100

// TestConformancePartitions holds redisstore.Store on namespaces of 8
// partitions (spec/partitions.md) to the model of 8 partitions: on
// miniredis, on the redis-server of WEIR_REDIS_URL and on the Redis
// Cluster of WEIR_REDIS_CLUSTER, where the partitions' keys lie on every
// master.
func TestConformancePartitions(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, rdb redis.UniversalClient) {
		prefix := fmt.Sprintf("confp%d", time.Now().UnixNano())
		t.Cleanup(func() { _ = redisconformance.Clean(context.Background(), rdb, prefix) })
		conformance.Run(t, redisconformance.NewStore(prefix, rdb), conformance.Sequences(partitionSequences), conformance.Partitions(8))
	}
	t.Run("miniredis", func(t *testing.T) {
		t.Parallel()
		run(t, redistest.Client(t, redistest.Mini(t).Options))
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		run(t, redistest.Client(t, redistest.Shared(t).Options))
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		run(t, redistest.Cluster(t))
	})
}
