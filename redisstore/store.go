package redisstore

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

var _ engine.Store = (*Store)(nil)

// Options configures a Store.
type Options struct {
	// Namespace isolates one engine instance inside a Redis; it must match
	// ^[A-Za-z0-9_.-]{1,64}$. Empty means "default".
	Namespace string
	// Config gives the limits, the retention and the partitions. A Config
	// whose fields other than Partitions are zero means engine.DefaultConfig()
	// with those partitions; zero Limits alone mean engine.DefaultLimits().
	// Every store of a namespace must use the same Config.
	Config engine.Config
	// Clock, for tests only, replaces the server's clock: each call passes
	// Clock() to its script as "now" (see spec/scripts.md, "Test clock").
	// With it set, records get no Redis TTL; ended records are removed by
	// the scripts' expiry sweep instead.
	Clock func() time.Time
	// Path chooses how transitions run on the server: PathAuto (the zero
	// value) uses functions where the server has them, else scripts.
	Path CallPath
	// Durable, when its Replicas > 0, acknowledges a transition only once
	// that many replicas have it (Durable, ErrNotReplicated).
	Durable Durable
}

// Store is an engine.Store on Redis. It is safe for concurrent use; it
// holds no connection of its own beyond the client's, and starts no
// goroutine.
type Store struct {
	rdb   redis.UniversalClient
	keys  keys
	cfg   engine.Config
	clock func() time.Time
	// prefixArg (the one key of every call) and limitArgs (the ARGV after
	// "now") are boxed once so that a call does not box them again.
	prefixArg any
	limitArgs []any
	path      atomic.Int32 // a CallPath
	fixedPath bool         // Options.Path chose it: no fallback
	durable   Durable
	// drainCalls counts drain calls (drain.go), for tests
	drainCalls atomic.Int64
}

// New returns a Store over client for opts.Namespace (partition 0).
func New(client redis.UniversalClient, opts Options) (*Store, error) {
	ns := opts.Namespace
	if ns == "" {
		ns = "default"
	}
	k, err := newKeys(ns, 0)
	if err != nil {
		return nil, err
	}
	cfg := opts.Config
	if cfg == (engine.Config{Partitions: cfg.Partitions}) {
		cfg = engine.DefaultConfig()
		cfg.Partitions = opts.Config.Partitions
	}
	if err := cfg.ValidatePartitions(); err != nil {
		return nil, err
	}
	if cfg.PartitionCount() > 1 {
		return nil, fmt.Errorf("%w: partitions %d: this store runs one partition (spec/partitions.md is not built yet)", engine.ErrInvalid, cfg.Partitions)
	}
	if cfg.Limits == (engine.Limits{}) {
		cfg.Limits = engine.DefaultLimits()
	}
	if cfg.Retention < 0 {
		return nil, fmt.Errorf("%w: negative retention", engine.ErrInvalid)
	}
	if opts.Path < PathAuto || opts.Path > PathScripts {
		return nil, fmt.Errorf("%w: unknown call path %d", engine.ErrInvalid, opts.Path)
	}
	if err := opts.Durable.validate(client); err != nil {
		return nil, err
	}
	st := &Store{rdb: client, keys: k, cfg: cfg, clock: opts.Clock, prefixArg: k.prefix, durable: opts.Durable}
	st.path.Store(int32(opts.Path))
	st.fixedPath = opts.Path != PathAuto
	st.limitArgs = []any{cfg.Retention.Milliseconds(), cfg.Limits.MaxBackoff.Milliseconds()}
	return st, nil
}

// Config returns the store's configuration.
func (s *Store) Config() engine.Config { return s.cfg }
