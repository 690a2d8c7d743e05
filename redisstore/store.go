package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

var _ engine.Store = (*Store)(nil)

// Options configures a Store.
type Options struct {
	// Namespace isolates one engine instance inside a Redis; it must be a
	// name (engine.ValidName: ^[A-Za-z0-9_.-]{1,64}$, not . or ..). Empty
	// means "default".
	Namespace string
	// Config gives the limits, the retention and the partitions. A Config
	// whose fields other than Partitions are zero means engine.DefaultConfig()
	// with those partitions; zero Limits alone mean weir.DefaultLimits().
	// Every store of a namespace must use the same Config.
	//
	// Config.Partitions is the namespace's number of partitions
	// (spec/partitions.md), at most engine.MaxPartitions, kept in Redis when
	// a namespace of several is first written: 0 takes the namespace's count
	// at the first call (1 for a namespace not written yet); any other count
	// that differs from the namespace's is ErrInvalid at the first call.
	// It is the one partitions setting, as for memstore.
	Config engine.Config
	// Clock, for tests only, replaces the server's clock: each call passes
	// Clock() to its script as "now" (see spec/scripts.md, "Test clock").
	// With it set, workflows get no Redis TTL; ended records are removed by
	// the scripts' expiry sweep (as plain jobs are with either clock).
	Clock func() time.Time
	// Path chooses how transitions run on the server: PathAuto (the zero
	// value) uses functions where the server has them, else scripts.
	Path CallPath
	// Durable, when its Replicas > 0, acknowledges a transition only once
	// that many replicas have it (Durable, ErrNotReplicated).
	Durable Durable
	// AllowUnsafeServer runs the store on a server that weir refuses
	// (ErrUnsafeServer, docs/compatibility.md: KeyDB, Redis before 6.2). Without it the
	// store asks the server what it is (one INFO) at its first call and
	// refuses such a server with every call, writing nothing. With it, the
	// defects docs/compatibility.md names are the caller's risk.
	AllowUnsafeServer bool
}

// Store is an engine.Store on Redis. It is safe for concurrent use; it
// holds no connection of its own beyond the client's, and starts no
// goroutine but those of a blocking claim over several partitions, which
// end before it returns.
//
// A Store runs the P partitions of its namespace (spec/partitions.md):
// each is a part, the one-partition engine on its own keys, and Store
// routes each call to the partition of its ID, or to every partition.
type Store struct {
	// part is partition 0 of the one-partition layout: the store's only
	// partition when the namespace has one (its hot path calls it
	// directly), and what tests of one partition look into.
	*part
	client redis.UniversalClient
	ns     string
	opts   Options
	// want is Config.Partitions as asked: 0 takes the namespace's.
	want int
	// parts is set by the first call that reaches Redis (layout): the
	// namespace's partitions, checked against what is kept in Redis.
	parts  atomic.Pointer[[]*part]
	initMu sync.Mutex
	// claims counts Claim calls (claim rotation, spec/partitions.md).
	claims atomic.Uint64
}

// part is one partition of a namespace: the whole one-partition engine.
type part struct {
	rdb   redis.UniversalClient
	keys  keys
	cfg   engine.Config
	clock func() time.Time
	// prefixArg (the one key of every call) and limitArgs (the ARGV after
	// "now") are boxed once so that a call does not box them again.
	prefixArg any
	limitArgs []any
	path      atomic.Int32 // a CallPath
	fixedPath bool         // Options.Path chose it: no fallback
	durable   Durable
	// drainCalls counts drain calls (drain.go), for tests
	drainCalls atomic.Int64
}

// New returns a Store over client for opts.Namespace. It does no I/O: the
// namespace's partition count is read (and, for a new namespace of
// several partitions, written) at the store's first call.
func New(client redis.UniversalClient, opts Options) (*Store, error) {
	ns := opts.Namespace
	if ns == "" {
		ns = "default"
	}
	k, err := newKeys(ns, 0)
	if err != nil {
		return nil, err
	}
	cfg := opts.Config
	if cfg == (engine.Config{Partitions: cfg.Partitions}) {
		n := cfg.Partitions
		cfg = engine.DefaultConfig()
		cfg.Partitions = n
	}
	if err := cfg.ValidatePartitions(); err != nil {
		return nil, err
	}
	if cfg.Limits == (weir.Limits{}) {
		cfg.Limits = weir.DefaultLimits()
	}
	if cfg.Retention < 0 {
		return nil, fmt.Errorf("%w: negative retention", weir.ErrInvalid)
	}
	if opts.Path < PathAuto || opts.Path > PathScripts {
		return nil, fmt.Errorf("%w: unknown call path %d", weir.ErrInvalid, opts.Path)
	}
	if err := opts.Durable.validate(client); err != nil {
		return nil, err
	}
	st := &Store{client: client, ns: ns, opts: opts, want: cfg.Partitions}
	st.part = newPart(client, k, cfg, opts)
	return st, nil
}

// newPart returns the partition whose keys are k.
func newPart(client redis.UniversalClient, k keys, cfg engine.Config, opts Options) *part {
	p := &part{rdb: client, keys: k, cfg: cfg, clock: opts.Clock, prefixArg: k.prefix, durable: opts.Durable}
	p.path.Store(int32(opts.Path))
	p.fixedPath = opts.Path != PathAuto
	p.limitArgs = []any{cfg.Retention.Milliseconds(), cfg.Limits.MaxBackoff.Milliseconds()}
	return p
}

// Config returns the store's configuration. Its Partitions is the
// namespace's count once the store made its first call; before, the count
// it was opened with.
func (s *Store) Config() engine.Config {
	c := s.part.cfg
	if ps := s.parts.Load(); ps != nil && len(*ps) > 1 {
		c.Partitions = len(*ps)
	}
	return c
}

// Partitions returns the namespace's partition count, read at the first
// call (as every call does).
func (s *Store) Partitions(ctx context.Context) (int, error) {
	ps, err := s.layout(ctx)
	return len(ps), err
}

// Submit implements engine.Store.
func (s *Store) Submit(ctx context.Context, p engine.SubmitParams) (engine.SubmitResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.SubmitResult{}, err
	}
	return at(ps, p.Plan.ID).Submit(ctx, p)
}

// Enqueue implements engine.Store.
func (s *Store) Enqueue(ctx context.Context, p engine.EnqueueParams) (engine.EnqueueResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.EnqueueResult{}, err
	}
	return at(ps, p.Job.ID).Enqueue(ctx, p)
}

// Progress implements engine.Store.
func (s *Store) Progress(ctx context.Context, p engine.ProgressParams) error {
	ps, err := s.layout(ctx)
	if err != nil {
		return err
	}
	return at(ps, p.JobID).Progress(ctx, p)
}

// Signal implements engine.Signaller.
func (s *Store) Signal(ctx context.Context, p engine.SignalParams) (engine.SignalResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.SignalResult{}, err
	}
	return at(ps, p.Workflow).Signal(ctx, p)
}

// CancelWorkflow implements engine.Store.
func (s *Store) CancelWorkflow(ctx context.Context, p engine.CancelWorkflowParams) (engine.CancelResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.CancelResult{}, err
	}
	return at(ps, p.ID).CancelWorkflow(ctx, p)
}

// CancelJob implements engine.Store.
func (s *Store) CancelJob(ctx context.Context, p engine.CancelJobParams) (engine.CancelResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.CancelResult{}, err
	}
	return at(ps, p.ID).CancelJob(ctx, p)
}

// RetryJob implements engine.Store.
func (s *Store) RetryJob(ctx context.Context, p engine.RetryJobParams) (engine.RetryResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.RetryResult{}, err
	}
	return at(ps, p.ID).RetryJob(ctx, p)
}

// DeleteJob implements engine.Store.
func (s *Store) DeleteJob(ctx context.Context, id string) error {
	ps, err := s.layout(ctx)
	if err != nil {
		return err
	}
	return at(ps, id).DeleteJob(ctx, id)
}

// DeleteWorkflow implements engine.Store.
func (s *Store) DeleteWorkflow(ctx context.Context, id string) error {
	ps, err := s.layout(ctx)
	if err != nil {
		return err
	}
	return at(ps, id).DeleteWorkflow(ctx, id)
}

// RerunWorkflow implements engine.Store.
func (s *Store) RerunWorkflow(ctx context.Context, p engine.RerunWorkflowParams) (engine.RerunResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.RerunResult{}, err
	}
	return at(ps, p.ID).RerunWorkflow(ctx, p)
}

// GetWorkflow implements engine.Store.
func (s *Store) GetWorkflow(ctx context.Context, id string) (weir.Workflow, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return weir.Workflow{}, err
	}
	return at(ps, id).GetWorkflow(ctx, id)
}

// GetJob implements engine.Store.
func (s *Store) GetJob(ctx context.Context, id string) (weir.Job, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return weir.Job{}, err
	}
	return at(ps, id).GetJob(ctx, id)
}

// AwaitWorkflow implements engine.Store (await.go), in the workflow's
// partition.
func (s *Store) AwaitWorkflow(ctx context.Context, id string) (weir.Workflow, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return weir.Workflow{}, err
	}
	return at(ps, id).AwaitWorkflow(ctx, id)
}

// AwaitJob implements engine.Store (await.go), in the job's partition.
func (s *Store) AwaitJob(ctx context.Context, id string) (weir.Job, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return weir.Job{}, err
	}
	return at(ps, id).AwaitJob(ctx, id)
}

// Finish implements engine.Store: the outcomes grouped by partition, one
// call per partition, the calls at once (but that of a partition whose
// outcomes add tasks, which goes first and alone); a Claim rides on the
// call of the first outcome's partition (with no outcome, it is a Claim
// call).
func (s *Store) Finish(ctx context.Context, p engine.FinishParams) (engine.FinishResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.FinishResult{}, err
	}
	if len(ps) == 1 {
		return ps[0].Finish(ctx, p)
	}
	if err := ps[0].validateFinish(p); err != nil {
		return engine.FinishResult{}, err
	}
	if err := engine.CheckFinishAdds(p, len(ps)); err != nil {
		return engine.FinishResult{}, err
	}
	if len(p.Outcomes) == 0 {
		c := *p.Claim
		c.Wait = 0
		out, err := s.claimRound(ctx, ps, c, 0, nil)
		if err != nil {
			return engine.FinishResult{}, err
		}
		// Settled empty, not nil, as with one partition
		return engine.FinishResult{Settled: []engine.Settled{}, Claimed: out}, nil
	}
	order, idx := groups(ps, len(p.Outcomes), func(i int) string { return p.Outcomes[i].JobID })
	if len(order) == 1 {
		return ps[order[0]].Finish(ctx, p)
	}
	claimIn := order[0]
	// The script checks the tasks an outcome adds against its workflow, and
	// refuses the whole call before writing: the partition whose outcomes
	// add tasks (one at most, CheckFinishAdds) goes first and alone, so
	// that such a refusal leaves the other partitions unwritten
	// (spec/partitions.md, Finish); the others then go at once.
	slices.SortStableFunc(order, func(a, b int) int { return adds(p, idx[b]) - adds(p, idx[a]) })
	res := engine.FinishResult{Settled: make([]engine.Settled, len(p.Outcomes))}
	send := func(q int) error {
		sub := engine.FinishParams{Outcomes: make([]engine.Outcome, len(idx[q]))}
		for j, i := range idx[q] {
			sub.Outcomes[j] = p.Outcomes[i]
		}
		if q == claimIn {
			sub.Claim = p.Claim
		}
		r, err := ps[q].Finish(ctx, sub)
		if err != nil {
			return partErr(ps, q, err)
		}
		for j, i := range idx[q] {
			res.Settled[i] = r.Settled[j] // each index written by one call
		}
		if q == claimIn {
			res.Claimed = r.Claimed
		}
		return nil
	}
	if adds(p, idx[order[0]]) > 0 {
		if err := send(order[0]); err != nil {
			return engine.FinishResult{}, err
		}
		order = order[1:]
	}
	if err := inParallel(order, send); err != nil {
		return engine.FinishResult{}, err
	}
	return res, nil
}

// Heartbeat implements engine.Store: each lease to its job's partition,
// one call per partition, the calls at once; the statuses in the order
// asked.
func (s *Store) Heartbeat(ctx context.Context, p engine.HeartbeatParams) ([]engine.LeaseStatus, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return nil, err
	}
	if len(ps) == 1 {
		return ps[0].Heartbeat(ctx, p)
	}
	if err := ps[0].validateBatch("leases", len(p.Leases)); err != nil {
		return nil, err
	}
	if err := ps[0].validateLease(p.Extend); err != nil {
		return nil, err
	}
	order, idx := groups(ps, len(p.Leases), func(i int) string { return p.Leases[i].JobID })
	out := make([]engine.LeaseStatus, len(p.Leases))
	err = inParallel(order, func(q int) error {
		sub := engine.HeartbeatParams{Extend: p.Extend, Leases: make([]engine.LeaseRef, len(idx[q]))}
		for j, i := range idx[q] {
			sub.Leases[j] = p.Leases[i]
		}
		r, err := ps[q].Heartbeat(ctx, sub)
		if err != nil {
			return partErr(ps, q, err)
		}
		for j, i := range idx[q] {
			out[i] = r[j] // each index written by one call
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EnqueueBatch enqueues ps as Enqueue would, grouped by partition: each
// group is one EnqueueBatch of its partition (atomic within it only), the
// groups in partition order. A group that could not be sent (ctx done)
// gives its error to each of its jobs and the later groups', and is
// returned too.
func (s *Store) EnqueueBatch(ctx context.Context, jobs []engine.EnqueueParams) ([]EnqueueResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return nil, err
	}
	if len(ps) == 1 {
		return ps[0].EnqueueBatch(ctx, jobs)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	idx := make([][]int, len(ps))
	for i, j := range jobs {
		q := engine.Partition(j.Job.ID, len(ps))
		idx[q] = append(idx[q], i)
	}
	out := make([]EnqueueResult, len(jobs))
	var first error
	for q, is := range idx {
		if len(is) == 0 {
			continue
		}
		if first != nil {
			for _, i := range is {
				out[i].Err = first
			}
			continue
		}
		sub := make([]engine.EnqueueParams, len(is))
		for j, i := range is {
			sub[j] = jobs[i]
		}
		r, err := ps[q].EnqueueBatch(ctx, sub)
		if err != nil {
			first = partErr(ps, q, err)
			for _, i := range is {
				out[i].Err = first
			}
			continue
		}
		for j, i := range is {
			out[i] = r[j]
		}
	}
	return out, first
}

// PauseQueue implements engine.Store, in every partition.
func (s *Store) PauseQueue(ctx context.Context, queue string) error {
	if !engine.ValidName(queue) {
		return invalidQueue(queue)
	}
	return s.each(ctx, func(p *part) error { return p.PauseQueue(ctx, queue) })
}

// ResumeQueue implements engine.Store, in every partition.
func (s *Store) ResumeQueue(ctx context.Context, queue string) error {
	if !engine.ValidName(queue) {
		return invalidQueue(queue)
	}
	return s.each(ctx, func(p *part) error { return p.ResumeQueue(ctx, queue) })
}

// LimitQueue implements engine.Store, in every partition.
func (s *Store) LimitQueue(ctx context.Context, p engine.LimitQueueParams) error {
	if err := engine.ValidateLimitQueue(p); err != nil {
		return err
	}
	return s.each(ctx, func(q *part) error { return q.LimitQueue(ctx, p) })
}

// RateLimitQueue implements engine.Store, in every partition.
func (s *Store) RateLimitQueue(ctx context.Context, p engine.RateLimitQueueParams) error {
	if err := engine.ValidateRateLimitQueue(p); err != nil {
		return err
	}
	return s.each(ctx, func(q *part) error { return q.RateLimitQueue(ctx, p) })
}

// LimitKeys implements engine.Store, in every partition.
func (s *Store) LimitKeys(ctx context.Context, p engine.LimitKeysParams) error {
	if err := engine.ValidateLimitKeys(p); err != nil {
		return err
	}
	return s.each(ctx, func(q *part) error { return q.LimitKeys(ctx, p) })
}

// SetStepBudget sets the namespace's step budget (drain.go) in every
// partition.
func (s *Store) SetStepBudget(ctx context.Context, n int) error {
	if n < 0 {
		return s.part.SetStepBudget(ctx, n)
	}
	return s.each(ctx, func(p *part) error { return p.SetStepBudget(ctx, n) })
}

// SetFastPaths switches the namespace's fast paths on or off in every
// partition (part.SetFastPaths).
func (s *Store) SetFastPaths(ctx context.Context, on bool) error {
	return s.each(ctx, func(p *part) error { return p.SetFastPaths(ctx, on) })
}

// SetEvents sets the namespace's event stream (events.go) in every
// partition.
func (s *Store) SetEvents(ctx context.Context, c EventsConfig) error {
	if err := c.validate(); err != nil {
		return err
	}
	return s.each(ctx, func(p *part) error { return p.SetEvents(ctx, c) })
}

// SetEventsOff switches the namespace's events off, or on with the
// default cap (client.EventsSwitch).
func (s *Store) SetEventsOff(ctx context.Context, off bool) error {
	return s.SetEvents(ctx, EventsConfig{Off: off})
}

// EventsConfig returns the namespace's event stream setting (partition
// 0's: SetEvents writes every partition).
func (s *Store) EventsConfig(ctx context.Context) (EventsConfig, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return EventsConfig{}, err
	}
	return ps[0].EventsConfig(ctx)
}

// CallPath returns the path the store uses: "functions" or "scripts" once
// it made a call, "auto" before (partition 0's).
func (s *Store) CallPath() string {
	if ps := s.parts.Load(); ps != nil {
		return (*ps)[0].CallPath()
	}
	return s.part.CallPath()
}

// Load makes the transitions ready on the server before the first call
// (call.go), for every partition.
func (s *Store) Load(ctx context.Context) error {
	return s.each(ctx, func(p *part) error { return p.Load(ctx) })
}

// ExpireLeases implements engine.Store: every partition in order, the
// results concatenated. A partition that fails does not stop the others:
// the results come with the first error.
func (s *Store) ExpireLeases(ctx context.Context, p engine.ExpireParams) (engine.ExpireResult, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.ExpireResult{}, err
	}
	if len(ps) == 1 {
		return ps[0].ExpireLeases(ctx, p)
	}
	var res engine.ExpireResult
	var first error
	for q, pt := range ps {
		r, err := pt.ExpireLeases(ctx, p)
		if err != nil {
			if errors.Is(err, weir.ErrInvalid) || ctx.Err() != nil {
				return res, err
			}
			if first == nil {
				first = partErr(ps, q, err)
			}
			continue
		}
		res.Expired = append(res.Expired, r.Expired...)
		res.Due = append(res.Due, r.Due...)
	}
	return res, first
}

// PurgeQueue implements engine.Store: every partition in order, the lists
// concatenated.
func (s *Store) PurgeQueue(ctx context.Context, queue string) (engine.PurgeResult, error) {
	if !engine.ValidName(queue) {
		return engine.PurgeResult{}, invalidQueue(queue)
	}
	var res engine.PurgeResult
	err := s.each(ctx, func(p *part) error {
		r, err := p.PurgeQueue(ctx, queue)
		res.Purged = append(res.Purged, r.Purged...)
		res.Pushed = append(res.Pushed, r.Pushed...)
		return err
	})
	if err != nil {
		return engine.PurgeResult{}, err
	}
	return res, nil
}

// Queues implements engine.Store: one entry per queue name, by name, the
// counts summed over the partitions and the settings from the
// lowest-numbered partition that knows the queue.
func (s *Store) Queues(ctx context.Context) ([]weir.QueueInfo, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return nil, err
	}
	if len(ps) == 1 {
		return ps[0].Queues(ctx)
	}
	lists := make([][]weir.QueueInfo, len(ps))
	for q, p := range ps {
		if lists[q], err = p.Queues(ctx); err != nil {
			return nil, partErr(ps, q, err)
		}
	}
	return mergeQueues(lists), nil
}

// QueueContents returns what queue holds: each list the partitions' lists
// concatenated in partition order.
func (s *Store) QueueContents(ctx context.Context, queue string) (engine.QueueContents, error) {
	o, err := s.Observe(ctx, nil, nil, []string{queue})
	if err != nil {
		return engine.QueueContents{}, err
	}
	return o.Contents[0], nil
}

// Observe reads what part.Observe reads (observe.go). With several
// partitions it reads each partition in one script (each at one instant,
// not all at the same one): every ID in its partition, the queues merged
// as Queues merges them and the contents concatenated in partition order.
func (s *Store) Observe(ctx context.Context, workflows, jobs, queues []string) (Observation, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return Observation{}, err
	}
	if len(ps) == 1 {
		return ps[0].Observe(ctx, workflows, jobs, queues)
	}
	o := Observation{
		Contents:  make([]engine.QueueContents, len(queues)),
		Workflows: make([]weir.Workflow, len(workflows)), WorkflowErrs: make([]error, len(workflows)),
		Jobs: make([]weir.Job, len(jobs)), JobErrs: make([]error, len(jobs)),
	}
	_, wi := groups(ps, len(workflows), func(i int) string { return workflows[i] })
	_, ji := groups(ps, len(jobs), func(i int) string { return jobs[i] })
	lists := make([][]weir.QueueInfo, len(ps))
	for q, p := range ps {
		ws := make([]string, len(wi[q]))
		for k, i := range wi[q] {
			ws[k] = workflows[i]
		}
		js := make([]string, len(ji[q]))
		for k, i := range ji[q] {
			js[k] = jobs[i]
		}
		r, err := p.Observe(ctx, ws, js, queues)
		if err != nil {
			return Observation{}, partErr(ps, q, err)
		}
		lists[q] = r.Queues
		for k, i := range wi[q] {
			o.Workflows[i], o.WorkflowErrs[i] = r.Workflows[k], r.WorkflowErrs[k]
		}
		for k, i := range ji[q] {
			o.Jobs[i], o.JobErrs[i] = r.Jobs[k], r.JobErrs[k]
		}
		for i, c := range r.Contents {
			o.Contents[i].Ready = append(o.Contents[i].Ready, c.Ready...)
			o.Contents[i].Delayed = append(o.Contents[i].Delayed, c.Delayed...)
			o.Contents[i].Running = append(o.Contents[i].Running, c.Running...)
		}
	}
	o.Queues = mergeQueues(lists)
	return o, nil
}

// WatchStops implements engine.StopWatcher (stops.go), on every
// partition's stop channel.
func (s *Store) WatchStops(ctx context.Context, fn func(jobIDs []string)) error {
	ps, err := s.layout(ctx)
	if err != nil {
		return err
	}
	chans := make([]string, len(ps))
	for q, p := range ps {
		chans[q] = p.keys.chanStop()
	}
	return ps[0].watchStops(ctx, chans, fn)
}

// PutSchedule implements engine.Scheduler, in the schedule's partition.
func (s *Store) PutSchedule(ctx context.Context, p engine.PutScheduleParams) (engine.PutScheduleResult, error) {
	pt, err := s.schedulePart(ctx, p.Spec.Name)
	if err != nil {
		return engine.PutScheduleResult{}, err
	}
	return pt.PutSchedule(ctx, p)
}

// DeleteSchedule implements engine.Scheduler, in the schedule's partition.
func (s *Store) DeleteSchedule(ctx context.Context, name string) error {
	pt, err := s.schedulePart(ctx, name)
	if err != nil {
		return err
	}
	return pt.DeleteSchedule(ctx, name)
}

// PauseSchedule implements engine.Scheduler, in the schedule's partition.
func (s *Store) PauseSchedule(ctx context.Context, name string) error {
	pt, err := s.schedulePart(ctx, name)
	if err != nil {
		return err
	}
	return pt.PauseSchedule(ctx, name)
}

// ResumeSchedule implements engine.Scheduler, in the schedule's partition.
func (s *Store) ResumeSchedule(ctx context.Context, name string) error {
	pt, err := s.schedulePart(ctx, name)
	if err != nil {
		return err
	}
	return pt.ResumeSchedule(ctx, name)
}

// GetSchedule implements engine.Scheduler, in the schedule's partition.
func (s *Store) GetSchedule(ctx context.Context, name string) (engine.Schedule, error) {
	pt, err := s.schedulePart(ctx, name)
	if err != nil {
		return engine.Schedule{}, err
	}
	return pt.GetSchedule(ctx, name)
}

// Schedules implements engine.Scheduler: every partition's schedules
// (read at once), merged by name, with the latest of the partitions'
// times. A partition that fails fails the call (naming it).
func (s *Store) Schedules(ctx context.Context) (engine.ScheduleList, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return engine.ScheduleList{}, err
	}
	if len(ps) == 1 {
		return ps[0].Schedules(ctx)
	}
	lists := make([]engine.ScheduleList, len(ps))
	all := make([]int, len(ps))
	for q := range all {
		all[q] = q
	}
	err = inParallel(all, func(q int) error {
		l, err := ps[q].Schedules(ctx)
		lists[q] = l
		return partErr(ps, q, err)
	})
	if err != nil {
		return engine.ScheduleList{}, err
	}
	out := engine.ScheduleList{Schedules: []engine.Schedule{}}
	for _, l := range lists {
		out.Schedules = append(out.Schedules, l.Schedules...)
		if l.Now.After(out.Now) {
			out.Now = l.Now
		}
	}
	engine.SortSchedules(out.Schedules)
	return out, nil
}

// FireSchedule implements engine.Scheduler, in the schedule's partition
// (which holds the tick's job or workflow: engine.TickIDIn).
func (s *Store) FireSchedule(ctx context.Context, p engine.FireScheduleParams) (engine.FireScheduleResult, error) {
	pt, err := s.schedulePart(ctx, p.Name)
	if err != nil {
		return engine.FireScheduleResult{}, err
	}
	return pt.FireSchedule(ctx, p)
}

// WatchSchedules implements engine.ScheduleWatcher, on every partition's
// schedule channel.
func (s *Store) WatchSchedules(ctx context.Context, fn func()) error {
	ps, err := s.layout(ctx)
	if err != nil {
		return err
	}
	chans := make([]string, len(ps))
	for q, p := range ps {
		chans[q] = p.keys.chanSchedules()
	}
	return ps[0].watchSchedules(ctx, chans, fn)
}
