package conformance_test

import (
	"testing"
	"time"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// A store's own test holds it to the model: the golden scenarios, the
// random operation sequences and the concurrency checks, each store made
// fresh with the suite's configuration and clock. (A test, so not run
// here.)
func ExampleRun() {
	_ = func(t *testing.T) {
		conformance.Run(t, func(t conformance.TB, cfg engine.Config, clock func() time.Time) engine.Store {
			return memstore.New(memstore.WithConfig(cfg), memstore.WithClock(clock))
		}, conformance.Sequences(200))
	}
}
