package redisstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// BenchmarkServerCPUSize is BenchmarkServerCPU's fan-in task (n-1 tasks
// joined by one) with 10, 1,000 and 10,000 tasks per workflow, and its
// plain job with none and with 1,000,000 finished jobs retained (written
// straight in their stored shape, each with a TTL), on the function
// library: a unit should cost the same whatever the size (the performance
// issue's "flat in size").
func BenchmarkServerCPUSize(b *testing.B) {
	if !realRedis() && callgrindFromEnv() == nil {
		b.Skip("set WEIR_REDIS_URL to measure on a private redis-server (or WEIR_CALLGRIND)")
	}
	for _, n := range []int{10, 1000, 10000} {
		b.Run("fanin-task/tasks="+strconv.Itoa(n), func(b *testing.B) {
			rdb, s, cg := cpuStore(b, PathFunctions)
			per := b.N/cpuClients + 1
			queues := make([]string, cpuClients)
			maxes := make([]int, cpuClients)
			for c := range cpuClients {
				id := "f" + strconv.Itoa(c)
				for k := 0; k*n < per; k++ {
					p := cpuPlan(id, n, true)
					p.ID = id + "-" + strconv.Itoa(k)
					if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
						b.Fatal(err)
					}
				}
				queues[c], maxes[c] = "q"+id, 10
			}
			measureUnits(b, rdb, s, cg, queues, maxes, per, false)
		})
	}
	for _, retained := range []int{0, 1_000_000} {
		b.Run("plain-job/retained="+strconv.Itoa(retained), func(b *testing.B) {
			rdb, s, cg := cpuStore(b, PathFunctions)
			now := strconv.FormatInt(time.Now().UnixMilli(), 10)
			for i := 0; i < retained; i += 10_000 {
				pipe := rdb.Pipeline()
				for k := i; k < min(i+10_000, retained); k++ {
					key := s.keys.job("done-" + strconv.Itoa(k))
					pipe.HSet(bg, key, "spec", "old|0|1|1000|0", "h", "0123456789abcdef", "c", now, "s", "completed",
						"a", "1", "tk", "", "dl", now, "en", now, "ls", "1-0123456789abcdef")
					pipe.PExpire(bg, key, time.Hour)
				}
				if _, err := pipe.Exec(bg); err != nil {
					b.Fatal(err)
				}
			}
			per := b.N/cpuClients + 1
			queues := make([]string, cpuClients)
			maxes := make([]int, cpuClients)
			for c := range cpuClients {
				queues[c], maxes[c] = "p"+strconv.Itoa(c), 50
			}
			measureUnits(b, rdb, s, cg, queues, maxes, per, true)
		})
	}
}
