package redisstore

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/scenario"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
	"github.com/weirflow/weir/spec"
)

// goldenStore is the Store as a golden scenario runs it (scenario.Target):
// "expect queue" steps read the queues' sorted sets themselves rather
// than through the store's QueueContents, and "due" steps the next due
// time a blocking Claim reads. now is the store's clock.
type goldenStore struct {
	*Store
	now func() time.Time
}

// QueueContents reads the queue's sorted sets (their order is the claim,
// due and deadline order), of every partition in partition order.
func (s goldenStore) QueueContents(ctx context.Context, q string) (engine.QueueContents, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.QueueContents{}, err
	}
	var out [3][]string
	for _, p := range ps {
		for i, kind := range []string{"r", "d", "a"} {
			var v []string
			var err error
			if kind == "r" {
				v, err = readyContents(ctx, p.rdb, p.keys, q)
			} else {
				// below the lease set's sentinel (spec/keys.md, q:<queue>:a)
				v, err = p.rdb.ZRangeByScore(ctx, p.keys.queue(q, kind), &redis.ZRangeBy{Min: "-inf", Max: "(9007199254740991"}).Result()
			}
			if err != nil {
				return engine.QueueContents{}, err
			}
			out[i] = append(out[i], v...)
		}
	}
	return engine.QueueContents{Ready: out[0], Delayed: out[1], Running: out[2]}, nil
}

// readyContents reads queue q's ready jobs from its keys in claim order
// (spec/keys.md, q:<queue>:l): q:<q>:r below priority 0 (below 1000 · 2^40
// plus the push counter), the list without
// its stale elements (of an ID with a count k in q:<q>:lx, its first k),
// the rest of q:<q>:r, then the keyed ones.
func readyContents(ctx context.Context, rdb redis.UniversalClient, k keys, q string) ([]string, error) {
	push, err := rdb.HGet(ctx, k.queue(q, "s"), "push").Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	p0 := strconv.FormatInt(1000<<40+push, 10)
	lo, err := rdb.ZRangeByScore(ctx, k.queue(q, "r"), &redis.ZRangeBy{Min: "-inf", Max: "(" + p0}).Result()
	if err != nil {
		return nil, err
	}
	l, err := rdb.LRange(ctx, k.queue(q, "l"), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	stale, err := rdb.HGetAll(ctx, k.queue(q, "lx")).Result()
	if err != nil {
		return nil, err
	}
	left := map[string]int{}
	for id, n := range stale {
		left[id], _ = strconv.Atoi(n)
	}
	out := lo
	for _, id := range l {
		if left[id] > 0 {
			left[id]--
			continue
		}
		out = append(out, id)
	}
	hi, err := rdb.ZRangeByScore(ctx, k.queue(q, "r"), &redis.ZRangeBy{Min: p0, Max: "+inf"}).Result()
	if err != nil {
		return nil, err
	}
	kr, err := rdb.ZRange(ctx, k.queue(q, "kr"), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	return append(append(out, hi...), kr...), nil
}

// ClaimDue runs one claim that, when it takes nothing, reports its next
// due time as a blocking Claim reads it (claimCall with a wait).
func (s goldenStore) ClaimDue(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, time.Time, error) {
	out, due, _, stopped, err := s.claimCall(ctx, p, time.Second)
	if err != nil || len(out) > 0 || due < 0 {
		return out, time.Time{}, err
	}
	if stopped {
		return nil, time.Time{}, errors.New("due: the claim stopped on its budget")
	}
	return nil, s.now().Add(due), nil
}

// goldenScenarios parses the golden scenarios of spec/testdata.
func goldenScenarios(t *testing.T) []*scenario.Scenario {
	t.Helper()
	all, err := scenario.ParseFS(spec.Scenarios(), "*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Skip("no scenario files")
	}
	return all
}

// replayGolden replays sc against a new Store on rdb, in a namespace of
// its own (redistest.Namespace with prefix), after setup (when not nil)
// has run on the store, and returns the namespace.
func replayGolden(t *testing.T, rdb redis.UniversalClient, prefix string, sc *scenario.Scenario, setup func(*Store) error) (string, error) {
	t.Helper()
	ns := redistest.Namespace(t, rdb, prefix)
	clk := testclock.New()
	s, err := New(rdb, Options{Namespace: ns, Config: sc.Config, Clock: clk.Now})
	if err != nil {
		return ns, err
	}
	if setup != nil {
		if err := setup(s); err != nil {
			return ns, err
		}
	}
	_, err = scenario.Run(bg, sc, scenario.Target{Store: goldenStore{s, clk.Now}, SetNow: clk.Set})
	return ns, err
}

// TestGoldenScenarios replays spec/testdata against the store.
func TestGoldenScenarios(t *testing.T) {
	rdb := diffClient(t)
	for _, sc := range goldenScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			if _, err := replayGolden(t, rdb, "golden", sc, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}
