package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/internal/redisflag"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// clockTick is how often the embedded server's key TTLs are advanced by the
// wall-clock time that passed.
const clockTick = 250 * time.Millisecond

// conn is an open store and what closes it.
type conn struct {
	store  *redisstore.Store
	closer func()
	// ping checks that the server answers (for GET /healthz).
	ping func(context.Context) error
	// url is the Redis URL of the embedded server; empty for a shared Redis.
	url string
}

// embeddedWorker adjusts the configuration of a worker of this process:
// on the embedded server, one finish call in flight (worker.Config's
// FinishCalls), whose fewer, larger calls cost miniredis less (every call
// makes a new Lua state; docs/benchmarks.md, "The embedded default").
func (cn *conn) embeddedWorker(cfg *worker.Config) {
	if cn.url != "" {
		cfg.FinishCalls = 1
	}
}

// target returns the Redis of the command: the URL of --redis or the
// seed addresses of --cluster, else of WEIR_REDIS_URL, else of
// WEIR_REDIS_CLUSTER (redisflag.Resolve); both flags are a usage error.
func (g *globalFlags) target() (url, cluster string, err error) {
	url, cluster, err = redisflag.Resolve(g.redisURL, g.cluster)
	if err != nil {
		return "", "", command.Usage(err)
	}
	return url, cluster, nil
}

// storeConfig returns the engine.Config of the stores the command opens:
// zero but for Partitions, from --partitions when flagSet, else
// WEIR_PARTITIONS.
func (g *globalFlags) storeConfig(flagSet bool) (engine.Config, error) {
	n := g.partitions
	name := "--partitions"
	if !flagSet && os.Getenv("WEIR_PARTITIONS") != "" {
		v := os.Getenv("WEIR_PARTITIONS")
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			return engine.Config{}, command.Usage(fmt.Errorf("WEIR_PARTITIONS %q: want a number in [0, %d]", v, engine.MaxPartitions))
		}
		name = "WEIR_PARTITIONS"
	}
	if n < 0 || n > engine.MaxPartitions {
		return engine.Config{}, command.Usage(fmt.Errorf("%s %d: want a number in [0, %d] (0: the namespace's own)", name, n, engine.MaxPartitions))
	}
	return engine.Config{Partitions: n}, nil
}

// check validates the global flags of a command (PersistentPreRunE): the
// namespace, --redis with --cluster, and the partitions (partitionsSet:
// --partitions was given).
func (g *globalFlags) check(partitionsSet bool) error {
	if g.namespace != "" && !engine.ValidName(g.namespace) {
		return command.Usage(fmt.Errorf("--namespace %q must "+engine.NameRule, g.namespace))
	}
	if g.redisURL != "" && g.cluster != "" {
		return command.Usage(redisflag.ErrBoth)
	}
	cfg, err := g.storeConfig(partitionsSet)
	if err != nil {
		return err
	}
	g.cfg = cfg
	return nil
}

// open connects to the Redis of --redis / --cluster / WEIR_REDIS_URL /
// WEIR_REDIS_CLUSTER (target) and refuses a server redisstore refuses
// (KeyDB; WEIR_ALLOW_UNSAFE_SERVER=1 runs on it); with none and embedded
// set, it starts an embedded miniredis in this process.
func (g *globalFlags) open(ctx context.Context, embedded bool) (*conn, error) {
	if g.namespace != "" && !engine.ValidName(g.namespace) {
		return nil, command.Usage(fmt.Errorf("--namespace %q must "+engine.NameRule, g.namespace))
	}
	u, cluster, err := g.target()
	if err != nil {
		return nil, err
	}
	var (
		rdb    redis.UniversalClient
		server string // the address(es), never a password
	)
	switch {
	case cluster != "":
		opt, err := redisflag.ClusterOptions(cluster)
		if err != nil {
			return nil, command.Usage(fmt.Errorf("--cluster: %w", err))
		}
		rdb, server = redis.NewClusterClient(opt), "cluster "+strings.Join(opt.Addrs, ",")
	case u != "":
		opt, err := redis.ParseURL(u)
		if err != nil {
			return nil, command.Usage(fmt.Errorf("redis URL %q: %w", u, err))
		}
		rdb, server = redis.NewClient(opt), opt.Addr
	case !embedded:
		return nil, command.Usage(fmt.Errorf("no Redis: give --redis URL or set WEIR_REDIS_URL (or --cluster / WEIR_REDIS_CLUSTER for a Redis Cluster)"))
	default:
		if g.durable.Replicas != 0 {
			return nil, command.Usage(fmt.Errorf("--durable-replicas %d: the embedded server has no replicas; give --redis URL", g.durable.Replicas))
		}
		return g.openEmbedded()
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, command.Fail(fmt.Errorf("connect to %s: %w", server, err))
	}
	allow, err := redisflag.AllowUnsafeServer()
	if err != nil {
		_ = rdb.Close()
		return nil, command.Usage(err)
	}
	if !allow {
		// refuse a server weir knows to break now, not at the first call
		// that needs the store (docs/compatibility.md)
		srv, err := redisstore.IdentifyServer(ctx, rdb)
		if err == nil {
			err = srv.Unsafe()
		}
		if err != nil {
			_ = rdb.Close()
			return nil, command.Fail(fmt.Errorf("server %s: %w", server, err))
		}
	}
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: g.namespace, Durable: g.durable, Config: g.cfg, AllowUnsafeServer: allow})
	if err != nil {
		_ = rdb.Close()
		return nil, command.Usage(err)
	}
	return &conn{store: s, closer: func() { _ = rdb.Close() }, ping: pinger(rdb)}, nil
}

// openEmbedded starts miniredis on a loopback port and a goroutine that
// advances its TTLs with the wall clock (miniredis does not expire keys by
// itself), so retention behaves as on Redis.
func (g *globalFlags) openEmbedded() (*conn, error) {
	return g.openEmbeddedAt("127.0.0.1:0")
}

// openEmbeddedAt is openEmbedded listening on addr ("127.0.0.1:0" picks a
// free port); the conn's url is the server's Redis URL.
func (g *globalFlags) openEmbeddedAt(addr string) (*conn, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr(addr); err != nil {
		return nil, command.Fail(fmt.Errorf("start the embedded server: %w", err))
	}
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: g.namespace, Config: g.cfg})
	if err != nil {
		_ = rdb.Close()
		m.Close()
		return nil, command.Usage(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(clockTick)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	}()
	return &conn{store: s, ping: pinger(rdb), url: "redis://" + m.Addr() + "/0", closer: func() {
		close(stop)
		wg.Wait()
		_ = rdb.Close()
		m.Close()
	}}, nil
}

// pinger returns a function that pings rdb.
func pinger(rdb redis.UniversalClient) func(context.Context) error {
	return func(ctx context.Context) error { return rdb.Ping(ctx).Err() }
}

func (c *conn) Close() { c.closer() }
