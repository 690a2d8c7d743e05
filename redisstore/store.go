package redisstore

import (
	"fmt"
	"github.com/weirflow/weir"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

var _ engine.Store = (*Store)(nil)

// Options configures a Store.
type Options struct {
	// Namespace isolates one engine instance inside a Redis; it must be a
	// name (engine.ValidName: ^[A-Za-z0-9_.-]{1,64}$, not . or ..). Empty
	// means "default".
	Namespace string
	// Config gives the limits, the retention and the partitions. A Config
	// whose fields other than Partitions are zero means engine.DefaultConfig()
	// with those partitions; zero Limits alone mean weir.DefaultLimits().
	// Every store of a namespace must use the same Config.
	//
	// Config.Partitions is the namespace's number of partitions
	// (spec/partitions.md), at most engine.MaxPartitions, kept in Redis when
	// a namespace of several is first written: 0 takes the namespace's count
	// at the first call (1 for a namespace not written yet); any other count
	// that differs from the namespace's is ErrInvalid at the first call.
	// It is the one partitions setting, as for memstore.
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
	// AllowUnsafeServer runs the store on a server that weir refuses
	// (ErrUnsafeServer, docs/compatibility.md: KeyDB, Redis before 6.2). Without it the
	// store asks the server what it is (one INFO) at its first call and
	// refuses such a server with every call, writing nothing. With it, the
	// defects docs/compatibility.md names are the caller's risk.
	AllowUnsafeServer bool
}

// Store is an engine.Store on Redis. It is safe for concurrent use; it
// holds no connection of its own beyond the client's, and starts no
// goroutine but those of a blocking claim over several partitions, which
// end before it returns.
//
// A Store runs the P partitions of its namespace (spec/partitions.md):
// each is a part, the one-partition engine on its own keys, and Store
// routes each call to the partition of its ID, or to every partition.
type Store struct {
	// part is partition 0 of the one-partition layout: the store's only
	// partition when the namespace has one (its hot path calls it
	// directly), and what tests of one partition look into.
	*part
	client redis.UniversalClient
	ns     string
	opts   Options
	// want is Config.Partitions as asked: 0 takes the namespace's.
	want int
	// parts is set by the first call that reaches Redis (layout): the
	// namespace's partitions, checked against what is kept in Redis.
	parts  atomic.Pointer[[]*part]
	initMu sync.Mutex
	// claims counts Claim calls (claim rotation, spec/partitions.md).
	claims atomic.Uint64
}

// part is one partition of a namespace: the whole one-partition engine.
type part struct {
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

// New returns a Store over client for opts.Namespace. It does no I/O: the
// namespace's partition count is read (and, for a new namespace of
// several partitions, written) at the store's first call.
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
		n := cfg.Partitions
		cfg = engine.DefaultConfig()
		cfg.Partitions = n
	}
	if err := cfg.ValidatePartitions(); err != nil {
		return nil, err
	}
	if cfg.Limits == (weir.Limits{}) {
		cfg.Limits = weir.DefaultLimits()
	}
	if cfg.Retention < 0 {
		return nil, fmt.Errorf("%w: negative retention", weir.ErrInvalid)
	}
	if opts.Path < PathAuto || opts.Path > PathScripts {
		return nil, fmt.Errorf("%w: unknown call path %d", weir.ErrInvalid, opts.Path)
	}
	if err := opts.Durable.validate(client); err != nil {
		return nil, err
	}
	st := &Store{client: client, ns: ns, opts: opts, want: cfg.Partitions}
	st.part = newPart(client, k, cfg, opts)
	return st, nil
}

// newPart returns the partition whose keys are k.
func newPart(client redis.UniversalClient, k keys, cfg engine.Config, opts Options) *part {
	p := &part{rdb: client, keys: k, cfg: cfg, clock: opts.Clock, prefixArg: k.prefix, durable: opts.Durable}
	p.path.Store(int32(opts.Path))
	p.fixedPath = opts.Path != PathAuto
	p.limitArgs = []any{cfg.Retention.Milliseconds(), cfg.Limits.MaxBackoff.Milliseconds()}
	return p
}

// Config returns the store's configuration. Its Partitions is the
// namespace's count once the store made its first call; before, the count
// it was opened with.
func (s *Store) Config() engine.Config {
	c := s.part.cfg
	if ps := s.parts.Load(); ps != nil && len(*ps) > 1 {
		c.Partitions = len(*ps)
	}
	return c
}
