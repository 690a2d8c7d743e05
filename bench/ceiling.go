package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ceilingScript is the ceiling's script: three writes, nothing read.
var ceilingScript = redis.NewScript(`
redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[2], 'v', ARGV[1])
redis.call('SET', KEYS[3], ARGV[1])
return 1`)

// ceiling calls the ceiling script from clients goroutines on the
// measured client for d and returns the calls made and the seconds they
// took.
func ceiling(ctx context.Context, s *server, clients int, d time.Duration) (int64, float64, error) {
	if err := ceilingScript.Load(ctx, s.rdb).Err(); err != nil {
		return 0, 0, fmt.Errorf("ceiling: SCRIPT LOAD: %w", err)
	}
	p := s.prefix() + "ceiling:"
	keys := []string{p + "n", p + "h", p + "s"}
	var calls atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if err := ceilingScript.EvalSha(ctx, s.rdb, keys, i).Err(); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				calls.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return 0, 0, fmt.Errorf("ceiling: EVALSHA: %w", firstErr)
	}
	return calls.Load(), elapsed.Seconds(), nil
}
