package rediskeys_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/internal/rediskeys"
	"github.com/weirflow/weir/internal/redistest"
)

// TestDeleteAndCount: Delete removes the keys of a namespace, past one
// DEL's 1000, and no other key; Count counts what matches.
func TestDeleteAndCount(t *testing.T) {
	ctx := context.Background()
	for _, srv := range redistest.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			rdb := redistest.Client(t, srv.Options)
			ns, other := redistest.Namespace(t, rdb, "rk"), redistest.Namespace(t, rdb, "rk")
			pipe := rdb.Pipeline()
			for i := range 2500 {
				pipe.Set(ctx, "weir:{"+ns+":0}:k"+strconv.Itoa(i), "v", 0)
			}
			pipe.Set(ctx, "weir:{"+other+":0}:k", "v", 0)
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := rediskeys.Count(ctx, rdb, rediskeys.Namespace(ns)); err != nil || n != 2500 {
				t.Fatalf("count %d, %v; want 2500", n, err)
			}
			if err := rediskeys.Delete(ctx, rdb, rediskeys.Namespace(ns)); err != nil {
				t.Fatal(err)
			}
			if n, err := rediskeys.Count(ctx, rdb, rediskeys.Namespace(ns)); err != nil || n != 0 {
				t.Fatalf("count after delete %d, %v; want 0", n, err)
			}
			if n, err := rediskeys.Count(ctx, rdb, rediskeys.Namespace(other)); err != nil || n != 1 {
				t.Fatalf("the other namespace has %d keys, %v; want 1", n, err)
			}
		})
	}
}

// TestDeleteEveryPartition: the keys of a namespace of several partitions
// are in as many hash slots, several of them on one node of a cluster;
// Delete (and redistest.Clean, which the tests' namespaces go through)
// removes every partition's keys, on one server and on a Redis Cluster
// (WEIR_REDIS_CLUSTER), whose DEL takes the keys of one slot only.
func TestDeleteEveryPartition(t *testing.T) {
	ctx := context.Background()
	type target struct {
		name string
		rdb  redis.UniversalClient
	}
	var targets []target
	for _, srv := range redistest.Servers(t) {
		targets = append(targets, target{srv.Name, redistest.Client(t, srv.Options)})
	}
	if os.Getenv("WEIR_REDIS_CLUSTER") != "" {
		targets = append(targets, target{"cluster", redistest.Cluster(t)})
	}
	for _, x := range targets {
		t.Run(x.name, func(t *testing.T) {
			for _, del := range []string{"Delete", "redistest.Clean"} {
				ns := redistest.Namespace(t, x.rdb, "rkp")
				// 8 partitions' tags (3 masters hold 2 or more each), 1,500
				// keys in one of them (more than one DEL's 1,000)
				for p := range 8 {
					pipe := x.rdb.Pipeline()
					for i := range 1 + 1499*(p/7) {
						pipe.Set(ctx, "weir:{"+ns+":"+strconv.Itoa(p)+"}:k"+strconv.Itoa(i), "v", 0)
					}
					if _, err := pipe.Exec(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if n, err := rediskeys.Count(ctx, x.rdb, rediskeys.Namespace(ns)); err != nil || n != 1507 {
					t.Fatalf("count %d, %v; want 1507", n, err)
				}
				if del == "Delete" {
					if err := rediskeys.Delete(ctx, x.rdb, rediskeys.Namespace(ns)); err != nil {
						t.Fatal(err)
					}
				} else {
					redistest.Clean(ctx, x.rdb, ns)
				}
				if n, err := rediskeys.Count(ctx, x.rdb, rediskeys.Namespace(ns)); err != nil || n != 0 {
					t.Fatalf("%s left %d keys (%v); want 0", del, n, err)
				}
			}
		})
	}
}

// TestHashTag: the part of a key that Redis Cluster hashes.
func TestHashTag(t *testing.T) {
	for k, want := range map[string]string{
		"weir:{ns:0}:seq": "ns:0", "weir:{ns:1.3}:q:a:r": "ns:1.3", "plain": "plain",
		"a{}b{c}": "a{}b{c}", "a{b": "a{b", "{x}{y}": "x", "a}{b}": "b",
	} {
		if got := rediskeys.HashTag(k); got != want {
			t.Errorf("HashTag(%q) = %q, want %q", k, got, want)
		}
	}
}
