package engine

import (
	"fmt"
	"github.com/weirflow/weir"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Model is the reference state machine of one partition: a namespace's
// workflows, jobs and queues in memory (those of one partition of it, in a
// namespace of several), changed only by its transition methods. It is not
// safe for concurrent use and not durable; memstore wraps it as a Store.
//
// Every transition takes the current time. Time never goes backwards inside
// a Model, and does not stand still when the time given steps back: see
// clock. Reads move no clock. Times are kept in whole milliseconds, as the
// Redis store keeps them.
//
// A Model is always one partition: a namespace of P > 1 partitions
// (spec/partitions.md) is a Partitioned, which holds P Models and routes
// every call to them (model_partitions.go). Both are a Namespace.
type Model struct {
	cfg        Config
	now        int64 // time of the last write, unix ms
	off        int64 // clock offset, ms (clock)
	pushSeq    int64 // FIFO order among equal priorities
	leaseSeq   int64 // lease tokens
	jobs       map[string]*job
	sweepStops []string // running jobs deadlines asked to stop (TakeSweepStops)
	workflows  map[string]*workflow
	queues     map[string]*queue
	expiry     orderedSet            // ended records by expiry time: "j:"+id or "w:"+id
	unique     map[string]uniqueLock // by UniqueDigest
	schedules  map[string]*Schedule  // model_schedule.go; nil until the first put
	events     []weir.Event          // model_events.go: not yet taken
	eventsOff  bool

	// idParts is, in a partition of a Partitioned, the partition count of
	// its namespace, which names schedule ticks (TickIDIn); 0 in a
	// namespace of one partition.
	idParts int
}

// uniqueLock is a unique key held by a job: until it ends (until 0) or
// until a time (ms).
type uniqueLock struct {
	job   string
	until int64
}

type job struct {
	id          string
	queue       string
	payload     []byte
	priority    int
	maxAttempts int
	maxExpiries int   // resolved: 0 is none
	expiries    int   // lease expiries that cost no attempt
	backoff     int64 // ms
	timeout     int64 // ms
	state       weir.State
	attempt     int
	runAt       int64 // due time while delayed, else 0
	token       string
	deadline    int64
	cancelReq   bool
	result      []byte
	err         string
	created     int64
	ended       int64
	expires     int64
	hash        string // plain jobs: spec fingerprint
	unique      string // plain jobs: UniqueDigest
	unlisted    bool   // a task CancelWorkflow ended before it started: in no job list
	key         string // concurrency key; "" for none (model_keys.go)
	depFailed   bool   // an OnFailure task: a dependency ended not completed
	addedBy     string // a task added at run time: the task whose finish added it

	wf   *workflow // nil for a plain job
	task int       // index of the task in the plan
	undo bool

	last *lastFinish

	progress    *weir.Progress // model_progress.go
	checkpoint  []byte
	signal      OutcomeKind // a signal task: how the signal that ended it ended it
	traceParent string      // plain jobs: EnqueueParams.TraceParent
	readyAt     int64       // ms: when its last push made it ready, or its due time
	promotedAt  int64       // ms: the end of the dependency whose end made the last push, or 0

	// the current (or last) attempt, model_attempts.go: cur is set from
	// its claim until it moves into history (an attempt that ended
	// without ending the job by a finish)
	cur     bool
	worker  string
	started int64
	history []weir.AttemptRecord
}

// lastFinish remembers a job's last finish, so a repeat returns the same.
type lastFinish struct {
	token   string
	settled Settled
}

type queue struct {
	name    string
	paused  bool
	limit   int        // most leased at once; 0: none
	rate    rateLimit  // starts per period (model_rate.go)
	ready   orderedSet // (priority, pushSeq)
	delayed orderedSet // (due, 0, id)
	active  orderedSet // (deadline, 0, id)
	keys    *keyed     // concurrency keys (model_keys.go); nil until used
}

// NewModel returns an empty model of one partition. Zero limits are
// replaced by defaults. It panics when cfg asks for more than one
// partition: NewNamespace makes a namespace of any partition count.
func NewModel(cfg Config) *Model {
	if n := cfg.PartitionCount(); n > 1 {
		panic(fmt.Sprintf("engine.NewModel: a Model is one partition, and Config.Partitions is %d: use NewNamespace or NewPartitioned", n))
	}
	if cfg.Limits == (weir.Limits{}) {
		cfg.Limits = weir.DefaultLimits()
	}
	return &Model{
		cfg:       cfg,
		jobs:      map[string]*job{},
		workflows: map[string]*workflow{},
		queues:    map[string]*queue{},
		unique:    map[string]uniqueLock{},
	}
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// StoreTime is the clock rule every store follows (spec/states.md, Time
// after a step back): a call whose clock source reads source (unix ms), in
// a store whose last write ran at last with clock offset off, runs at now,
// and a write leaves the offset newOff. Time is the source's plus the
// offset, never before last: a source behind last (its clock stepped back,
// or a failover to a server whose clock is behind) raises the offset, so
// that time goes on from last at the source's pace instead of standing
// still; a source that has caught up with last again (a step forward, or
// no write for longer than the offset) drops the offset.
func StoreTime(source, last, off int64) (now, newOff int64) {
	switch {
	case off > 0 && source >= last:
		return source, 0
	case source+off < last:
		return last, last - source
	}
	return source + off, off
}

// clock is the time a transition given now runs at and the offset it
// leaves.
func (m *Model) clock(now time.Time) (t, off int64) {
	return StoreTime(now.UnixMilli(), m.now, m.off)
}

// tick moves the model's clock to the time a write given now runs at and
// removes records whose retention passed by then.
func (m *Model) tick(now time.Time) int64 {
	m.now, m.off = m.clock(now)
	m.expire(m.now)
	return m.now
}

// peek is the time a read given now runs at: a read moves no clock (the
// Redis store's reads write nothing). Records whose retention passed by
// then are removed, as the next write would remove them.
func (m *Model) peek(now time.Time) int64 {
	t, _ := m.clock(now)
	m.expire(t)
	return t
}

// Now is the time of the model's last write (zero before the first).
func (m *Model) Now() time.Time {
	return toTime(m.now)
}

// expire removes the records whose retention passed by t.
func (m *Model) expire(t int64) {
	for {
		it, ok := m.expiry.min()
		if !ok || it.a > t {
			break
		}
		m.expiry.popMin()
		kind, id, _ := strings.Cut(it.id, ":")
		if kind == "w" {
			m.removeWorkflow(m.workflows[id])
		} else {
			delete(m.jobs, id)
		}
	}
}

// removeWorkflow removes workflow w and its task and undo jobs.
func (m *Model) removeWorkflow(w *workflow) {
	delete(m.workflows, w.id)
	for _, t := range w.tasks {
		delete(m.jobs, t.id)
	}
	for _, u := range w.undos {
		if u != nil {
			delete(m.jobs, u.id)
		}
	}
}

func (m *Model) queue(name string) *queue {
	q := m.queues[name]
	if q == nil {
		q = &queue{name: name}
		m.queues[name] = q
	}
	return q
}

// push puts a job in its queue: ready now, or delayed until runAt.
func (m *Model) push(j *job, now int64, fx *effects) {
	// a job queued again after an attempt has its retried event from its
	// caller; a due delayed job none (it was queued already)
	if j.state != weir.Running && j.state != weir.Queued {
		m.emit(weir.EventQueued, j.id, 0, "", now)
	}
	j.state = weir.Queued
	j.readyAt, j.promotedAt = max(j.runAt, now), 0
	q := m.queue(j.queue)
	if j.runAt > now {
		q.delayed.add(j.id, j.runAt, 0)
		return
	}
	j.runAt = 0
	m.pushSeq++
	if j.key != "" {
		q.pushKeyed(j, m.pushSeq)
	} else {
		q.ready.add(j.id, int64(j.priority), m.pushSeq)
	}
	fx.pushed = append(fx.pushed, Pushed{JobID: j.id, Queue: j.queue})
}

// unqueue takes a queued job (or an open signal task) out of its queue.
func (m *Model) unqueue(j *job) {
	if q := m.queues[j.queue]; q != nil {
		if !q.ready.remove(j.id) && !q.unqueueKeyed(j) {
			q.delayed.remove(j.id)
		}
	}
}

// effects collects what one transition did, in order.
type effects struct {
	pushed    []Pushed
	cancelled []string
	wfEnded   bool
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func toTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func (m *Model) cutError(s string) string {
	if len(s) > m.cfg.Limits.MaxError {
		return s[:m.cfg.Limits.MaxError]
	}
	return s
}

// backoffDelay is the delay before retry n (n = attempts made so far).
func (m *Model) backoffDelay(j *job) int64 {
	d := j.backoff
	limit := ms(m.cfg.Limits.MaxBackoff)
	for i := 1; i < j.attempt-j.expiries && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

func (j *job) snapshot() weir.Job {
	s := weir.Job{
		ID: j.id, Queue: j.queue, Undo: j.undo,
		Payload: slices.Clone(j.payload), Priority: j.priority,
		MaxAttempts: j.maxAttempts, MaxExpiries: j.maxExpiries, Expiries: j.expiries, Backoff: time.Duration(j.backoff) * time.Millisecond,
		Timeout: time.Duration(j.timeout) * time.Millisecond,
		State:   j.state, Attempt: j.attempt, RunAt: toTime(j.runAt),
		CancelRequested: j.cancelReq, Result: slices.Clone(j.result), Error: j.err,
		CreatedAt: toTime(j.created), EndedAt: toTime(j.ended), ExpiresAt: toTime(j.expires),
		Progress: j.progressOf(),
		Key:      j.key,
		Attempts: j.attempts(),
	}
	if n := len(s.Attempts); n > 0 {
		s.Worker = s.Attempts[n-1].Worker
	}
	if j.wf != nil {
		s.Workflow = j.wf.id
		s.Task = j.wf.c.plan.Tasks[j.task].Name
		s.ExpiresAt = toTime(j.wf.expires)
	}
	if j.state == weir.Running {
		s.Lease = &weir.Lease{Token: j.token, Deadline: toTime(j.deadline)}
	}
	return s
}

// GetJob returns a job's snapshot, or ErrNotFound.
func (m *Model) GetJob(now time.Time, id string) (weir.Job, error) {
	m.peek(now)
	j := m.jobs[id]
	if j == nil {
		return weir.Job{}, wrap(weir.ErrNotFound, "job %q", id)
	}
	return j.snapshot(), nil
}

// GetWorkflow returns a workflow's snapshot, or ErrNotFound.
func (m *Model) GetWorkflow(now time.Time, id string) (weir.Workflow, error) {
	m.peek(now)
	w := m.workflows[id]
	if w == nil {
		return weir.Workflow{}, wrap(weir.ErrNotFound, "workflow %q", id)
	}
	return w.snapshot(), nil
}

// ListWorkflows pages through workflows, newest first (by creation time,
// then by ID, both descending). The cursor is "<created ms>:<id>" of the last
// workflow of the previous page. With IDPrefix the listing is in ID order
// (listByID).
func (m *Model) ListWorkflows(now time.Time, p weir.ListParams) (weir.WorkflowPage, error) {
	m.peek(now)
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 {
		return weir.WorkflowPage{}, invalid("", "limit", "%d is outside [1, 1000]", p.Limit)
	}
	if p.State != "" && !validWorkflowState(p.State) {
		return weir.WorkflowPage{}, invalid("", "state", "unknown workflow state %q", p.State)
	}
	if err := ValidateListFilter(p); err != nil {
		return weir.WorkflowPage{}, err
	}
	if p.IDPrefix != "" {
		return m.listByID(p, limit)
	}
	var after *workflow
	if p.Cursor != "" {
		c, id, ok := strings.Cut(p.Cursor, ":")
		created, err := strconv.ParseInt(c, 10, 64)
		if !ok || err != nil || !ValidID(id) {
			return weir.WorkflowPage{}, invalid("", "cursor", "%q is not a cursor this store returned", p.Cursor)
		}
		after = &workflow{id: id, created: created}
	}
	all := make([]*workflow, 0, len(m.workflows))
	for _, w := range m.workflows {
		if p.State != "" && w.state != p.State {
			continue
		}
		if after != nil && !newer(after, w) {
			continue
		}
		all = append(all, w)
	}
	slices.SortFunc(all, func(x, y *workflow) int {
		if newer(x, y) {
			return -1
		}
		return 1
	})
	var page weir.WorkflowPage
	if Filtered(p) {
		return listFiltered(all, p, limit), nil
	}
	for i, w := range all {
		if i == limit {
			last := all[i-1]
			page.NextCursor = strconv.FormatInt(last.created, 10) + ":" + last.id
			break
		}
		page.Workflows = append(page.Workflows, w.snapshot())
	}
	return page, nil
}

// listFiltered is a filtered listing's page of the candidates all
// (newest first, after the cursor): it examines them in order until the
// page holds limit workflows or weir.ListScan were examined; the next
// cursor is the last one examined, when a candidate follows it
// (spec/states.md, Listing workflows).
func listFiltered(all []*workflow, p weir.ListParams, limit int) weir.WorkflowPage {
	var page weir.WorkflowPage
	n := 0
	for n < len(all) && n < weir.ListScan && len(page.Workflows) < limit {
		w := all[n]
		n++
		if MatchesFilter(p, w.name, w.labels) {
			page.Workflows = append(page.Workflows, w.snapshot())
		}
	}
	if n < len(all) {
		last := all[n-1]
		page.NextCursor = strconv.FormatInt(last.created, 10) + ":" + last.id
	}
	return page
}

// listByID is a listing with IDPrefix: the workflows whose ID starts with
// it, in ID order (bytes, ascending), after the cursor (the previous
// page's last ID), examined as a filtered listing examines them
// (listFiltered, with State tested on each one examined): the Redis store
// reads its partition's index of IDs the same way, so that a call reads
// only workflows of the prefix, at most weir.ListScan of them.
func (m *Model) listByID(p weir.ListParams, limit int) (weir.WorkflowPage, error) {
	if p.Cursor != "" && !ValidID(p.Cursor) {
		return weir.WorkflowPage{}, invalid("", "cursor", "%q is not a cursor this store returned", p.Cursor)
	}
	var all []*workflow
	for id, w := range m.workflows {
		if strings.HasPrefix(id, p.IDPrefix) && id > p.Cursor {
			all = append(all, w)
		}
	}
	slices.SortFunc(all, func(x, y *workflow) int { return strings.Compare(x.id, y.id) })
	var page weir.WorkflowPage
	n := 0
	for n < len(all) && n < weir.ListScan && len(page.Workflows) < limit {
		w := all[n]
		n++
		if (p.State == "" || w.state == p.State) && MatchesFilter(p, w.name, w.labels) {
			page.Workflows = append(page.Workflows, w.snapshot())
		}
	}
	if n < len(all) {
		page.NextCursor = all[n-1].id
	}
	return page, nil
}

// newer reports whether x lists before y.
func newer(x, y *workflow) bool {
	if x.created != y.created {
		return x.created > y.created
	}
	return x.id > y.id
}

func validWorkflowState(s weir.WorkflowState) bool {
	switch s {
	case weir.WorkflowRunning, weir.WorkflowCompleted, weir.WorkflowFailed, weir.WorkflowCancelled,
		weir.WorkflowCompensating, weir.WorkflowCompensated, weir.WorkflowCompensationFailed:
		return true
	}
	return false
}

// Queues lists every queue the model knows, by name.
func (m *Model) Queues(now time.Time) []weir.QueueInfo {
	m.peek(now)
	names := make([]string, 0, len(m.queues))
	for n := range m.queues {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]weir.QueueInfo, len(names))
	for i, n := range names {
		q := m.queues[n]
		out[i] = weir.QueueInfo{Name: n, Paused: q.paused, Ready: q.ready.Len() + q.keyedReady(), Delayed: q.delayed.Len(), Running: q.active.Len(), Concurrency: q.limit, KeyConcurrency: q.keyLimit()}
		out[i].RateLimit, out[i].RatePeriod = q.rate.info()
	}
	return out
}

// QueueContents is the order a queue will hand out its jobs.
type QueueContents struct {
	// Ready job IDs: the unkeyed ones in claim order, then the keyed ones
	// by priority and push order (spec/states.md, Concurrency keys).
	Ready []string
	// Delayed job IDs in due order.
	Delayed []string
	// Running job IDs in lease-deadline order.
	Running []string
}

// QueueContents returns what a queue holds (empty for an unknown queue).
func (m *Model) QueueContents(now time.Time, name string) QueueContents {
	m.peek(now)
	q := m.queues[name]
	if q == nil {
		return QueueContents{}
	}
	ids := func(s *orderedSet) []string {
		var out []string
		for _, it := range s.sorted() {
			out = append(out, it.id)
		}
		return out
	}
	ready := ids(&q.ready)
	for _, it := range q.keyedSorted() {
		ready = append(ready, it.id)
	}
	return QueueContents{Ready: ready, Delayed: ids(&q.delayed), Running: ids(&q.active)}
}

// PauseQueue stops claims from a queue.
func (m *Model) PauseQueue(now time.Time, name string) error { return m.setPaused(now, name, true) }

// ResumeQueue lets claims take from a queue again.
func (m *Model) ResumeQueue(now time.Time, name string) error { return m.setPaused(now, name, false) }

// LimitQueue sets how many jobs of a queue may be leased at once.
func (m *Model) LimitQueue(now time.Time, p LimitQueueParams) error {
	if err := ValidateLimitQueue(p); err != nil {
		return err
	}
	m.tick(now)
	m.queue(p.Queue).limit = p.Concurrency
	return nil
}

// ValidateLimitQueue checks LimitQueueParams: a valid queue name, a limit
// in [0, MaxConcurrency].
func ValidateLimitQueue(p LimitQueueParams) error {
	if !ValidName(p.Queue) {
		return invalid("", "queue", "queue name %q must "+NameRule, p.Queue)
	}
	if p.Concurrency < 0 || p.Concurrency > MaxConcurrency {
		return invalid("", "concurrency", "%d is outside [0, %d]", p.Concurrency, MaxConcurrency)
	}
	return nil
}

func (m *Model) setPaused(now time.Time, name string, paused bool) error {
	m.tick(now)
	if !ValidName(name) {
		return invalid("", "queue", "queue name %q must "+NameRule, name)
	}
	m.queue(name).paused = paused
	return nil
}
