package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/weirflow/weir"
)

// MaxSchedules bounds the schedules of one partition (of a namespace of
// one partition: of the namespace), so that listing them is bounded work.
// A namespace of P partitions holds up to P × MaxSchedules, each
// partition the schedules whose names land in it (spec/partitions.md).
const MaxSchedules = 1000

// ScheduleSpec is a named schedule as its owner defines it: when it ticks
// (Cron, or Every) and what each tick starts (Job, or Plan).
type ScheduleSpec struct {
	// Name identifies the schedule: a ValidName. The job or
	// workflow of a tick has the ID TickIDIn(Name, tick, P) in a
	// namespace of P partitions (Schedule.TickID).
	Name string `json:"name"`
	// Cron is a cron expression: five fields (minute to day of week), or
	// six with seconds first, or a descriptor (@hourly, @every 1h30m, ...;
	// @every's interval whole seconds, at least one, as Every's).
	// A leading "CRON_TZ=Zone " is accepted as another way to give TZ.
	Cron string `json:"cron,omitempty"`
	// TZ is the IANA time zone Cron is read in; empty is UTC. "Local"
	// (each worker's own zone) is refused.
	TZ string `json:"tz,omitempty"`
	// Every ticks at each multiple of Every since the Unix epoch (whole
	// seconds, at least one): every worker computes the same ticks.
	Every time.Duration `json:"every,omitempty"`
	// Job is what a tick enqueues (its ID and RunAt are ignored: the ID is
	// the tick's).
	Job *JobSpec `json:"job,omitempty"`
	// Plan is what a tick submits (its ID is ignored: the ID is the tick's).
	Plan *Plan `json:"plan,omitempty"`
	// Missed is the missed-tick policy; empty is MissedSkip.
	Missed weir.MissedPolicy `json:"missed,omitempty"`
	// Overlap is the overlap policy; empty is OverlapAllow.
	Overlap weir.OverlapPolicy `json:"overlap,omitempty"`
}

// Schedule is a stored schedule: its spec and where its ticks stand.
type Schedule struct {
	ScheduleSpec
	// Rev counts the puts of this name: a fire names the revision it read,
	// so a fire computed from a replaced spec changes nothing.
	Rev int64
	// Paused schedules do not fire; on resume, ticks missed meanwhile follow
	// the missed-tick policy.
	Paused bool
	// Next is the tick the schedule fires next.
	Next time.Time
	// LastTick is the last tick that fired (zero before the first), and
	// LastID the ID of the job or workflow it started.
	LastTick time.Time
	LastID   string
	// Partitions is the partition count of the namespace the schedule
	// was read from (the store sets it; 0 counts as 1): it names the
	// schedule's ticks (TickID).
	Partitions int
}

// TickID is the ID of the job or workflow that s starts for tick t:
// TickIDIn(s.Name, t, s.Partitions).
func (s Schedule) TickID(t time.Time) string { return TickIDIn(s.Name, t, s.Partitions) }

// TickID is the ID of the job or workflow that schedule name starts for
// tick t in a namespace of one partition: "<name>.<unix seconds>". Every
// fire of that tick uses it, so a repeated fire finds the job or workflow
// already there.
func TickID(name string, t time.Time) string {
	return name + "." + strconv.FormatInt(t.Unix(), 10)
}

// TickIDIn is the ID of the job or workflow that schedule name starts for
// tick t in a namespace of parts partitions: TickID with one (parts < 2),
// "<name>@<unix seconds>" with more, whose routing ID (RoutingID) is the
// name, so that the tick's job or workflow lives in the schedule's
// partition, Partition(name, parts), and a fire is one step there
// (spec/partitions.md, Schedules).
func TickIDIn(name string, t time.Time, parts int) string {
	if parts < 2 {
		return TickID(name, t)
	}
	return name + "@" + strconv.FormatInt(t.Unix(), 10)
}

// cronParser reads cron expressions: seconds optional, descriptors allowed.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Ticker computes a schedule's ticks.
type Ticker interface {
	// Next is the first tick strictly after t.
	Next(t time.Time) time.Time
}

// everyTicker ticks at each multiple of d since the Unix epoch.
type everyTicker time.Duration

func (d everyTicker) Next(t time.Time) time.Time {
	s := int64(time.Duration(d) / time.Second)
	u := t.Unix() // whole seconds, rounded down
	n := u - mod(u, s) + s
	return time.Unix(n, 0).UTC()
}

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// cronTicker reads a cron schedule in a zone and returns UTC times.
type cronTicker struct {
	s   cron.Schedule
	loc *time.Location
}

func (c cronTicker) Next(t time.Time) time.Time {
	n := c.s.Next(t.In(c.loc))
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// ValidateSchedule checks a schedule spec and returns its ticker, or the
// first problem as a *ValidationError.
func ValidateSchedule(s ScheduleSpec, l weir.Limits) (Ticker, error) {
	if !ValidName(s.Name) {
		return nil, invalid("", "name", "schedule name %q must "+NameRule, s.Name)
	}
	t, err := scheduleTicker(s)
	if err != nil {
		return nil, err
	}
	if err := checkTimingRules(s); err != nil {
		return nil, err
	}
	switch {
	case (s.Job == nil) == (s.Plan == nil):
		return nil, invalid("", "job", "give a job or a workflow plan, exactly one")
	case s.Job != nil:
		j := *s.Job
		j.ID = TickID(s.Name, time.Unix(0, 0))
		if !j.RunAt.IsZero() {
			return nil, invalid("", "job", "a scheduled job runs at its tick: leave RunAt zero")
		}
		if err := ValidateJob(j, l); err != nil {
			return nil, err
		}
	default:
		p := *s.Plan
		p.ID = TickID(s.Name, time.Unix(0, 0))
		if err := ValidatePlan(p, l); err != nil {
			return nil, err
		}
	}
	switch s.Missed {
	case "", weir.MissedSkip, weir.MissedOnce:
	default:
		return nil, invalid("", "missed", "policy %q is not skip or once", s.Missed)
	}
	switch s.Overlap {
	case "", weir.OverlapAllow, weir.OverlapSkip:
	default:
		return nil, invalid("", "overlap", "policy %q is not allow or skip", s.Overlap)
	}
	return t, nil
}

// EncodeScheduleSpec is the stored form of a spec (the Redis store keeps
// it as one field, JSON); DecodeScheduleSpec reads it back.
func EncodeScheduleSpec(s ScheduleSpec) ([]byte, error) { return json.Marshal(s) }

// DecodeScheduleSpec reads a spec written by EncodeScheduleSpec.
func DecodeScheduleSpec(b []byte) (ScheduleSpec, error) {
	var s ScheduleSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return ScheduleSpec{}, fmt.Errorf("weir: stored schedule spec: %w", err)
	}
	return s, nil
}

// FirstTick is the tick a schedule put at now fires first: the first
// tick strictly after now.
// Only the timing is checked here; the store checks the rest.
func FirstTick(s ScheduleSpec, now time.Time) (time.Time, error) {
	t, err := scheduleTicker(s)
	if err != nil {
		return time.Time{}, err
	}
	if err := checkTimingRules(s); err != nil {
		return time.Time{}, err
	}
	n := t.Next(now)
	if n.IsZero() {
		return n, invalid("", "cron", "%q never ticks", s.Cron)
	}
	return n, nil
}

// scheduleTicker reads a spec's timing.
func scheduleTicker(s ScheduleSpec) (Ticker, error) {
	switch {
	case s.Cron != "" && s.Every != 0:
		return nil, invalid("", "cron", "give a cron expression or an interval, not both")
	case s.Cron != "" && s.TZ != "" && (strings.HasPrefix(s.Cron, "CRON_TZ=") || strings.HasPrefix(s.Cron, "TZ=")):
		return nil, invalid("", "tz", "give the time zone in the expression or as a zone, not both")
	case s.Cron != "":
		if _, rest, ok := cronZone(s.Cron); ok && rest == "" {
			// the parser would panic on a zone with nothing after it
			return nil, invalid("", "cron", "%q gives a zone but no expression after it (CRON_TZ=Europe/Paris 0 9 * * *)", s.Cron)
		}
		loc := time.UTC
		if s.TZ != "" {
			var err error
			if loc, err = time.LoadLocation(s.TZ); err != nil {
				return nil, invalid("", "tz", "unknown time zone %q", s.TZ)
			}
		}
		cs, err := cronParser.Parse(s.Cron)
		if err != nil {
			return nil, invalid("", "cron", "%q: %v", s.Cron, err)
		}
		return cronTicker{cs, loc}, nil
	case s.Every != 0:
		if s.TZ != "" {
			return nil, invalid("", "tz", "a time zone applies to a cron expression only")
		}
		if s.Every < time.Second || s.Every%time.Second != 0 {
			return nil, invalid("", "every", "%v must be whole seconds, at least 1s", s.Every)
		}
		return everyTicker(s.Every), nil
	default:
		return nil, invalid("", "cron", "give a cron expression or an interval")
	}
}

// Snapshot is s as package weir shows it to users.
func (s Schedule) Snapshot() weir.Schedule {
	out := weir.Schedule{Name: s.Name, Cron: s.Cron, TZ: s.TZ, Every: s.Every, Missed: s.Missed, Overlap: s.Overlap,
		Paused: s.Paused, Next: s.Next, LastTick: s.LastTick, LastID: s.LastID}
	if out.Missed == "" {
		out.Missed = weir.MissedSkip
	}
	if out.Overlap == "" {
		out.Overlap = weir.OverlapAllow
	}
	if s.Job != nil {
		out.Queue = s.Job.Queue
	}
	if s.Plan != nil {
		out.Tasks = make([]string, len(s.Plan.Tasks))
		for i, t := range s.Plan.Tasks {
			out.Tasks[i] = t.Name
		}
	}
	return out
}

// PutSchedule puts spec on sc (Scheduler.PutSchedule with its first tick
// computed): it creates the schedule or replaces the spec of the one of
// that name (which keeps its paused flag), with its first tick the first
// after start, and returns the stored schedule.
func PutSchedule(ctx context.Context, sc Scheduler, spec ScheduleSpec, start time.Time) (Schedule, error) {
	next, err := FirstTick(spec, start)
	if err != nil {
		return Schedule{}, err
	}
	if _, err := sc.PutSchedule(ctx, PutScheduleParams{Spec: spec, Next: next}); err != nil {
		return Schedule{}, err
	}
	return sc.GetSchedule(ctx, spec.Name)
}
