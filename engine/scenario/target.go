package scenario

import (
	"context"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
)

// Target is what a scenario runs against: a Store, and SetNow, which sets
// the clock the Store reads (redisstore.Options.Clock, memstore.WithClock)
// to the scenario's time; the runner calls it before each call to the
// Store. NewModelTarget is the reference.
//
// The runner uses more of the Store when it has it: schedules
// (engine.Scheduler), signals (engine.Signaller), queue contents
// (QueueInspector), a claim's next due time (DueClaimer). A step that needs
// what the Store lacks, or whose call answers an error matching
// errors.ErrUnsupported, is skipped and listed in Result.Skipped.
//
// Time never goes backwards within a scenario. Errors are compared by their
// result code (weir.Error.Code; an *weir.ValidationError is INVALID, or
// TOOLARGE when it says so), so a store may wrap them.
type Target struct {
	Store  engine.Store
	SetNow func(time.Time)
}

// QueueInspector is a Store that lists a queue's job IDs in claim order,
// due order and deadline order (engine.Namespace.QueueContents), which
// "expect queue" steps compare.
type QueueInspector interface {
	QueueContents(ctx context.Context, queue string) (engine.QueueContents, error)
}

// DueClaimer is a Store that tells, with a claim that took nothing, the
// time a blocking claim would sleep until at most (zero: none), which
// "due" steps compare. A scenario's claim never blocks.
type DueClaimer interface {
	ClaimDue(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, time.Time, error)
}

// NewModelTarget returns the reference target: the model (an
// engine.Namespace of cfg, a Scenario's Config) as a memstore.Store whose
// clock is SetNow's. It has every capability the runner uses.
func NewModelTarget(cfg engine.Config) Target {
	var now time.Time
	s := memstore.New(memstore.WithConfig(cfg), memstore.WithClock(func() time.Time { return now }))
	return Target{Store: s, SetNow: func(t time.Time) { now = t }}
}

var (
	_ QueueInspector   = (*memstore.Store)(nil)
	_ DueClaimer       = (*memstore.Store)(nil)
	_ engine.Scheduler = (*memstore.Store)(nil)
	_ engine.Signaller = (*memstore.Store)(nil)
)

// store sets the target's clock to the time of step st and returns its
// Store.
func (r *runner) store(st *Step) engine.Store {
	r.t.SetNow(st.Now)
	return r.t.Store
}
