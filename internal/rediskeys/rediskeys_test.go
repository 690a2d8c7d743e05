package rediskeys_test

import (
	"context"
	"strconv"
	"testing"

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
			if err := rediskeys.Delete(ctx, rdb, rediskeys.Namespace(ns), true); err != nil {
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
