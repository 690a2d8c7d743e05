package worker

import (
	"testing"
	"time"

	"github.com/weirflow/weir"
)

// TestRetryAfterNeverUndercutsTheBackoff: the worker's delay before retry n
// is at least backoff·2^(n-1) (the documented delay), at most a quarter
// more, and never past MaxBackoff.
func TestRetryAfterNeverUndercutsTheBackoff(t *testing.T) {
	lim := weir.DefaultLimits()
	lim.MaxBackoff = 2 * time.Second
	r := &run{cfg: &Config{Limits: lim}}
	for _, c := range []struct {
		backoff time.Duration
		attempt int
		want    time.Duration
	}{
		{300 * time.Millisecond, 1, 300 * time.Millisecond},
		{300 * time.Millisecond, 2, 600 * time.Millisecond},
		{300 * time.Millisecond, 3, 1200 * time.Millisecond},
		{300 * time.Millisecond, 4, 2 * time.Second}, // capped
		{0, 1, weir.DefaultBackoff},
		{1 * time.Millisecond, 1, time.Millisecond},
	} {
		j := &weir.Job{Backoff: c.backoff, Attempt: c.attempt, MaxAttempts: 10}
		hi := min(c.want+c.want/4+time.Millisecond, lim.MaxBackoff)
		above := false
		for range 2000 {
			d := r.retryAfter(j)
			if d < c.want || d > hi {
				t.Fatalf("backoff %v attempt %d: delay %v outside [%v, %v]", c.backoff, c.attempt, d, c.want, hi)
			}
			if d%time.Millisecond != 0 {
				t.Fatalf("delay %v is not whole milliseconds", d)
			}
			above = above || d > c.want
		}
		if !above && c.want < lim.MaxBackoff && c.want >= 8*time.Millisecond {
			t.Errorf("backoff %v attempt %d: no jitter in 2,000 delays", c.backoff, c.attempt)
		}
	}
	if d := r.retryAfter(&weir.Job{Backoff: time.Second, Attempt: 3, MaxAttempts: 3}); d != 0 {
		t.Errorf("no attempt left: delay %v", d)
	}
}
