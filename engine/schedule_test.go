package engine

import (
	"errors"
	"github.com/weirflow/weir"
	"strings"
	"testing"
	"time"
)

var tick0 = time.Date(2030, 3, 1, 12, 0, 0, 0, time.UTC)

func everySpec(d time.Duration, missed weir.MissedPolicy) ScheduleSpec {
	return ScheduleSpec{Name: "s", Every: d, Missed: missed, Job: &JobSpec{Queue: "q"}}
}

// On time, a fire fires its tick and moves to the one after; late by more
// than one tick, skip fires nothing and once fires the latest tick, both
// moving to the first tick after now.
func TestPlanFireMissedPolicies(t *testing.T) {
	for _, c := range []struct {
		name       string
		missed     weir.MissedPolicy
		late       time.Duration
		fire, next time.Time
	}{
		{"on time", weir.MissedSkip, 0, tick0, tick0.Add(10 * time.Second)},
		{"late within the tick", weir.MissedSkip, 9999 * time.Millisecond, tick0, tick0.Add(10 * time.Second)},
		{"missed, skip", weir.MissedSkip, 35 * time.Second, time.Time{}, tick0.Add(40 * time.Second)},
		{"missed, once", weir.MissedOnce, 35 * time.Second, tick0.Add(30 * time.Second), tick0.Add(40 * time.Second)},
		{"missed exactly at a tick, once", weir.MissedOnce, 30 * time.Second, tick0.Add(30 * time.Second), tick0.Add(40 * time.Second)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Schedule{ScheduleSpec: everySpec(10*time.Second, c.missed), Rev: 3, Next: tick0}
			p, due, err := PlanFire(s, tick0.Add(c.late))
			if err != nil || !due {
				t.Fatalf("due %v, %v", due, err)
			}
			if !p.Fire.Equal(c.fire) || !p.Next.Equal(c.next) || !p.Tick.Equal(tick0) || p.Rev != 3 {
				t.Fatalf("fire %v next %v tick %v rev %d, want fire %v next %v", p.Fire, p.Next, p.Tick, p.Rev, c.fire, c.next)
			}
			if c.fire.IsZero() != (p.Job == nil) {
				t.Fatalf("job %v with fire %v", p.Job, p.Fire)
			}
			if p.Job != nil && p.Job.ID != TickID("s", c.fire) {
				t.Fatalf("job ID %q, want %q", p.Job.ID, TickID("s", c.fire))
			}
		})
	}
	s := Schedule{ScheduleSpec: everySpec(10*time.Second, weir.MissedSkip), Next: tick0}
	if _, due, _ := PlanFire(s, tick0.Add(-time.Millisecond)); due {
		t.Fatal("due before its tick")
	}
	s.Paused = true
	if _, due, _ := PlanFire(s, tick0); due {
		t.Fatal("a paused schedule is due")
	}
}

// A one-second schedule down for a year fires once for its latest tick.
func TestPlanFireLongDowntime(t *testing.T) {
	s := Schedule{ScheduleSpec: everySpec(time.Second, weir.MissedOnce), Next: tick0}
	now := tick0.Add(365*24*time.Hour + 1500*time.Millisecond)
	p, _, _ := PlanFire(s, now)
	if want := now.Truncate(time.Second); !p.Fire.Equal(want) || !p.Next.Equal(want.Add(time.Second)) {
		t.Fatalf("fire %v next %v, want %v", p.Fire, p.Next, want)
	}
	// a cron schedule too (a workday at 09:00 in New York)
	c := Schedule{ScheduleSpec: ScheduleSpec{Name: "c", Cron: "0 9 * * MON-FRI", TZ: "America/New_York", Missed: weir.MissedOnce, Plan: &Plan{Tasks: []TaskSpec{{Name: "a", Queue: "q"}}}}}
	first, err := FirstTick(c.ScheduleSpec, tick0)
	if err != nil {
		t.Fatal(err)
	}
	c.Next = first
	// Saturday 2031-03-15 10:00 New York: the latest tick is Friday 09:00
	ny, _ := time.LoadLocation("America/New_York")
	p, _, _ = PlanFire(c, time.Date(2031, 3, 15, 10, 0, 0, 0, ny))
	if want := time.Date(2031, 3, 14, 9, 0, 0, 0, ny); !p.Fire.Equal(want) {
		t.Fatalf("fire %v, want %v", p.Fire, want)
	}
	if want := time.Date(2031, 3, 17, 9, 0, 0, 0, ny); !p.Next.Equal(want) {
		t.Fatalf("next %v, want %v", p.Next, want)
	}
}

// Cron expressions with and without seconds, descriptors, zones, and
// intervals aligned on the epoch.
func TestTicks(t *testing.T) {
	at := time.Date(2030, 7, 1, 10, 0, 7, 0, time.UTC) // summer: Paris is UTC+2
	for _, c := range []struct {
		spec ScheduleSpec
		want time.Time
	}{
		{ScheduleSpec{Cron: "*/15 * * * * *"}, at.Add(8 * time.Second)},
		{ScheduleSpec{Cron: "30 * * * *"}, time.Date(2030, 7, 1, 10, 30, 0, 0, time.UTC)},
		{ScheduleSpec{Cron: "0 30 2 * * *", TZ: "Europe/Paris"}, time.Date(2030, 7, 2, 0, 30, 0, 0, time.UTC)},
		{ScheduleSpec{Cron: "CRON_TZ=Europe/Paris 0 13 * * *"}, time.Date(2030, 7, 1, 11, 0, 0, 0, time.UTC)},
		{ScheduleSpec{Cron: "@hourly"}, time.Date(2030, 7, 1, 11, 0, 0, 0, time.UTC)},
		{ScheduleSpec{Every: time.Minute}, time.Date(2030, 7, 1, 10, 1, 0, 0, time.UTC)},
		{ScheduleSpec{Every: 7 * time.Second}, time.Unix((at.Unix()/7+1)*7, 0).UTC()},
	} {
		c.spec.Name, c.spec.Job = "s", &JobSpec{Queue: "q"}
		got, err := FirstTick(c.spec, at)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%+v: %v, %v; want %v", c.spec, got, err, c.want)
		}
	}
}

func TestValidateScheduleErrors(t *testing.T) {
	job := &JobSpec{Queue: "q"}
	for _, c := range []struct {
		spec  ScheduleSpec
		field string
	}{
		{ScheduleSpec{Name: "a b", Every: time.Second, Job: job}, "name"},
		{ScheduleSpec{Name: ".", Every: time.Second, Job: job}, "name"},
		{ScheduleSpec{Name: "..", Every: time.Second, Job: job}, "name"},
		{ScheduleSpec{Name: "s", Job: job}, "cron"},
		{ScheduleSpec{Name: "s", Cron: "* * *", Job: job}, "cron"},
		{ScheduleSpec{Name: "s", Cron: "@every 1m", Every: time.Minute, Job: job}, "cron"},
		{ScheduleSpec{Name: "s", Cron: "* * * * *", TZ: "Mars/Olympus", Job: job}, "tz"},
		{ScheduleSpec{Name: "s", Cron: "CRON_TZ=UTC * * * * *", TZ: "UTC", Job: job}, "tz"},
		{ScheduleSpec{Name: "s", Every: 1500 * time.Millisecond, Job: job}, "every"},
		{ScheduleSpec{Name: "s", Every: time.Second, TZ: "UTC", Job: job}, "tz"},
		{ScheduleSpec{Name: "s", Every: time.Second}, "job"},
		{ScheduleSpec{Name: "s", Every: time.Second, Job: job, Plan: &Plan{}}, "job"},
		{ScheduleSpec{Name: "s", Every: time.Second, Job: &JobSpec{Queue: "q q"}}, "queue"},
		{ScheduleSpec{Name: "s", Every: time.Second, Job: &JobSpec{Queue: "q", RunAt: tick0}}, "job"},
		{ScheduleSpec{Name: "s", Every: time.Second, Job: job, Missed: "all"}, "missed"},
		{ScheduleSpec{Name: "s", Every: time.Second, Job: job, Overlap: "queue"}, "overlap"},
	} {
		_, err := ValidateSchedule(c.spec, weir.DefaultLimits())
		var ve *weir.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, weir.ErrInvalid) || ve.Field != c.field {
			t.Errorf("%+v: %v, want a validation error of field %q", c.spec, err, c.field)
		}
	}
}

// What the cron parser takes but means otherwise is refused at a put, by
// ValidateSchedule and FirstTick alike, naming the field: "Local" as a
// zone (each worker's own), an @every interval under a second or not
// whole seconds (the parser would tick every second), and a zone with no
// expression after it (the parser panics on it).
func TestScheduleTimingRules(t *testing.T) {
	job := &JobSpec{Queue: "q"}
	for _, c := range []struct {
		cron, tz, field, problem string
	}{
		{"* * * * *", "Local", "tz", "each worker's own zone"},
		{"CRON_TZ=Local * * * * *", "", "cron", "each worker's own zone"},
		{"TZ=Local @hourly", "", "cron", "each worker's own zone"},
		{"@every 0s", "", "cron", "whole seconds, at least 1s"},
		{"@every 1ms", "", "cron", "whole seconds, at least 1s"},
		{"@every 1500ms", "", "cron", "whole seconds, at least 1s"},
		{"@every -5s", "", "cron", "whole seconds, at least 1s"},
		{"CRON_TZ=Europe/Paris @every 500ms", "", "cron", "whole seconds, at least 1s"},
		{"CRON_TZ=UTC", "", "cron", "no expression after it"},
		{"TZ=Europe/Paris", "", "cron", "no expression after it"},
	} {
		spec := ScheduleSpec{Name: "s", Cron: c.cron, TZ: c.tz, Job: job}
		_, verr := ValidateSchedule(spec, weir.DefaultLimits())
		_, ferr := FirstTick(spec, tick0)
		for _, err := range []error{verr, ferr} {
			var ve *weir.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, weir.ErrInvalid) || ve.Field != c.field || !strings.Contains(ve.Problem, c.problem) {
				t.Errorf("cron %q tz %q: %v; want a validation error of field %q saying %q", c.cron, c.tz, err, c.field, c.problem)
			}
		}
	}
	// what the rules leave alone
	for _, c := range []struct{ cron, tz string }{
		{"@every 1s", ""}, {"@every 1m30s", "Europe/Paris"}, {"CRON_TZ=Europe/Paris @every 2s", ""},
		{"0 9 * * *", "UTC"}, {"0 9 * * *", ""}, {"CRON_TZ=America/New_York 0 9 * * *", ""},
	} {
		spec := ScheduleSpec{Name: "s", Cron: c.cron, TZ: c.tz, Job: job}
		if _, err := ValidateSchedule(spec, weir.DefaultLimits()); err != nil {
			t.Errorf("cron %q tz %q: %v", c.cron, c.tz, err)
		}
	}
}

// The model's fire: fenced on revision, pause and tick; overlap under
// skip; a job already under the tick's ID is the tick's.
func TestModelFireSchedule(t *testing.T) {
	m := NewModel(DefaultConfig())
	spec := everySpec(10*time.Second, weir.MissedSkip)
	spec.Overlap = weir.OverlapSkip
	if r, err := m.PutSchedule(tick0, PutScheduleParams{Spec: spec, Next: tick0}); err != nil || !r.Created || r.Rev != 1 {
		t.Fatalf("put: %+v %v", r, err)
	}
	get := func() Schedule {
		s, err := m.GetSchedule(tick0, "s")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fire := func(now time.Time, want FireOutcome) FireScheduleResult {
		t.Helper()
		p, due, err := PlanFire(get(), now)
		if err != nil || !due {
			t.Fatalf("plan: %v %v", due, err)
		}
		r, err := m.FireSchedule(now, p)
		if err != nil || r.Outcome != want {
			t.Fatalf("fire at %v: %+v %v, want %s", now, r, err, want)
		}
		return r
	}
	r := fire(tick0, FireFired)
	if r.ID != "s.1898596800" || !r.Created {
		t.Fatalf("first fire %+v", r)
	}
	if j, err := m.GetJob(tick0, r.ID); err != nil || j.State != weir.Queued || j.Queue != "q" {
		t.Fatalf("the tick's job: %+v %v", j, err)
	}
	// its job is still queued at the next tick: overlap moves on
	fire(tick0.Add(10*time.Second), FireOverlap)
	if s := get(); !s.Next.Equal(tick0.Add(20*time.Second)) || s.LastID != r.ID {
		t.Fatalf("after overlap: %+v", s)
	}
	// the job ends: the next tick fires
	c, _ := m.Claim(tick0.Add(20*time.Second), ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
	if _, err := m.Finish(tick0.Add(20*time.Second), FinishParams{Outcomes: []Outcome{{JobID: c[0].Job.ID, Token: c[0].Lease.Token, Kind: OutcomeCompleted}}}); err != nil {
		t.Fatal(err)
	}
	// a job already under the next tick's ID is that tick's
	pre := JobSpec{ID: TickID("s", tick0.Add(20*time.Second)), Queue: "other"}
	if _, err := m.Enqueue(tick0.Add(20*time.Second), EnqueueParams{Job: pre}); err != nil {
		t.Fatal(err)
	}
	r = fire(tick0.Add(20*time.Second), FireFired)
	if r.Created || r.ID != pre.ID {
		t.Fatalf("fire onto an existing job: %+v", r)
	}
	// a second put moves the revision; a pause fences
	p, _, _ := PlanFire(get(), tick0.Add(30*time.Second))
	if r, _ := m.PutSchedule(tick0, PutScheduleParams{Spec: spec, Next: tick0.Add(30 * time.Second)}); r.Created || r.Rev != 2 {
		t.Fatalf("second put: %+v", r)
	}
	if r, err := m.FireSchedule(tick0.Add(30*time.Second), p); err != nil || r.Outcome != FireStale {
		t.Fatalf("old revision: %+v %v", r, err)
	}
	noFence := p
	noFence.Tick = time.Time{}
	if _, err := m.FireSchedule(tick0.Add(30*time.Second), noFence); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("a fire without its fence tick: %v", err)
	}
	if err := m.PauseSchedule(tick0, "s", true); err != nil {
		t.Fatal(err)
	}
	p.Rev = 2
	if r, err := m.FireSchedule(tick0.Add(30*time.Second), p); err != nil || r.Outcome != FireStale {
		t.Fatalf("paused: %+v %v", r, err)
	}
}
