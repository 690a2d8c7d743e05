package scenario_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/engine/scenario"
	"github.com/weirflow/weir/spec"
)

// TestStoreTarget replays every spec/testdata scenario against memstore
// through StoreTarget: each call runs at the scenario's time, so the
// store's replies are the model's. memstore lists no queue contents, so
// exactly the "expect queue" steps are skipped.
func TestStoreTarget(t *testing.T) {
	all, err := scenario.ParseFS(spec.Scenarios(), "*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no scenario files")
	}
	skipped := 0
	for _, sc := range all {
		t.Run(sc.Name, func(t *testing.T) {
			var ms atomic.Int64
			s := memstore.New(memstore.WithConfig(sc.Config), memstore.WithClock(func() time.Time { return time.UnixMilli(ms.Load()) }))
			res, err := scenario.Run(context.Background(), sc, &scenario.StoreTarget{Store: s, SetClock: func(now time.Time) { ms.Store(now.UnixMilli()) }})
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != len(sc.Steps) {
				t.Fatalf("ran %d of %d steps", res.Steps, len(sc.Steps))
			}
			skipped += len(res.Skipped)
		})
	}
	if skipped == 0 {
		t.Error("no step skipped, yet memstore lists no queue contents")
	}
}

// errContents is what contentsStore's QueueContents answers.
var errContents = errors.New("queue contents asked")

// contentsStore is a store with a QueueContents method of its own.
type contentsStore struct{ engine.Store }

func (contentsStore) QueueContents(context.Context, string) (engine.QueueContents, error) {
	return engine.QueueContents{}, errContents
}

// TestStoreTargetQueueContents: a store with a QueueContents method is
// asked for the contents of an "expect queue" step.
func TestStoreTargetQueueContents(t *testing.T) {
	all, err := scenario.ParseFS(spec.Scenarios(), "cancel_job.txt")
	if err != nil || len(all) != 1 {
		t.Fatalf("parse cancel_job.txt: %d, %v", len(all), err)
	}
	sc := all[0]
	var ms atomic.Int64
	s := memstore.New(memstore.WithConfig(sc.Config), memstore.WithClock(func() time.Time { return time.UnixMilli(ms.Load()) }))
	target := &scenario.StoreTarget{Store: contentsStore{s}, SetClock: func(now time.Time) { ms.Store(now.UnixMilli()) }}
	_, err = scenario.Run(context.Background(), sc, target)
	if err == nil || !strings.Contains(err.Error(), errContents.Error()) {
		t.Fatalf("run: %v, want the store's QueueContents error in it", err)
	}
}
