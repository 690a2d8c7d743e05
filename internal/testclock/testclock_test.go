package testclock

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	c := New()
	if !c.Now().Equal(Epoch) {
		t.Fatalf("new clock at %v, want %v", c.Now(), Epoch)
	}
	c.Advance(1500 * time.Millisecond)
	if got := c.Now().Sub(Epoch); got != 1500*time.Millisecond {
		t.Fatalf("advanced by %v, want 1.5s", got)
	}
	at := time.Date(2031, 2, 3, 4, 5, 6, 7_000_000, time.UTC)
	c.Set(at)
	if !c.Now().Equal(at) {
		t.Fatalf("set to %v, reads %v", at, c.Now())
	}
}
