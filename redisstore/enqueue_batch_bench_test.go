package redisstore

import (
	"strconv"
	"testing"

	"github.com/weirflow/weir/engine"
)

// BenchmarkEnqueueBatch: one op is one job enqueued by EnqueueBatch in
// batches of k (one pipeline each), against BenchmarkEnqueue's one call
// per job.
func BenchmarkEnqueueBatch(b *testing.B) {
	for _, k := range []int{10, 100} {
		b.Run("batch="+strconv.Itoa(k), func(b *testing.B) {
			eachBenchEnv(b, func(b *testing.B, e *benchEnv) {
				e.counters(b)
				b.ReportAllocs()
				ps := make([]engine.EnqueueParams, k)
				i := 0
				for b.Loop() {
					if i%k == 0 {
						for j := range ps {
							ps[j] = engine.EnqueueParams{Job: engine.JobSpec{ID: "e" + strconv.Itoa(i+j), Queue: "q"}}
						}
					}
					i++
					if i%k != 0 {
						continue
					}
					res, err := e.store.EnqueueBatch(bg, ps)
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range res {
						if r.Err != nil || !r.Created {
							b.Fatalf("%+v", r)
						}
					}
				}
				e.report(b, i, "op")
			})
		})
	}
}
