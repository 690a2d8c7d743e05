package conformance

import (
	"context"
	"github.com/weirflow/weir"
	"strconv"
	"sync"
	"time"

	"github.com/weirflow/weir/engine"
)

// runSchedules holds a store's schedules (engine.Scheduler) to the model:
// puts, pauses, fires on time and late under each policy, a second fire of
// one tick, overlap, and the errors, each compared with the model's reply
// and followed by the comparison of every schedule and of the whole state.
func runSchedules(t suiteT, mk maker) {
	d := newPair(t, mk, engine.DefaultConfig())
	ss, ok := d.s.(engine.Scheduler)
	if !ok {
		t.Skip("the store does not implement engine.Scheduler")
	}
	ctx := d.ctx
	list := func(op string) {
		d.call(op+": Schedules", nil,
			func(now time.Time) (any, error) { return d.m.Schedules(now), nil },
			func() (any, error) { return ss.Schedules(ctx) })
	}
	put := func(op string, want error, spec engine.ScheduleSpec, next time.Time) {
		p := engine.PutScheduleParams{Spec: spec, Next: next}
		d.call(op, want,
			func(now time.Time) (any, error) { return d.m.PutSchedule(now, p) },
			func() (any, error) { return ss.PutSchedule(ctx, p) })
		list(op)
	}
	get := func(name string) engine.Schedule {
		s, err := d.m.GetSchedule(d.clock(), name)
		if err != nil {
			d.fatalf("GetSchedule %q: %v", name, err)
		}
		return s
	}
	fire := func(op string, want error, p engine.FireScheduleParams) engine.FireScheduleResult {
		var out engine.FireScheduleResult
		d.call(op, want,
			func(now time.Time) (any, error) {
				r, err := d.m.FireSchedule(now, p)
				out = r
				return r, err
			},
			func() (any, error) { return ss.FireSchedule(ctx, p) })
		list(op)
		return out
	}
	// due plans the fire of name at the clock's now, from the model's copy
	due := func(name string) engine.FireScheduleParams {
		p, ok, err := engine.PlanFire(get(name), d.clock())
		if err != nil || !ok {
			d.fatalf("PlanFire %q at %v: due %v, %v", name, d.clock(), ok, err)
		}
		return p
	}
	wantOutcome := func(op string, r engine.FireScheduleResult, want engine.FireOutcome) {
		if r.Outcome != want {
			d.fatalf("%s: outcome %q, want %q", op, r.Outcome, want)
		}
	}

	job := engine.ScheduleSpec{Name: "report", Every: 10 * time.Second, Overlap: weir.OverlapSkip,
		Job: &engine.JobSpec{Queue: "reports", Payload: []byte(`{"k":1}`)}}
	first, err := engine.FirstTick(job, d.clock())
	if err != nil {
		d.fatalf("FirstTick: %v", err)
	}
	put("put job schedule", nil, job, first)
	wf := engine.ScheduleSpec{Name: "nightly", Cron: "0 30 2 * * *", TZ: "Europe/Paris", Missed: weir.MissedOnce,
		Plan: &engine.Plan{Tasks: []engine.TaskSpec{{Name: "a", Queue: "etl"}, {Name: "b", Queue: "etl", After: []string{"a"}}}}}
	wfFirst, err := engine.FirstTick(wf, d.clock())
	if err != nil {
		d.fatalf("FirstTick: %v", err)
	}
	put("put workflow schedule", nil, wf, wfFirst)

	// on time: the tick's job is enqueued; the same fire again is stale
	d.clk.Set(first)
	p := due("report")
	wantOutcome("fire on time", fire("fire on time", nil, p), engine.FireFired)
	wantOutcome("fire again", fire("fire the same tick again", nil, p), engine.FireStale)

	// the next tick while the job is still queued: overlap, moved on
	d.clk.Set(get("report").Next)
	wantOutcome("overlap", fire("fire while the last runs", nil, due("report")), engine.FireOverlap)

	// the last job ends; ticks were missed: skip moves on without a job
	c := d.claim(engine.ClaimParams{Queues: []string{"reports"}, Max: 1, Lease: time.Minute})
	if len(c) != 1 {
		d.fatalf("claim: %d jobs, want the fired one", len(c))
	}
	d.finishOne(engine.Outcome{JobID: c[0].Job.ID, Token: c[0].Lease.Token, Kind: engine.OutcomeCompleted})
	d.clk.Advance(95 * time.Second)
	p = due("report")
	if !p.Fire.IsZero() {
		d.fatalf("missed ticks under skip fire %v", p.Fire)
	}
	wantOutcome("missed skip", fire("fire after missed ticks (skip)", nil, p), engine.FireSkipped)

	// paused: stale; resumed: fires
	d.call("pause", nil,
		func(now time.Time) (any, error) { return nil, d.m.PauseSchedule(now, "report", true) },
		func() (any, error) { return nil, ss.PauseSchedule(ctx, "report") })
	d.clk.Set(get("report").Next)
	p = due2(d, get("report"))
	wantOutcome("paused", fire("fire a paused schedule", nil, p), engine.FireStale)
	d.call("resume", nil,
		func(now time.Time) (any, error) { return nil, d.m.PauseSchedule(now, "report", false) },
		func() (any, error) { return nil, ss.ResumeSchedule(ctx, "report") })
	wantOutcome("resumed", fire("fire a resumed schedule", nil, due("report")), engine.FireFired)

	// a workflow schedule late by days under once: fires the latest tick
	d.clk.Set(wfFirst.Add(50 * time.Hour))
	p = due("nightly")
	if want := wfFirst.Add(48 * time.Hour); !p.Fire.Equal(want) {
		d.fatalf("missed ticks under once fire %v, want the latest %v", p.Fire, want)
	}
	plan := *wf.Plan
	plan.ID = get("nightly").TickID(p.Fire)
	d.submit("submit the tick's workflow", nil, plan)
	p.Submitted = plan.ID
	wantOutcome("missed once", fire("fire after missed ticks (once)", nil, p), engine.FireFired)

	// errors
	bad := p
	bad.Name = "nope"
	bad.Submitted = engine.TickIDIn("nope", bad.Fire, d.m.Parts())
	fire("fire an unknown schedule", weir.ErrNotFound, bad)
	kind := due("report")
	kind.Job, kind.Submitted = nil, get("report").TickID(kind.Fire)
	d.clk.Set(kind.Tick)
	fire("fire a job schedule with a workflow", weir.ErrInvalid, kind)
	put("put without a target", weir.ErrInvalid, engine.ScheduleSpec{Name: "x", Every: time.Minute}, first)
	put("put a bad cron", weir.ErrInvalid, engine.ScheduleSpec{Name: "x", Cron: "61 * * * *", Job: job.Job}, first)
	d.call("delete unknown", weir.ErrNotFound,
		func(now time.Time) (any, error) { return nil, d.m.DeleteSchedule(now, "x") },
		func() (any, error) { return nil, ss.DeleteSchedule(ctx, "x") })
	d.call("get unknown", weir.ErrNotFound,
		func(now time.Time) (any, error) { return d.m.GetSchedule(now, "x") },
		func() (any, error) { return ss.GetSchedule(ctx, "x") })

	// a replaced spec moves the revision: a fire of the old one is stale
	old := due("report")
	job.Every = 20 * time.Second
	put("replace", nil, job, get("report").Next)
	wantOutcome("replaced", fire("fire a replaced revision", nil, old), engine.FireStale)
	d.call("delete", nil,
		func(now time.Time) (any, error) { return nil, d.m.DeleteSchedule(now, "report") },
		func() (any, error) { return nil, ss.DeleteSchedule(ctx, "report") })
	list("after delete")

	// a schedule in each partition (up to 8): each fires its tick's job
	// in its own partition, read back by ID
	spread := map[int]bool{}
	for k := 0; len(spread) < min(d.m.Parts(), 8); k++ {
		name := "spread-" + strconv.Itoa(k)
		q := engine.Partition(name, d.m.Parts())
		if spread[q] {
			continue
		}
		spread[q] = true
		spec := engine.ScheduleSpec{Name: name, Every: 30 * time.Second, Job: &engine.JobSpec{Queue: "spread"}}
		next, err := engine.FirstTick(spec, d.clock())
		if err != nil {
			d.fatalf("FirstTick: %v", err)
		}
		put("put "+name, nil, spec, next)
		d.clk.Set(next)
		r := fire("fire "+name, nil, due(name))
		wantOutcome("fire "+name, r, engine.FireFired)
		if want := get(name).TickID(next); r.ID != want || engine.Partition(r.ID, d.m.Parts()) != q {
			d.fatalf("fire %s: tick ID %q, want %q in partition %d", name, r.ID, want, q)
		}
		d.jobs = append(d.jobs, r.ID)
		d.call("get "+r.ID, nil,
			func(now time.Time) (any, error) { return d.m.GetJob(now, r.ID) },
			func() (any, error) { return d.s.GetJob(ctx, r.ID) })
	}
}

// due2 plans a fire of s as if it were not paused (to show that the
// store refuses it).
func due2(d *differ, s engine.Schedule) engine.FireScheduleParams {
	s.Paused = false
	p, ok, err := engine.PlanFire(s, d.clock())
	if err != nil || !ok {
		d.fatalf("PlanFire %q: due %v, %v", s.Name, ok, err)
	}
	return p
}

// runScheduleRace: 8 goroutines fire the same tick of a job schedule at
// once (5 ticks): exactly one fire is "fired" and the others "stale", and
// the tick's job is written once.
func runScheduleRace(t suiteT, mk maker) {
	clk := newClock()
	s := mk.store(t, engine.DefaultConfig(), clk.Now)
	defer closeStore(s)
	ss, ok := s.(engine.Scheduler)
	if !ok {
		t.Skip("the store does not implement engine.Scheduler")
	}
	ctx := context.Background()
	spec := engine.ScheduleSpec{Name: "race", Every: 10 * time.Second, Job: &engine.JobSpec{Queue: "q"}}
	first, err := engine.FirstTick(spec, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.PutSchedule(ctx, engine.PutScheduleParams{Spec: spec, Next: first}); err != nil {
		t.Fatal(err)
	}
	const racers = 8
	for round := range 5 {
		sc, err := ss.GetSchedule(ctx, "race")
		if err != nil {
			t.Fatal(err)
		}
		clk.Set(sc.Next)
		p, due, err := engine.PlanFire(sc, sc.Next)
		if err != nil || !due {
			t.Fatalf("round %d: due %v, %v", round, due, err)
		}
		res := make([]engine.FireScheduleResult, racers)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range racers {
			wg.Go(func() {
				<-start
				res[i], errs[i] = ss.FireSchedule(ctx, p)
			})
		}
		close(start)
		wg.Wait()
		fired := 0
		for i := range racers {
			if errs[i] != nil {
				t.Fatalf("fire %d: %v", i, errs[i])
			}
			switch res[i].Outcome {
			case engine.FireFired:
				fired++
				if !res[i].Created || res[i].ID != p.Job.ID {
					t.Fatalf("round %d: the winning fire %+v, want job %s created", round, res[i], p.Job.ID)
				}
			case engine.FireStale:
			default:
				t.Fatalf("round %d: outcome %q", round, res[i].Outcome)
			}
		}
		if fired != 1 {
			t.Fatalf("round %d: %d fires of one tick fired, want exactly 1", round, fired)
		}
	}
	qs, err := s.Queues(ctx)
	if err != nil || len(qs) != 1 || qs[0].Ready != 5 {
		t.Fatalf("queues after 5 ticks: %+v (%v), want 5 jobs ready in q", qs, err)
	}
}
