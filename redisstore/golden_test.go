package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/scenario"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
	"github.com/weirflow/weir/spec"
)

// storeTarget runs scenarios against a Store whose test clock the scenario
// sets before each call (scenario.StoreTarget), reading the queues' sorted
// sets themselves rather than through the store's QueueContents.
type storeTarget struct {
	scenario.StoreTarget
	s *Store
}

// QueueContents reads the queue's sorted sets (their order is the claim,
// due and deadline order), of every partition in partition order.
func (t *storeTarget) QueueContents(ctx context.Context, now time.Time, q string) (engine.QueueContents, error) {
	t.SetClock(now)
	ps, err := t.s.layout(ctx)
	if err != nil {
		return engine.QueueContents{}, err
	}
	var out [3][]string
	for _, p := range ps {
		for i, kind := range []string{"r", "d", "a"} {
			v, err := p.rdb.ZRange(ctx, p.keys.queue(q, kind), 0, -1).Result()
			if err != nil {
				return engine.QueueContents{}, err
			}
			if kind == "r" {
				// the keyed ready jobs follow the unkeyed ones
				k, err := p.rdb.ZRange(ctx, p.keys.queue(q, "kr"), 0, -1).Result()
				if err != nil {
					return engine.QueueContents{}, err
				}
				v = append(v, k...)
			}
			out[i] = append(out[i], v...)
		}
	}
	return engine.QueueContents{Ready: out[0], Delayed: out[1], Running: out[2]}, nil
}

// ClaimDue runs one claim that, when it takes nothing, reports its next
// due time as a blocking Claim reads it (claimCall with a wait).
func (t *storeTarget) ClaimDue(ctx context.Context, now time.Time, p engine.ClaimParams) ([]engine.Claimed, time.Time, error) {
	t.SetClock(now)
	out, due, _, stopped, err := t.s.claimCall(ctx, p, time.Second)
	if err != nil || len(out) > 0 || due < 0 {
		return out, time.Time{}, err
	}
	if stopped {
		return nil, time.Time{}, errors.New("due: the claim stopped on its budget")
	}
	return nil, now.Add(due), nil
}

// TestGoldenScenarios replays spec/testdata against the store.
func TestGoldenScenarios(t *testing.T) {
	all, err := scenario.ParseFS(spec.Scenarios(), "*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Skip("no scenario files")
	}
	rdb := diffClient(t)
	for _, sc := range all {
		t.Run(sc.Name, func(t *testing.T) {
			ns := redistest.Namespace(t, rdb, "golden")
			clk := testclock.New()
			s, err := New(rdb, Options{Namespace: ns, Config: sc.Config, Clock: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			target := &storeTarget{StoreTarget: scenario.StoreTarget{Store: s, SetClock: clk.Set}, s: s}
			if _, err := scenario.Run(bg, sc, target); err != nil {
				t.Fatal(err)
			}
		})
	}
}
