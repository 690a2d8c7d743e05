package redisstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// BenchmarkScheduleCalls measures, on a private redis-server, the server
// time of the schedule transitions (metric server-us: INFO commandstats
// usec per FCALL, network excluded): a fire on time (the fence, the
// enqueue of the tick's job, the advance), a stale fire (the fence alone,
// as the workers that lose a race pay), and a list of 10 schedules (what
// a worker reads before it sleeps); and, to compare, a plain enqueue.
func BenchmarkScheduleCalls(b *testing.B) {
	if !realRedis() {
		b.Skip("set WEIR_REDIS_URL to measure on a private redis-server")
	}
	e := newPrivateEnv(b, engine.DefaultConfig())
	s := e.store
	put := func(name string) engine.Schedule {
		spec := engine.ScheduleSpec{Name: name, Every: time.Second, Job: &engine.JobSpec{Queue: "bench", Payload: []byte(`{"n":1}`)}}
		next, err := engine.FirstTick(spec, e.clock())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.PutSchedule(bg, engine.PutScheduleParams{Spec: spec, Next: next}); err != nil {
			b.Fatal(err)
		}
		sc, err := s.GetSchedule(bg, name)
		if err != nil {
			b.Fatal(err)
		}
		return sc
	}
	for i := range 9 {
		put("other" + string(rune('a'+i)))
	}
	measure := func(b *testing.B, f func()) {
		c0, u0 := redistest.CommandStats(b, e.rdb).Sum("fcall", "fcall_ro", "evalsha")
		for b.Loop() {
			f()
		}
		c1, u1 := redistest.CommandStats(b, e.rdb).Sum("fcall", "fcall_ro", "evalsha")
		if c1 > c0 {
			b.ReportMetric((u1-u0)/float64(c1-c0), "server-us")
		}
	}
	b.Run("fire", func(b *testing.B) {
		sc := put("fire")
		measure(b, func() {
			e.clk.Set(sc.Next)
			p, _, err := engine.PlanFire(sc, sc.Next)
			if err != nil {
				b.Fatal(err)
			}
			if r, err := s.FireSchedule(bg, p); err != nil || r.Outcome != engine.FireFired {
				b.Fatalf("%+v %v", r, err)
			}
			sc.Next, sc.LastTick, sc.LastID = p.Next, p.Fire, p.Job.ID
		})
	})
	b.Run("enqueue", func(b *testing.B) {
		n := 0
		measure(b, func() {
			n++
			job := engine.JobSpec{ID: "plain." + strconv.Itoa(n), Queue: "bench", Payload: []byte(`{"n":1}`)}
			if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: job}); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("stale", func(b *testing.B) {
		sc := put("stale")
		p, _, err := engine.PlanFire(sc, sc.Next)
		if err != nil {
			b.Fatal(err)
		}
		p.Tick = p.Tick.Add(-time.Second)
		measure(b, func() {
			if r, err := s.FireSchedule(bg, p); err != nil || r.Outcome != engine.FireStale {
				b.Fatalf("%+v %v", r, err)
			}
		})
	})
	b.Run("list10", func(b *testing.B) {
		measure(b, func() {
			if l, err := s.Schedules(bg); err != nil || len(l.Schedules) < 10 {
				b.Fatalf("%d %v", len(l.Schedules), err)
			}
		})
	})
}
