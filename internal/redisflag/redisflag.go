// Package redisflag is how weir's commands (weir, weir-conformance, the
// worker processes of weir bench) choose their Redis: a single server by
// URL (--redis, WEIR_REDIS_URL) or a Redis Cluster by seed addresses
// (--cluster, WEIR_REDIS_CLUSTER).
package redisflag

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The environment variables.
const (
	EnvURL     = "WEIR_REDIS_URL"
	EnvCluster = "WEIR_REDIS_CLUSTER"
	// EnvAllowUnsafe set to 1 runs the commands' stores on a server
	// redisstore refuses (redisstore.Options.AllowUnsafeServer: KeyDB).
	EnvAllowUnsafe = "WEIR_ALLOW_UNSAFE_SERVER"
)

// ErrBoth is the error of Resolve when both flags are given.
var ErrBoth = errors.New("--redis and --cluster are mutually exclusive: give one")

// Resolve returns the Redis a command uses: the URL of --redis (flagURL)
// or the cluster of --cluster (flagCluster), else WEIR_REDIS_URL, else
// WEIR_REDIS_CLUSTER. At most one of url and cluster is set; both are
// empty when nothing names a Redis. Both flags at once are ErrBoth. A flag
// beats either environment variable, and WEIR_REDIS_URL beats
// WEIR_REDIS_CLUSTER when both are set (test setups such as .ci/run
// export both: the single server stays the default).
func Resolve(flagURL, flagCluster string) (url, cluster string, err error) {
	switch {
	case flagURL != "" && flagCluster != "":
		return "", "", ErrBoth
	case flagURL != "":
		return flagURL, "", nil
	case flagCluster != "":
		return "", flagCluster, nil
	}
	if u := os.Getenv(EnvURL); u != "" {
		return u, "", nil
	}
	return "", os.Getenv(EnvCluster), nil
}

// ClusterOptions parses a cluster's seed addresses: a comma-separated list
// of host:port, or a cluster URL (redis:// or rediss://, more seeds in
// addr= parameters, as redis.ParseClusterURL reads it), which can also
// carry a user, a password and options.
func ClusterOptions(s string) (*redis.ClusterOptions, error) {
	if strings.Contains(s, "://") {
		opt, err := redis.ParseClusterURL(s)
		if err != nil {
			return nil, fmt.Errorf("cluster URL: %w", err)
		}
		return opt, nil
	}
	var addrs []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("cluster address %q: want host:port", a)
		}
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("cluster %q: want host:port,... (or a redis:// cluster URL)", s)
	}
	return &redis.ClusterOptions{Addrs: addrs}, nil
}

// AllowUnsafeServer reads WEIR_ALLOW_UNSAFE_SERVER: unset, empty or 0 is
// false, 1 is true, anything else an error that names the variable.
func AllowUnsafeServer() (bool, error) {
	switch v := os.Getenv(EnvAllowUnsafe); v {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("%s %q: want 1 (run on a server weir refuses, at your risk: docs/compatibility.md) or 0", EnvAllowUnsafe, v)
	}
}
