package worker

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff spaces the retries of a failing store call: 50ms doubling to 5s,
// with jitter.
type backoff struct{ d time.Duration }

func newBackoff() *backoff { return &backoff{} }

func (b *backoff) reset() { b.d = 0 }

// sleep waits for the next retry; false when ctx ended first.
func (b *backoff) sleep(ctx context.Context) bool {
	b.d = min(max(2*b.d, 50*time.Millisecond), 5*time.Second)
	t := time.NewTimer(b.d/2 + rand.N(b.d/2+1))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
