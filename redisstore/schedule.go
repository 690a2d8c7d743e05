package redisstore

import (
	"context"
	"github.com/weirflow/weir"
	"strconv"

	"github.com/weirflow/weir/engine"
)

var _ engine.Scheduler = (*Store)(nil)

// PutSchedule implements engine.Scheduler (schedule_put.lua).
func (pt *part) PutSchedule(ctx context.Context, p engine.PutScheduleParams) (engine.PutScheduleResult, error) {
	if err := engine.ValidatePutSchedule(p, pt.cfg.Limits); err != nil {
		return engine.PutScheduleResult{}, err
	}
	spec, err := engine.EncodeScheduleSpec(p.Spec)
	if err != nil {
		return engine.PutScheduleResult{}, err
	}
	kind := "w"
	if p.Spec.Job != nil {
		kind = "j"
	}
	overlap := weir.OverlapAllow
	if p.Spec.Overlap == weir.OverlapSkip {
		overlap = weir.OverlapSkip
	}
	v, err := pt.run(ctx, "schedule_put", p.Spec.Name, spec, kind, p.Next.UnixMilli(), engine.MaxSchedules, string(overlap))
	if err != nil {
		return engine.PutScheduleResult{}, err
	}
	r := newReader(v)
	created := r.str()
	if created == "LIMIT" {
		return engine.PutScheduleResult{}, engine.ScheduleLimitError(pt.cfg.PartitionCount())
	}
	res := engine.PutScheduleResult{Created: created == "1", Rev: r.int()}
	return res, r.done()
}

// DeleteSchedule implements engine.Scheduler (schedule_delete.lua).
func (pt *part) DeleteSchedule(ctx context.Context, name string) error {
	if !engine.ValidName(name) {
		return invalidSchedule(name)
	}
	_, err := pt.run(ctx, "schedule_delete", name)
	return err
}

// PauseSchedule implements engine.Scheduler (schedule_pause.lua).
func (pt *part) PauseSchedule(ctx context.Context, name string) error {
	return pt.pauseSchedule(ctx, name, "1")
}

// ResumeSchedule implements engine.Scheduler (schedule_pause.lua).
func (pt *part) ResumeSchedule(ctx context.Context, name string) error {
	return pt.pauseSchedule(ctx, name, "0")
}

func (pt *part) pauseSchedule(ctx context.Context, name, v string) error {
	if !engine.ValidName(name) {
		return invalidSchedule(name)
	}
	_, err := pt.run(ctx, "schedule_pause", name, v)
	return err
}

// GetSchedule implements engine.Scheduler (schedule_list.lua).
func (pt *part) GetSchedule(ctx context.Context, name string) (engine.Schedule, error) {
	if !engine.ValidName(name) {
		return engine.Schedule{}, invalidSchedule(name)
	}
	l, err := pt.schedules(ctx, name)
	if err != nil {
		return engine.Schedule{}, err
	}
	out := l.Schedules
	if len(out) != 1 {
		return engine.Schedule{}, codeError("PROTOCOL", "schedule_list returned "+strconv.Itoa(len(out))+" schedules for one name")
	}
	return out[0], nil
}

// Schedules implements engine.Scheduler (schedule_list.lua): every
// schedule, by name, with the store's time.
func (pt *part) Schedules(ctx context.Context) (engine.ScheduleList, error) {
	return pt.schedules(ctx, "")
}

func (pt *part) schedules(ctx context.Context, name string) (engine.ScheduleList, error) {
	v, err := pt.run(ctx, "schedule_list", name)
	if err != nil {
		return engine.ScheduleList{}, err
	}
	r := newReader(v)
	now := r.time()
	out := make([]engine.Schedule, r.count())
	for i := range out {
		sc := &out[i]
		n, spec := r.str(), r.str()
		sc.Rev, sc.Paused, sc.Next = r.int(), r.flag(), r.time()
		if lt := r.str(); lt != "" {
			ms, err := strconv.ParseInt(lt, 10, 64)
			if err != nil {
				r.fail("last tick %q", lt)
			}
			sc.LastTick = toTime(ms)
		}
		sc.LastID = r.str()
		if r.err != nil {
			return engine.ScheduleList{}, r.err
		}
		if sc.ScheduleSpec, err = engine.DecodeScheduleSpec([]byte(spec)); err != nil {
			return engine.ScheduleList{}, err
		}
		sc.Name = n
		sc.Partitions = pt.cfg.PartitionCount()
	}
	if err := r.done(); err != nil {
		return engine.ScheduleList{}, err
	}
	// the index orders by next tick; the contract orders by name
	engine.SortSchedules(out)
	return engine.ScheduleList{Schedules: out, Now: now}, nil
}

// FireSchedule implements engine.Scheduler (schedule_fire.lua).
func (pt *part) FireSchedule(ctx context.Context, p engine.FireScheduleParams) (engine.FireScheduleResult, error) {
	parts := pt.cfg.PartitionCount()
	if err := engine.ValidateFireSchedule(p, pt.cfg.Limits, parts); err != nil {
		return engine.FireScheduleResult{}, err
	}
	var fire, next int64
	var id string
	if !p.Fire.IsZero() {
		fire = p.Fire.UnixMilli()
		id = engine.TickIDIn(p.Name, p.Fire, parts)
	}
	if !p.Next.IsZero() {
		next = p.Next.UnixMilli()
	}
	sc := scripts["schedule_fire"]
	args := pt.argv(sc, 8+enqueueArgs)
	args = append(args, p.Name, p.Rev, p.Tick.UnixMilli(), fire, next, flagArg(p.Overlap), id, flagArg(p.Job != nil))
	if p.Job != nil {
		var err error
		if args, err = pt.appendEnqueue(args, *p.Job); err != nil {
			return engine.FireScheduleResult{}, err
		}
	}
	v, err := pt.call(ctx, sc, args)
	if err != nil {
		return engine.FireScheduleResult{}, err
	}
	r := newReader(v)
	outcome := r.str()
	if outcome == "KIND" {
		job := r.flag()
		if err := r.done(); err != nil {
			return engine.FireScheduleResult{}, err
		}
		return engine.FireScheduleResult{}, engine.FireKindError(p.Name, job)
	}
	res := engine.FireScheduleResult{Outcome: engine.FireOutcome(outcome), ID: r.str(), Created: r.flag()}
	return res, r.done()
}

func invalidSchedule(name string) error {
	return invalid("name", "schedule name %q must "+engine.NameRule, name)
}

var _ engine.ScheduleWatcher = (*Store)(nil)

// watchSchedules: schedule_put and a resume publish the schedule's name
// on its partition's channel weir:{<ns>:<p>}:schedules (spec/keys.md);
// watchSchedules subscribes to chans (every partition's) and calls fn for
// each message, and after every (re)subscription.
func (pt *part) watchSchedules(ctx context.Context, chans []string, fn func()) error {
	return pt.watch(ctx, chans, func(string, bool) { fn() })
}
