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

// errContents is what contentsStore's QueueContents answers.
var errContents = errors.New("queue contents asked")

// contentsStore is a store with a QueueContents method of its own.
type contentsStore struct{ engine.Store }

func (contentsStore) QueueContents(context.Context, string) (engine.QueueContents, error) {
	return engine.QueueContents{}, errContents
}

// TestTargetQueueContents: a store with a QueueContents method of its own
// is asked for the contents of an "expect queue" step, at the step's time.
func TestTargetQueueContents(t *testing.T) {
	all, err := scenario.ParseFS(spec.Scenarios(), "cancel_job.txt")
	if err != nil || len(all) != 1 {
		t.Fatalf("parse cancel_job.txt: %d, %v", len(all), err)
	}
	sc := all[0]
	var ms atomic.Int64
	s := memstore.New(memstore.WithConfig(sc.Config), memstore.WithClock(func() time.Time { return time.UnixMilli(ms.Load()) }))
	target := scenario.Target{Store: contentsStore{s}, SetNow: func(now time.Time) { ms.Store(now.UnixMilli()) }}
	_, err = scenario.Run(context.Background(), sc, target)
	if err == nil || !strings.Contains(err.Error(), errContents.Error()) {
		t.Fatalf("run: %v, want the store's QueueContents error in it", err)
	}
}
