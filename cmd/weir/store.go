package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/command"
	"github.com/weirflow/weir/redisstore"
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

// redisURL returns the URL of the flag, else of WEIR_REDIS_URL.
func (g *globalFlags) url() string {
	if g.redisURL != "" {
		return g.redisURL
	}
	return os.Getenv("WEIR_REDIS_URL")
}

// open connects to the Redis of --redis / WEIR_REDIS_URL; with none and
// embedded set, it starts an embedded miniredis in this process.
func (g *globalFlags) open(ctx context.Context, embedded bool) (*conn, error) {
	if g.namespace != "" && !engine.ValidName(g.namespace) {
		return nil, command.Usage(fmt.Errorf("--namespace %q must match ^[A-Za-z0-9_.-]{1,64}$", g.namespace))
	}
	u := g.url()
	if u == "" {
		if !embedded {
			return nil, command.Usage(fmt.Errorf("no Redis: give --redis URL or set WEIR_REDIS_URL"))
		}
		if g.durable.Replicas != 0 {
			return nil, command.Usage(fmt.Errorf("--durable-replicas %d: the embedded server has no replicas; give --redis URL", g.durable.Replicas))
		}
		return g.openEmbedded()
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		return nil, command.Usage(fmt.Errorf("redis URL %q: %w", u, err))
	}
	rdb := redis.NewClient(opt)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, command.Fail(fmt.Errorf("connect to %s: %w", opt.Addr, err))
	}
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: g.namespace, Durable: g.durable})
	if err != nil {
		rdb.Close()
		return nil, command.Usage(err)
	}
	return &conn{store: s, closer: func() { rdb.Close() }, ping: pinger(rdb)}, nil
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
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: g.namespace})
	if err != nil {
		rdb.Close()
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
		rdb.Close()
		m.Close()
	}}, nil
}

// pinger returns a function that pings rdb.
func pinger(rdb *redis.Client) func(context.Context) error {
	return func(ctx context.Context) error { return rdb.Ping(ctx).Err() }
}

func (c *conn) Close() { c.closer() }
