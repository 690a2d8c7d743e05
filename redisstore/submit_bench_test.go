package redisstore

import (
	"strconv"
	"testing"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// BenchmarkServerCPUSubmit measures what a fan-in workflow's submit costs
// the redis-server, per call path: workflows of 10 roots joined by an 11th
// (BenchmarkServerCPU's fanin-task plan, the side-by-side benchmark's
// fan-in), submitted by cpuClients clients at once and not run. Metrics,
// per task submitted (11 a workflow): as BenchmarkServerCPU's.
func BenchmarkServerCPUSubmit(b *testing.B) {
	if !realRedis() && callgrindFromEnv() == nil {
		b.Skip("set WEIR_REDIS_URL to measure on a private redis-server (or WEIR_CALLGRIND)")
	}
	for _, path := range []CallPath{PathFunctions, PathScripts} {
		b.Run(path.String()+"/fanin-submit", func(b *testing.B) {
			rdb, s, cg := cpuStore(b, path)
			per := (b.N/cpuClients + 10) / 11 // workflows a client submits
			b.ResetTimer()
			measureClients(b, rdb, cg, cpuClients, "", func(c int) int {
				id := "f" + strconv.Itoa(c)
				for k := range per {
					p := cpuPlan(id, 11, true)
					p.ID = id + "-" + strconv.Itoa(k)
					if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
						b.Error(err)
						return 0
					}
				}
				return per * 11
			})
		})
	}
}

// BenchmarkSubmitEncode measures the Go side of a fan-in submit of 10+1
// tasks: validating, hashing and encoding the plan (planArgs), per
// workflow.
func BenchmarkSubmitEncode(b *testing.B) {
	p := cpuPlan("f0-1", 11, true)
	b.ReportAllocs()
	for b.Loop() {
		if err := engine.ValidatePlan(p, weir.DefaultLimits()); err != nil {
			b.Fatal(err)
		}
		hash := engine.PlanHash(p)
		planArgs(p, hash)
	}
}

// BenchmarkPlanArgs measures planArgs alone on BenchmarkSubmitEncode's
// plan.
func BenchmarkPlanArgs(b *testing.B) {
	p := cpuPlan("f0-1", 11, true)
	hash := engine.PlanHash(p)
	b.ReportAllocs()
	for b.Loop() {
		planArgs(p, hash)
	}
}
