package lua

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/engine"
)

var confSeq atomic.Int64

// Default numbers of random sequences, about a minute each under -race on
// a 2-core machine (measured sequences/s without and with -race: miniredis
// 2.5 and 0.5, redis-server 7 and 3, a 3-master cluster 5.5 and 3.4);
// WEIR_CONFORMANCE_SEQUENCES raises them. 100 is the smallest count (one
// rapid.Check); on miniredis it takes about 3.5 minutes under -race.
const (
	miniredisSequences = 100
	redisSequences     = 200
	clusterSequences   = 200
)

// confStore is a Store on its own namespace that shows its queues' sorted
// sets (conformance.QueueInspector) and deletes its keys on Close.
type confStore struct{ *Store }

func (s confStore) QueueContents(ctx context.Context, q string) (engine.QueueContents, error) {
	var out [3][]string
	for i, kind := range []string{"r", "d", "a"} {
		v, err := s.rdb.ZRange(ctx, s.keys.queue(q, kind), 0, -1).Result()
		if err != nil {
			return engine.QueueContents{}, err
		}
		if len(v) > 0 {
			out[i] = v
		}
	}
	return engine.QueueContents{Ready: out[0], Delayed: out[1], Running: out[2]}, nil
}

// Close removes the namespace's keys (all in one hash slot, so on one
// node of a cluster).
func (s confStore) Close() error {
	ctx := context.Background()
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, s.keys.prefix+"*", 1000).Iterator()
		var ks []string
		for iter.Next(ctx) {
			ks = append(ks, iter.Val())
		}
		if len(ks) > 0 {
			return c.Del(ctx, ks...).Err()
		}
		return iter.Err()
	}
	switch c := s.rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, del)
	case *redis.Client:
		return del(ctx, c)
	}
	return nil
}

func confRun(t *testing.T, rdb redis.UniversalClient, sequences int) {
	conformance.Run(t, func(t *testing.T, cfg engine.Config, clock func() time.Time) engine.Store {
		ns := fmt.Sprintf("conf%d-%d", time.Now().UnixNano(), confSeq.Add(1))
		s, err := New(rdb, Options{Namespace: ns, Config: cfg, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return confStore{s}
	}, conformance.Sequences(sequences))
}

// TestConformanceMiniredis holds lua.Store on miniredis to the model.
func TestConformanceMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	confRun(t, rdb, miniredisSequences)
}

// TestConformanceRedis holds lua.Store on the redis-server of
// WEIR_REDIS_URL to the model.
func TestConformanceRedis(t *testing.T) {
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
	confRun(t, rdb, redisSequences)
}

// TestConformanceCluster holds lua.Store on the Redis Cluster whose seed
// addresses WEIR_REDIS_CLUSTER lists (comma-separated) to the model.
func TestConformanceCluster(t *testing.T) {
	addrs := os.Getenv("WEIR_REDIS_CLUSTER")
	if addrs == "" {
		t.Skip("WEIR_REDIS_CLUSTER is not set")
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ",")})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	confRun(t, rdb, clusterSequences)
}
