// Package rediskeys counts and deletes the keys that match a pattern on a
// Redis server, on every primary of a Redis Cluster: how the conformance
// suite and the tests remove the namespaces they made.
package rediskeys

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Namespace is the pattern of every key of a redisstore.Store namespace.
func Namespace(ns string) string { return "weir:{" + ns + ":*" }

// Delete deletes the keys matching pattern on every primary, at most 1000
// a DEL. On a cluster one DEL takes only keys of one hash slot: the keys a
// node holds are grouped by hash tag (the text between a key's first "{"
// and the "}" after it; the whole key without one), so that a namespace of
// several partitions, whose keys are in as many slots, is deleted whole,
// one partition's keys at a time, and keys without a tag go one a DEL.
func Delete(ctx context.Context, rdb redis.UniversalClient, pattern string) error {
	_, cluster := rdb.(*redis.ClusterClient)
	return ForEachNode(ctx, rdb, func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		groups := map[string][]string{}
		for iter.Next(ctx) {
			k := iter.Val()
			tag := ""
			if cluster {
				tag = HashTag(k)
			}
			groups[tag] = append(groups[tag], k)
		}
		if err := iter.Err(); err != nil {
			return err
		}
		for _, ks := range groups {
			for len(ks) > 0 {
				n := min(len(ks), 1000)
				if err := c.Del(ctx, ks[:n]...).Err(); err != nil {
					return err
				}
				ks = ks[n:]
			}
		}
		return nil
	})
}

// HashTag returns what Redis Cluster hashes of key k to find its slot: the
// text between its first "{" and the first "}" after it when that is not
// empty, else the whole key. Keys of one hash tag are in one slot.
func HashTag(k string) string {
	if i := strings.IndexByte(k, '{'); i >= 0 {
		if j := strings.IndexByte(k[i+1:], '}'); j > 0 {
			return k[i+1 : i+1+j]
		}
	}
	return k
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
