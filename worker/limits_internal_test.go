package worker

import (
	"testing"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// New takes Config.Limits when given, else the store's when it reports
// them, else the defaults.
func TestNewChoosesLimits(t *testing.T) {
	storeLim := weir.DefaultLimits()
	storeLim.MaxBatch = 7
	s := memstore.New(memstore.WithConfig(engine.Config{Limits: storeLim}))
	if got := New(s, Config{}).cfg.Limits; got != storeLim {
		t.Errorf("no Limits, a reporting store: %+v; want the store's %+v", got, storeLim)
	}
	mine := weir.DefaultLimits()
	mine.MaxBatch = 3
	if got := New(s, Config{Limits: mine}).cfg.Limits; got != mine {
		t.Errorf("Limits given: %+v; want them, %+v", got, mine)
	}
	silent := struct{ engine.Store }{s} // hides Config
	if got := New(silent, Config{}).cfg.Limits; got != weir.DefaultLimits() {
		t.Errorf("no Limits, a store that does not report: %+v; want the defaults", got)
	}
}
