package engine

import (
	"github.com/weirflow/weir"
	"slices"
	"strings"
	"time"
)

// PutSchedule creates a schedule or replaces the spec of one (see
// Scheduler).
func (m *Model) PutSchedule(now time.Time, p PutScheduleParams) (PutScheduleResult, error) {
	// a refused call stores no time (spec/states.md, Time after a step
	// back): the checks come before the tick
	if err := ValidatePutSchedule(p, m.cfg.Limits); err != nil {
		return PutScheduleResult{}, err
	}
	s := m.schedules[p.Spec.Name]
	if s == nil && len(m.schedules) >= MaxSchedules {
		return PutScheduleResult{}, errScheduleLimit(m.idParts)
	}
	m.tick(now)
	if m.schedules == nil {
		m.schedules = map[string]*Schedule{}
	}
	if s == nil {
		s = &Schedule{}
		m.schedules[p.Spec.Name] = s
	}
	s.ScheduleSpec = cloneScheduleSpec(p.Spec)
	s.Rev++
	s.Next = toTime(p.Next.UnixMilli())
	return PutScheduleResult{Created: s.Rev == 1, Rev: s.Rev}, nil
}

// ValidatePutSchedule checks a put's params against the limits.
func ValidatePutSchedule(p PutScheduleParams, l weir.Limits) error {
	if _, err := ValidateSchedule(p.Spec, l); err != nil {
		return err
	}
	if p.Next.IsZero() || p.Next.UnixMilli() <= 0 || !p.Next.Equal(toTime(p.Next.UnixMilli())) {
		return invalid("", "next", "the first tick %v must be a positive time in whole milliseconds", p.Next)
	}
	return nil
}

// DeleteSchedule removes a schedule, or returns ErrNotFound.
func (m *Model) DeleteSchedule(now time.Time, name string) error {
	if m.schedules[name] == nil {
		return wrap(weir.ErrNotFound, "schedule %q", name)
	}
	m.tick(now)
	delete(m.schedules, name)
	return nil
}

// PauseSchedule sets or clears a schedule's paused flag, or returns
// ErrNotFound.
func (m *Model) PauseSchedule(now time.Time, name string, paused bool) error {
	s := m.schedules[name]
	if s == nil {
		return wrap(weir.ErrNotFound, "schedule %q", name)
	}
	m.tick(now)
	s.Paused = paused
	return nil
}

// GetSchedule returns one schedule, or ErrNotFound.
func (m *Model) GetSchedule(now time.Time, name string) (Schedule, error) {
	m.peek(now)
	s := m.schedules[name]
	if s == nil {
		return Schedule{}, wrap(weir.ErrNotFound, "schedule %q", name)
	}
	return m.scheduleCopy(s), nil
}

// scheduleCopy is a copy of s as a read returns it.
func (m *Model) scheduleCopy(s *Schedule) Schedule {
	c := *s
	c.ScheduleSpec = cloneScheduleSpec(s.ScheduleSpec)
	c.Partitions = max(m.idParts, 1)
	return c
}

// Schedules lists every schedule, by name, with the time the read runs
// at.
func (m *Model) Schedules(now time.Time) ScheduleList {
	t := m.peek(now)
	out := make([]Schedule, 0, len(m.schedules))
	for _, s := range m.schedules {
		out = append(out, m.scheduleCopy(s))
	}
	SortSchedules(out)
	return ScheduleList{Schedules: out, Now: toTime(t)}
}

// SortSchedules sorts schedules by name, in byte order: the order of
// Scheduler.Schedules, of one partition and of several merged.
func SortSchedules(out []Schedule) {
	slices.SortFunc(out, func(a, b Schedule) int { return strings.Compare(a.Name, b.Name) })
}

// errScheduleLimit is the error of a put of a new schedule in a partition
// that holds MaxSchedules already (parts: the namespace's partition
// count, 0 for one).
func errScheduleLimit(parts int) error {
	if parts > 1 {
		return invalid("", "name", "the schedule's partition holds at most %d schedules", MaxSchedules)
	}
	return invalid("", "name", "a namespace holds at most %d schedules", MaxSchedules)
}

// ScheduleLimitError is the error of a put of a new schedule in a
// partition (of a namespace of parts partitions) that holds MaxSchedules
// already. Stores other than the Model return it.
func ScheduleLimitError(parts int) error { return errScheduleLimit(parts) }

// FireSchedule fires one tick of a schedule (see FireScheduleParams):
// fenced on the revision, the paused flag and the next tick; under
// OverlapSkip it starts nothing while the last fired job has not ended; it
// enqueues the tick's job (a job schedule) or records the workflow the
// caller submitted (a workflow schedule); and it moves the schedule to
// p.Next.
func (m *Model) FireSchedule(now time.Time, p FireScheduleParams) (FireScheduleResult, error) {
	// a refused or stale fire stores no time (spec/states.md, Time after
	// a step back): the tick comes after the checks
	if err := ValidateFireSchedule(p, m.cfg.Limits, m.idParts); err != nil {
		return FireScheduleResult{}, err
	}
	s := m.schedules[p.Name]
	if s == nil {
		return FireScheduleResult{}, wrap(weir.ErrNotFound, "schedule %q", p.Name)
	}
	if s.Rev != p.Rev || s.Paused || !s.Next.Equal(p.Tick) {
		return FireScheduleResult{Outcome: FireStale}, nil
	}
	if p.Fire.IsZero() {
		m.tick(now)
		s.Next = msTime(p.Next)
		if p.Overlap {
			return FireScheduleResult{Outcome: FireOverlap}, nil
		}
		return FireScheduleResult{Outcome: FireSkipped}, nil
	}
	id := TickIDIn(p.Name, p.Fire, m.idParts)
	if (s.Job != nil) != (p.Job != nil) {
		return FireScheduleResult{}, fireKindError(p.Name, s.Job != nil)
	}
	t := m.tick(now)
	res := FireScheduleResult{Outcome: FireFired, ID: id}
	if p.Job != nil {
		if last := m.jobs[s.LastID]; s.Overlap == weir.OverlapSkip && last != nil && !last.state.Ended() {
			s.Next = msTime(p.Next)
			return FireScheduleResult{Outcome: FireOverlap}, nil
		}
		// a job already under the tick's ID (another spec's, when the
		// schedule was replaced meanwhile) is the tick's: nothing is written
		er := m.enqueue(t, *p.Job, JobHash(*p.Job))
		res.Created = er.Created
	}
	s.LastTick, s.LastID = msTime(p.Fire), id
	s.Next = msTime(p.Next)
	return res, nil
}

// ValidateFireSchedule checks a fire's params against the limits, in a
// namespace of parts partitions (which name the tick's ID: TickIDIn; 0
// counts as 1).
func ValidateFireSchedule(p FireScheduleParams, l weir.Limits, parts int) error {
	if !ValidName(p.Name) {
		return invalid("", "name", "schedule name %q must "+NameRule, p.Name)
	}
	if p.Tick.IsZero() {
		return invalid("", "tick", "give the schedule's next tick as read (the fence)")
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"tick", p.Tick}, {"fire", p.Fire}, {"next", p.Next}} {
		if !f.t.IsZero() && (f.t.UnixMilli() <= 0 || !f.t.Equal(toTime(f.t.UnixMilli()))) {
			return invalid("", f.name, "%v must be a positive time in whole milliseconds", f.t)
		}
	}
	if p.Overlap && (!p.Fire.IsZero() || p.Job != nil) {
		return invalid("", "overlap", "an overlap fire starts nothing: leave Fire and Job empty")
	}
	if !p.Fire.IsZero() {
		id := TickIDIn(p.Name, p.Fire, parts)
		if (p.Job != nil && p.Job.ID != id) || (p.Job == nil && p.Submitted != id) {
			return invalid("", "job", "the fire of tick %v starts %q: give that ID to its job, or as the submitted workflow", p.Fire.UTC(), id)
		}
	} else if p.Job != nil || p.Submitted != "" {
		return invalid("", "job", "a fire of no tick starts nothing: leave Job and Submitted empty")
	}
	if p.Job != nil {
		if !p.Job.RunAt.IsZero() {
			return invalid("", "job", "a scheduled job runs at its tick: leave RunAt zero")
		}
		return ValidateJob(*p.Job, l)
	}
	return nil
}

func cloneScheduleSpec(s ScheduleSpec) ScheduleSpec {
	if s.Job != nil {
		j := *s.Job
		j.Payload = slices.Clone(j.Payload)
		s.Job = &j
	}
	if s.Plan != nil {
		p := clonePlan(*s.Plan)
		s.Plan = &p
	}
	return s
}

// fireKindError is a fire whose target is not the schedule's kind.
func fireKindError(name string, job bool) error {
	if job {
		return invalid("", "job", "schedule %q enqueues a job: give the tick's job", name)
	}
	return invalid("", "job", "schedule %q submits a workflow: give the submitted workflow ID, no job", name)
}

// FireKindError is the error of a fire whose target (a job, or a submitted
// workflow) is not the kind of the schedule's: job is true for a job
// schedule. Stores other than the Model return it.
func FireKindError(name string, job bool) error { return fireKindError(name, job) }

// msTime is t in whole milliseconds, UTC (zero stays zero).
func msTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return toTime(t.UnixMilli())
}
