// Package rediskeys counts and deletes the keys that match a pattern on a
// Redis server, on every primary of a Redis Cluster: how the conformance
// suite and the tests remove the namespaces they made.
package rediskeys

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Namespace is the pattern of every key of a redisstore.Store namespace.
func Namespace(ns string) string { return "weir:{" + ns + ":*" }

// Delete deletes the keys matching pattern on every primary, at most 1000
// a DEL. Where the keys share one hash slot (oneSlot: one namespace's
// keys do), a DEL takes many even on a cluster; otherwise a cluster gets
// one DEL a key.
func Delete(ctx context.Context, rdb redis.UniversalClient, pattern string, oneSlot bool) error {
	return ForEachNode(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		var ks []string
		for iter.Next(ctx) {
			ks = append(ks, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return err
		}
		for len(ks) > 0 {
			n := min(len(ks), 1000)
			if _, ok := rdb.(*redis.ClusterClient); ok && !oneSlot {
				n = 1
			}
			if err := c.Del(ctx, ks[:n]...).Err(); err != nil {
				return err
			}
			ks = ks[n:]
		}
		return nil
	})
}

// Count returns how many keys match pattern, over every primary.
func Count(ctx context.Context, rdb redis.UniversalClient, pattern string) (int, error) {
	var n atomic.Int64
	err := ForEachNode(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			n.Add(1)
		}
		return iter.Err()
	})
	return int(n.Load()), err
}

// ForEachNode runs f on every primary of a cluster client (concurrently,
// as ForEachMaster does), or on the one server of a plain client. Other
// clients are left alone.
func ForEachNode(ctx context.Context, rdb redis.UniversalClient, f func(context.Context, *redis.Client) error) error {
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, f)
	case *redis.Client:
		return f(ctx, c)
	}
	return nil
}
