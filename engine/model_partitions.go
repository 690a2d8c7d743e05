package engine

import (
	"cmp"
	"fmt"
	"github.com/weirflow/weir"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Partitioned is the reference state machine of a namespace of P > 1
// partitions (spec/partitions.md): P one-partition Models, each a whole
// partition with its own clock, queues, leases, unique keys, expiry and
// events. It holds no state of its own but the rotation of its claims.
//
// Every method routes as spec/partitions.md's table says: a call by ID (a
// job, a workflow, a schedule name) to the Model of Partition(id, P), and
// every other call to every partition, in partition order, merging what
// they return. A call that may reach several partitions is validated once,
// before any partition runs it, so a refused one changes none. Like a
// Model, it is not safe for concurrent use.
type Partitioned struct {
	cfg   Config
	parts []*Model
	// claims counts the calls that chose their partitions by rotation
	// (Claim, and Finish with a claim and no outcome)
	claims uint64
}

// NewPartitioned returns an empty namespace of cfg.Partitions partitions
// (at most MaxPartitions: check the count with Config.ValidatePartitions),
// each a Model with cfg's limits and retention. Zero limits are replaced
// by defaults. It panics for fewer than two: a namespace of one partition
// is a Model (NewNamespace chooses).
func NewPartitioned(cfg Config) *Partitioned {
	n := min(cfg.PartitionCount(), MaxPartitions)
	if n < 2 {
		panic(fmt.Sprintf("engine.NewPartitioned: Config.Partitions is %d: a namespace of one partition is a Model (NewNamespace)", cfg.Partitions))
	}
	if cfg.Limits == (weir.Limits{}) {
		cfg.Limits = weir.DefaultLimits()
	}
	sub := cfg
	sub.Partitions = 1
	ns := &Partitioned{cfg: cfg, parts: make([]*Model, n)}
	for i := range ns.parts {
		ns.parts[i] = NewModel(sub)
		ns.parts[i].idParts = n
	}
	return ns
}

// Config returns the namespace's configuration.
func (ns *Partitioned) Config() Config { return ns.cfg }

// Parts is the number of the namespace's partitions.
func (ns *Partitioned) Parts() int { return len(ns.parts) }

// Part returns the Model of partition i, in [0, Parts()). A store built on
// the namespace reads a partition's own clock and events through it; it
// must not change the Model other than through ns.
func (ns *Partitioned) Part(i int) *Model { return ns.parts[i] }

// at returns the Model of the partition of id.
func (ns *Partitioned) at(id string) *Model { return ns.parts[Partition(id, len(ns.parts))] }

// first is partition 0, whose limits (every partition's) validate a call
// before it runs anywhere.
func (ns *Partitioned) first() *Model { return ns.parts[0] }

// Now is the latest of the partitions' times of their last write (each
// partition keeps its own clock); zero before the first.
func (ns *Partitioned) Now() time.Time {
	var t int64
	for _, s := range ns.parts {
		t = max(t, s.now)
	}
	return toTime(t)
}

// Submit runs in the partition of the plan's ID.
func (ns *Partitioned) Submit(now time.Time, p SubmitParams) (SubmitResult, error) {
	return ns.at(p.Plan.ID).Submit(now, p)
}

// Enqueue runs in the partition of the job's ID.
func (ns *Partitioned) Enqueue(now time.Time, p EnqueueParams) (EnqueueResult, error) {
	return ns.at(p.Job.ID).Enqueue(now, p)
}

// Claim validates p, then claims from the partitions in rotation
// (claimParts).
func (ns *Partitioned) Claim(now time.Time, p ClaimParams) ([]Claimed, error) {
	if err := ns.first().validateClaim(p); err != nil {
		return nil, err
	}
	return ns.claimParts(now, p), nil
}

// Finish settles each outcome in the partition of its job (finishParts).
func (ns *Partitioned) Finish(now time.Time, p FinishParams) (FinishResult, error) {
	return ns.finishParts(now, p)
}

// Heartbeat validates p, then extends each lease in the partition of its
// job (heartbeatParts).
func (ns *Partitioned) Heartbeat(now time.Time, p HeartbeatParams) ([]LeaseStatus, error) {
	if err := ns.first().validateHeartbeat(p); err != nil {
		return nil, err
	}
	return ns.heartbeatParts(now, p)
}

// ExpireLeases validates p, then sweeps every partition (expireParts).
func (ns *Partitioned) ExpireLeases(now time.Time, p ExpireParams) (ExpireResult, error) {
	l := ns.cfg.Limits
	if err := validateBatch("max", cmp.Or(p.Max, l.MaxBatch), l); err != nil {
		return ExpireResult{}, err
	}
	return ns.expireParts(now, p)
}

// Progress runs in the partition of the job.
func (ns *Partitioned) Progress(now time.Time, p ProgressParams) error {
	return ns.at(p.JobID).Progress(now, p)
}

// CancelWorkflow runs in the partition of the workflow.
func (ns *Partitioned) CancelWorkflow(now time.Time, p CancelWorkflowParams) (CancelResult, error) {
	return ns.at(p.ID).CancelWorkflow(now, p)
}

// CancelJob runs in the partition of the job.
func (ns *Partitioned) CancelJob(now time.Time, p CancelJobParams) (CancelResult, error) {
	return ns.at(p.ID).CancelJob(now, p)
}

// RetryJob runs in the partition of the job.
func (ns *Partitioned) RetryJob(now time.Time, p RetryJobParams) (RetryResult, error) {
	return ns.at(p.ID).RetryJob(now, p)
}

// DeleteJob runs in the partition of the job.
func (ns *Partitioned) DeleteJob(now time.Time, id string) error { return ns.at(id).DeleteJob(now, id) }

// DeleteWorkflow runs in the partition of the workflow.
func (ns *Partitioned) DeleteWorkflow(now time.Time, id string) error {
	return ns.at(id).DeleteWorkflow(now, id)
}

// RerunWorkflow runs in the partition of the workflow.
func (ns *Partitioned) RerunWorkflow(now time.Time, p RerunWorkflowParams) (RerunResult, error) {
	return ns.at(p.ID).RerunWorkflow(now, p)
}

// Signal runs in the partition of the workflow.
func (ns *Partitioned) Signal(now time.Time, p SignalParams) (SignalResult, error) {
	return ns.at(p.Workflow).Signal(now, p)
}

// GetJob reads the partition of the job.
func (ns *Partitioned) GetJob(now time.Time, id string) (weir.Job, error) {
	return ns.at(id).GetJob(now, id)
}

// GetWorkflow reads the partition of the workflow.
func (ns *Partitioned) GetWorkflow(now time.Time, id string) (weir.Workflow, error) {
	return ns.at(id).GetWorkflow(now, id)
}

// ListWorkflows merges the partitions' pages (listWorkflowsParts).
func (ns *Partitioned) ListWorkflows(now time.Time, p weir.ListParams) (weir.WorkflowPage, error) {
	return ns.listWorkflowsParts(now, p)
}

// ListJobs lists the partitions in order (listJobsParts).
func (ns *Partitioned) ListJobs(now time.Time, p weir.ListJobsParams) (weir.JobPage, error) {
	return ns.listJobsParts(now, p)
}

// Queues merges the partitions' queues (queuesParts).
func (ns *Partitioned) Queues(now time.Time) []weir.QueueInfo { return ns.queuesParts(now) }

// QueueContents concatenates the partitions' lists (contentsParts).
func (ns *Partitioned) QueueContents(now time.Time, name string) QueueContents {
	return ns.contentsParts(now, name)
}

// PauseQueue validates the name, then pauses the queue in every partition.
func (ns *Partitioned) PauseQueue(now time.Time, name string) error {
	return ns.setPaused(now, name, true)
}

// ResumeQueue validates the name, then resumes the queue in every
// partition.
func (ns *Partitioned) ResumeQueue(now time.Time, name string) error {
	return ns.setPaused(now, name, false)
}

func (ns *Partitioned) setPaused(now time.Time, name string, paused bool) error {
	if !ValidName(name) {
		return invalid("", "queue", "queue name %q must "+NameRule, name)
	}
	return ns.eachPart(func(s *Model) error { return s.setPaused(now, name, paused) })
}

// LimitQueue validates p, then sets the limit in every partition.
func (ns *Partitioned) LimitQueue(now time.Time, p LimitQueueParams) error {
	if err := ValidateLimitQueue(p); err != nil {
		return err
	}
	return ns.eachPart(func(s *Model) error { return s.LimitQueue(now, p) })
}

// RateLimitQueue validates p, then sets the rate limit in every partition.
func (ns *Partitioned) RateLimitQueue(now time.Time, p RateLimitQueueParams) error {
	if err := ValidateRateLimitQueue(p); err != nil {
		return err
	}
	return ns.eachPart(func(s *Model) error { return s.RateLimitQueue(now, p) })
}

// LimitKeys validates p, then sets the key limit in every partition.
func (ns *Partitioned) LimitKeys(now time.Time, p LimitKeysParams) error {
	if err := ValidateLimitKeys(p); err != nil {
		return err
	}
	return ns.eachPart(func(s *Model) error { return s.LimitKeys(now, p) })
}

// PurgeQueue purges the queue in every partition (purgeParts).
func (ns *Partitioned) PurgeQueue(now time.Time, name string) (PurgeResult, error) {
	return ns.purgeParts(now, name)
}

// PutSchedule runs in the partition of the schedule's name.
func (ns *Partitioned) PutSchedule(now time.Time, p PutScheduleParams) (PutScheduleResult, error) {
	return ns.at(p.Spec.Name).PutSchedule(now, p)
}

// DeleteSchedule runs in the partition of the schedule's name.
func (ns *Partitioned) DeleteSchedule(now time.Time, name string) error {
	return ns.at(name).DeleteSchedule(now, name)
}

// PauseSchedule runs in the partition of the schedule's name.
func (ns *Partitioned) PauseSchedule(now time.Time, name string, paused bool) error {
	return ns.at(name).PauseSchedule(now, name, paused)
}

// GetSchedule reads the partition of the schedule's name.
func (ns *Partitioned) GetSchedule(now time.Time, name string) (Schedule, error) {
	return ns.at(name).GetSchedule(now, name)
}

// FireSchedule runs in the partition of the schedule's name.
func (ns *Partitioned) FireSchedule(now time.Time, p FireScheduleParams) (FireScheduleResult, error) {
	return ns.at(p.Name).FireSchedule(now, p)
}

// Schedules lists every partition's schedules, merged by name, with the
// latest of the partitions' times.
func (ns *Partitioned) Schedules(now time.Time) ScheduleList {
	out := ScheduleList{Schedules: []Schedule{}}
	for _, s := range ns.parts {
		l := s.Schedules(now)
		out.Schedules = append(out.Schedules, l.Schedules...)
		if l.Now.After(out.Now) {
			out.Now = l.Now
		}
	}
	SortSchedules(out.Schedules)
	return out
}

// Stats merges the partitions' stats as Queues merges their queues:
// counts summed, the earliest head ready-at, the latest time (MergeStats).
func (ns *Partitioned) Stats(now time.Time) weir.Stats {
	parts := make([]weir.Stats, len(ns.parts))
	for i, s := range ns.parts {
		parts[i] = s.Stats(now)
	}
	return MergeStats(parts)
}

// NextDue is the earliest of the partitions' NextDue.
func (ns *Partitioned) NextDue(queues []string) time.Time {
	var next time.Time
	for _, s := range ns.parts {
		if t := s.NextDue(queues); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// TakeEvents takes every partition's events, merged (MergeEvents).
func (ns *Partitioned) TakeEvents() []weir.Event {
	parts := make([][]weir.Event, len(ns.parts))
	for i, s := range ns.parts {
		parts[i] = s.TakeEvents()
	}
	return MergeEvents(parts)
}

// SetEventsOff switches every partition's events off (true) or on.
func (ns *Partitioned) SetEventsOff(off bool) {
	for _, s := range ns.parts {
		s.SetEventsOff(off)
	}
}

// TakeSweepStops takes every partition's sweep stops, in partition order.
func (ns *Partitioned) TakeSweepStops() []string {
	var out []string
	for _, s := range ns.parts {
		out = append(out, s.TakeSweepStops()...)
	}
	return out
}

// claimParts is a claim in a namespace of partitions: the c-th one (from
// 0) visits partitions c mod P, c+1 mod P, ... each once, claiming in each
// as many as still missing from p.Max, until it has p.Max. p is valid.
func (ns *Partitioned) claimParts(now time.Time, p ClaimParams) []Claimed {
	n := len(ns.parts)
	first := int(ns.claims % uint64(n))
	ns.claims++
	var out []Claimed
	for i := 0; i < n && len(out) < p.Max; i++ {
		s := ns.parts[(first+i)%n]
		t := s.tick(now)
		q := p
		q.Max = p.Max - len(out)
		out = append(out, s.claim(t, q)...)
	}
	return out
}

// finishParts settles each outcome in the partition of its job (the whole
// call checked first, in every partition it reaches, before any outcome
// is settled); the claim runs in the partition of the first outcome,
// after that partition's outcomes, or, with no outcome, as a claim call
// of its own (claimParts).
func (ns *Partitioned) finishParts(now time.Time, p FinishParams) (FinishResult, error) {
	if err := ns.first().validateFinish(p); err != nil {
		return FinishResult{}, err
	}
	if err := CheckFinishAdds(p, len(ns.parts)); err != nil {
		return FinishResult{}, err
	}
	if len(p.Outcomes) == 0 {
		// Settled empty, not nil: as with one partition
		return FinishResult{Settled: []Settled{}, Claimed: ns.claimParts(now, *p.Claim)}, nil
	}
	groups, order := ns.groupBy(len(p.Outcomes), func(i int) string { return p.Outcomes[i].JobID })
	for _, g := range order {
		// the tasks added, checked against running jobs only (which no
		// clock removes): before any partition is written
		outs := make([]Outcome, len(groups[g]))
		for k, i := range groups[g] {
			outs[k] = p.Outcomes[i]
		}
		if err := ns.parts[g].addCheck(outs); err != nil {
			return FinishResult{}, err
		}
	}
	claimIn := Partition(p.Outcomes[0].JobID, len(ns.parts))
	res := FinishResult{Settled: make([]Settled, len(p.Outcomes))}
	for _, g := range order {
		s := ns.parts[g]
		t := s.tick(now)
		for _, i := range groups[g] {
			res.Settled[i] = s.finish(t, p.Outcomes[i])
		}
		if p.Claim != nil && g == claimIn {
			res.Claimed = s.claim(t, *p.Claim)
		}
	}
	return res, nil
}

// groupBy groups the indexes [0, n) by the partition of id(i), each group
// in index order; order lists the partitions met, ascending.
func (ns *Partitioned) groupBy(n int, id func(i int) string) (groups map[int][]int, order []int) {
	groups = map[int][]int{}
	for i := range n {
		g := Partition(id(i), len(ns.parts))
		if groups[g] == nil {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	slices.Sort(order)
	return groups, order
}

// heartbeatParts extends each lease in the partition of its job; the
// statuses come back in the order asked. p is valid.
func (ns *Partitioned) heartbeatParts(now time.Time, p HeartbeatParams) ([]LeaseStatus, error) {
	out := make([]LeaseStatus, len(p.Leases))
	groups, order := ns.groupBy(len(p.Leases), func(i int) string { return p.Leases[i].JobID })
	for _, g := range order {
		q := HeartbeatParams{Extend: p.Extend, Leases: make([]LeaseRef, len(groups[g]))}
		for k, i := range groups[g] {
			q.Leases[k] = p.Leases[i]
		}
		st, err := ns.parts[g].Heartbeat(now, q)
		if err != nil {
			return nil, err // not reached: p was checked
		}
		for k, i := range groups[g] {
			out[i] = st[k]
		}
	}
	return out, nil
}

// expireParts sweeps every partition in order, the results concatenated.
// p is valid.
func (ns *Partitioned) expireParts(now time.Time, p ExpireParams) (ExpireResult, error) {
	var res ExpireResult
	for _, s := range ns.parts {
		r, err := s.ExpireLeases(now, p)
		if err != nil {
			return res, err // not reached: p was checked
		}
		res.Expired = append(res.Expired, r.Expired...)
		res.Due = append(res.Due, r.Due...)
	}
	return res, nil
}

// eachPart runs f on every partition in order: a queue setting, checked
// by the caller first, so that none fails.
func (ns *Partitioned) eachPart(f func(s *Model) error) error {
	for _, s := range ns.parts {
		if err := f(s); err != nil {
			return err
		}
	}
	return nil
}

// purgeParts purges the queue in every partition in order.
func (ns *Partitioned) purgeParts(now time.Time, name string) (PurgeResult, error) {
	if !ValidName(name) {
		return PurgeResult{}, invalid("", "queue", "queue name %q must "+NameRule, name)
	}
	var res PurgeResult
	for _, s := range ns.parts {
		r, err := s.PurgeQueue(now, name)
		if err != nil {
			return res, err // not reached: name was checked
		}
		res.Purged = append(res.Purged, r.Purged...)
		res.Pushed = append(res.Pushed, r.Pushed...)
	}
	return res, nil
}

// queuesParts merges the partitions' queues: one entry per name, counts
// summed, every other field from the lowest partition that knows it.
func (ns *Partitioned) queuesParts(now time.Time) []weir.QueueInfo {
	var out []weir.QueueInfo
	at := map[string]int{}
	for _, s := range ns.parts {
		for _, q := range s.Queues(now) {
			i, ok := at[q.Name]
			if !ok {
				at[q.Name] = len(out)
				out = append(out, q)
				continue
			}
			out[i].Ready += q.Ready
			out[i].Delayed += q.Delayed
			out[i].Running += q.Running
		}
	}
	slices.SortFunc(out, func(a, b weir.QueueInfo) int { return strings.Compare(a.Name, b.Name) })
	if out == nil {
		out = []weir.QueueInfo{}
	}
	return out
}

// contentsParts concatenates the partitions' lists in partition order.
func (ns *Partitioned) contentsParts(now time.Time, name string) QueueContents {
	var c QueueContents
	for _, s := range ns.parts {
		sc := s.QueueContents(now, name)
		c.Ready = append(c.Ready, sc.Ready...)
		c.Delayed = append(c.Delayed, sc.Delayed...)
		c.Running = append(c.Running, sc.Running...)
	}
	return c
}

// listWorkflowsParts merges the partitions' pages, newest first, with the
// one-partition cursor: each partition's page of Limit after the cursor
// holds every workflow of it that can be on the merged page, and says
// whether it holds more.
func (ns *Partitioned) listWorkflowsParts(now time.Time, p weir.ListParams) (weir.WorkflowPage, error) {
	type entry struct {
		w       weir.Workflow
		created int64
	}
	if Filtered(p) {
		limit := p.Limit
		if limit == 0 {
			limit = 100
		}
		pages := make([]weir.WorkflowPage, 0, len(ns.parts))
		for _, s := range ns.parts {
			pg, err := s.ListWorkflows(now, p)
			if err != nil {
				return weir.WorkflowPage{}, err
			}
			pages = append(pages, pg)
		}
		if p.IDPrefix != "" {
			return MergeByID(pages, limit), nil
		}
		return MergeFiltered(pages, limit), nil
	}
	var all []entry
	more := false // a partition holds more than its page
	for _, s := range ns.parts {
		pg, err := s.ListWorkflows(now, p)
		if err != nil {
			return weir.WorkflowPage{}, err
		}
		for _, w := range pg.Workflows {
			all = append(all, entry{w, s.workflows[w.ID].created})
		}
		more = more || pg.NextCursor != ""
	}
	slices.SortFunc(all, func(x, y entry) int {
		return cmp.Or(-cmp.Compare(x.created, y.created), -strings.Compare(x.w.ID, y.w.ID))
	})
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	var page weir.WorkflowPage
	for _, e := range all[:min(limit, len(all))] {
		page.Workflows = append(page.Workflows, e.w)
	}
	// more follow the page when the partitions gave more than a page, or
	// one of them (which then gave a whole page) holds more
	if len(all) > limit || more {
		last := all[limit-1]
		page.NextCursor = strconv.FormatInt(last.created, 10) + ":" + last.w.ID
	}
	return page, nil
}

// listJobsParts lists the partitions in order, each one's jobs in its
// one-partition order; the cursor is "<p>|<cursor in p>". Next is empty
// exactly when no job follows the page; when the page ends with the last
// job of its partition, it is "<q>|" of the next partition q that holds
// one.
func (ns *Partitioned) listJobsParts(now time.Time, p weir.ListJobsParams) (weir.JobPage, error) {
	limit, err := ValidateListJobs(p)
	if err != nil {
		return weir.JobPage{}, err
	}
	from, cursor := 0, ""
	if p.Cursor != "" {
		ps, c, ok := strings.Cut(p.Cursor, "|")
		n, err := strconv.Atoi(ps)
		if !ok || err != nil || n < 0 || n >= len(ns.parts) || strconv.Itoa(n) != ps {
			return weir.JobPage{}, badCursor(p.Cursor)
		}
		from, cursor = n, c
	}
	var page weir.JobPage
	for g := from; g < len(ns.parts); g++ {
		s := ns.parts[g]
		q := p
		q.Cursor = ""
		if g == from {
			q.Cursor = cursor
		}
		need := limit - len(page.Jobs)
		if need == 0 {
			q.Limit = 1
			pg, err := s.ListJobs(now, q)
			if err != nil {
				return weir.JobPage{}, err
			}
			if len(pg.Jobs) > 0 {
				page.NextCursor = strconv.Itoa(g) + "|"
				break
			}
			continue
		}
		q.Limit = need
		pg, err := s.ListJobs(now, q)
		if err != nil {
			return weir.JobPage{}, err
		}
		page.Jobs = append(page.Jobs, pg.Jobs...)
		if pg.NextCursor != "" {
			page.NextCursor = strconv.Itoa(g) + "|" + pg.NextCursor
			break
		}
	}
	return page, nil
}

// MergeEvents merges the partitions' events, each list in its partition's
// order, into the order of spec/partitions.md: by event time, then
// partition, then order in the partition.
func MergeEvents(parts [][]weir.Event) []weir.Event {
	var all []weir.Event
	for _, es := range parts {
		all = append(all, es...)
	}
	slices.SortStableFunc(all, func(a, b weir.Event) int { return a.Time.Compare(b.Time) })
	return all
}
