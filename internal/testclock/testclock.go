// Package testclock is the tests' clock for a store's test clock
// (redisstore.Options.Clock, memstore.WithClock): a count of milliseconds that
// moves only when told to, safe for concurrent use.
package testclock

import (
	"sync/atomic"
	"time"
)

// Epoch is where New starts a clock.
var Epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// Clock is a test clock.
type Clock struct{ ms atomic.Int64 }

// New returns a clock at Epoch.
func New() *Clock {
	c := &Clock{}
	c.Set(Epoch)
	return c
}

// Now is the clock's time.
func (c *Clock) Now() time.Time { return time.UnixMilli(c.ms.Load()) }

// Set moves the clock to t (whole milliseconds).
func (c *Clock) Set(t time.Time) { c.ms.Store(t.UnixMilli()) }

// Advance moves the clock by d (whole milliseconds).
func (c *Clock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }
