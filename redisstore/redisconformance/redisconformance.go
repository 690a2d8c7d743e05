// Package redisconformance runs the conformance suite on the Redis store:
// it wires redisstore.Store into package conformance, every store it makes
// in a namespace of its own, showing its queues
// (conformance.QueueInspector), reading a whole state in one script
// (conformance.Observer) and deleting its keys when the suite closes it.
// The redisstore package's tests and the command weir-conformance use it.
//
// Stability: unstable, like package conformance.
package redisconformance

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/rediskeys"
	"github.com/weirflow/weir/redisstore"
)

// NewStore returns a conformance.NewStore making redisstore.Stores on rdb (a
// plain, failover or cluster client), each in the namespace
// "<prefix>-<n>"; prefix must be a valid namespace of at most 40 bytes,
// unique to the run (Clean removes whatever the run left). With more
// clients (say, one per miniredis, whose Lua runs one script at a time),
// the stores go to them in turn.
func NewStore(prefix string, rdb redis.UniversalClient, more ...redis.UniversalClient) conformance.NewStore {
	return NewStoreOn(prefix, redisstore.PathAuto, rdb, more...)
}

// NewStoreOn is NewStore with the stores' call path (redisstore.Options.Path):
// the suite holds the function library and the scripts to the model alike.
func NewStoreOn(prefix string, path redisstore.CallPath, rdb redis.UniversalClient, more ...redis.UniversalClient) conformance.NewStore {
	return NewStoreBudget(prefix, path, 0, rdb, more...)
}

// NewStoreBudget is NewStoreOn with each store's step budget
// (redisstore.Store.SetStepBudget; 0: the default): a small one makes every
// cascade of more than that many dependents run over several calls.
func NewStoreBudget(prefix string, path redisstore.CallPath, budget int, rdb redis.UniversalClient, more ...redis.UniversalClient) conformance.NewStore {
	return NewStoreOptions(prefix, redisstore.Options{Path: path}, budget, rdb, more...)
}

// NewStoreOptions is NewStoreBudget with each store's options from base:
// its Path, Durable and AllowUnsafeServer (the namespace, Config and Clock
// are the suite's).
func NewStoreOptions(prefix string, base redisstore.Options, budget int, rdb redis.UniversalClient, more ...redis.UniversalClient) conformance.NewStore {
	var seq atomic.Int64
	all := append([]redis.UniversalClient{rdb}, more...)
	return func(t conformance.TB, cfg engine.Config, clock func() time.Time) engine.Store {
		n := seq.Add(1)
		rdb := all[int(n)%len(all)]
		ns := prefix + "-" + strconv.FormatInt(n, 10)
		opts := base
		opts.Namespace, opts.Config, opts.Clock = ns, cfg, clock
		s, err := redisstore.New(rdb, opts)
		if err != nil {
			t.Fatal(err)
		}
		if budget > 0 {
			if err := s.SetStepBudget(context.Background(), budget); err != nil {
				t.Fatal(err)
			}
		}
		return &Store{Store: s, rdb: rdb, ns: ns}
	}
}

// WithoutFastPaths returns newStore with the fast paths of every store it
// makes switched off (redisstore.Store.SetFastPaths): the suite then holds
// the general code of every transition to the model by itself.
func WithoutFastPaths(newStore conformance.NewStore) conformance.NewStore {
	return func(t conformance.TB, cfg engine.Config, clock func() time.Time) engine.Store {
		s := newStore(t, cfg, clock)
		if err := s.(*Store).SetFastPaths(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// Store is a redisstore.Store made by NewStore.
type Store struct {
	*redisstore.Store
	rdb redis.UniversalClient
	ns  string
}

var (
	_ conformance.QueueInspector = (*Store)(nil)
	_ conformance.Observer       = (*Store)(nil)
)

// Observe is redisstore.Store.Observe as a conformance.Observer.
func (s *Store) Observe(ctx context.Context, workflows, jobs, queues []string) (conformance.Observation, error) {
	o, err := s.Store.Observe(ctx, workflows, jobs, queues)
	return conformance.Observation(o), err
}

// Close deletes the keys of the store's namespace, every partition's
// (the partitions' keys are in as many slots).
func (s *Store) Close() error {
	return rediskeys.Delete(context.Background(), s.rdb, rediskeys.Namespace(s.ns))
}

// Clean deletes the keys of every namespace NewStore(rdb, prefix) made.
func Clean(ctx context.Context, rdb redis.UniversalClient, prefix string) error {
	return rediskeys.Delete(ctx, rdb, "weir:{"+prefix+"-*")
}

// Count returns how many keys the namespaces of NewStore(rdb, prefix)
// hold.
func Count(ctx context.Context, rdb redis.UniversalClient, prefix string) (int, error) {
	return rediskeys.Count(ctx, rdb, "weir:{"+prefix+"-*")
}
