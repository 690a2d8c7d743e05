package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// DefaultMigrateStep is MigrateParams.Step when it is 0: the most ready
// jobs one call of a migration moves, and the most queues it looks at.
const DefaultMigrateStep = 1000

// MigrateParams configures Store.Migrate.
type MigrateParams struct {
	// Step is the most ready jobs one call moves, and the most queues one
	// call looks at: each call is one bounded Lua call in one partition.
	// 0 means DefaultMigrateStep; at most 1,000.
	Step int
	// DryRun writes nothing: the result says what a migration would move.
	DryRun bool
	// MaxCalls, when > 0, stops after that many calls with Done false; a
	// later Migrate goes on where it stopped (the cursor is kept in the
	// namespace). 0: until done.
	MaxCalls int
	// Progress, when set, is called after each call with the result so
	// far.
	Progress func(MigrateResult)
}

// MigrateResult says what Store.Migrate found and did.
type MigrateResult struct {
	// From is the protocol the namespace had when the call began: 2
	// (written by protocol 2, or a migration under way: Resumed), 3
	// (nothing to do) or 0 (nothing is written under the namespace).
	From int `json:"from"`
	// Resumed: an earlier run began this migration (a partition of the
	// namespace was converted, or under way).
	Resumed bool `json:"resumed"`
	// Partitions is the namespace's partition count (0 when nothing is
	// written).
	Partitions int `json:"partitions"`
	// Done: the namespace is of protocol 3 now (false for a dry run, a
	// stopped run and an empty namespace).
	Done bool `json:"done"`
	// DryRun: nothing was written; the figures are what a run would do.
	DryRun bool `json:"dry_run"`
	// Moved counts the ready jobs of the default priority moved from their
	// queue's ready zset to its ready list.
	Moved int64 `json:"moved"`
	// Queues counts the queues converted; Flagged those of them whose
	// ready zset keeps jobs of other priorities (their state's z set).
	Queues  int `json:"queues"`
	Flagged int `json:"flagged"`
	// Indexed counts the workflow IDs added to the partitions' index of
	// IDs (spec/keys.md, P wf:id), which a namespace written before it
	// existed (by protocol 2, or by protocol 3 before the index) lacks; a
	// dry run: the index members a run would read.
	Indexed int64 `json:"indexed"`
	// Calls counts the Lua calls made.
	Calls int `json:"calls"`
}

// Migrate converts the store's namespace from protocol 2 to protocol 3
// (spec/protocol3.md, Upgrade; docs/upgrading.md) in bounded steps, each
// one Lua call in one partition that moves at most p.Step ready jobs:
// every queue's ready jobs of the default priority move, in claim order,
// from its ready zset to its ready list, and the partition's seq hash
// takes protocol 3's name, whose marker then says 3. Partition 0 goes
// last, so that a store refuses the namespace (ErrNeedsMigration) until
// every partition is converted. The first call of a partition refuses it
// to protocol 2's processes and to this protocol's alike, so that nothing
// else writes it meanwhile: stop the processes of the older build first
// (their calls fail from then on, and the jobs they were running run again
// once their leases expire).
//
// Then, and on a namespace of protocol 3 written before the index of
// workflow IDs existed (ListParams.IDPrefix reads it), it builds that
// index in each partition, at most p.Step workflows a call, while the
// namespace stays in use (Indexed).
//
// A migration stopped (ctx, MaxCalls, a crash) goes on where it stopped
// when Migrate runs again; on a namespace of protocol 3 whose index is
// built it does nothing (From 3, Done, no call). Every other record (delayed, running and ended jobs,
// workflows, schedules, events) is read by protocol 3 as written.
func (s *Store) Migrate(ctx context.Context, p MigrateParams) (MigrateResult, error) {
	res := MigrateResult{DryRun: p.DryRun}
	step := p.Step
	if step == 0 {
		step = DefaultMigrateStep
	}
	if step < 1 || step > 1000 {
		return res, fmt.Errorf("%w: migrate step %d: want 1 to 1000 ready jobs a call (0: %d)", weir.ErrInvalid, p.Step, DefaultMigrateStep)
	}
	if p.MaxCalls < 0 {
		return res, fmt.Errorf("%w: migrate MaxCalls %d: want 0 (no bound) or more", weir.ErrInvalid, p.MaxCalls)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if err := s.checkServer(ctx); err != nil {
		return res, err
	}
	n, err := s.migrateState(ctx, &res)
	if err != nil || n == 0 {
		return res, err
	}
	res.Partitions = n
	// partitions n-1 .. 1, then 0, then the key that holds np when it is
	// not partition 0's own (a salted tag): the namespace's marker last
	prefixes := make([]keys, 0, n+1)
	for q := n - 1; q >= 0; q-- {
		prefixes = append(prefixes, keysOf(partitionTag(s.ns, q, n)))
	}
	if np := keysOf(s.ns + ":0"); np.prefix != prefixes[len(prefixes)-1].prefix {
		prefixes = append(prefixes, np)
	}
	// what an earlier run did: the partitions converted already need no
	// call but for their index of IDs, and one under way is a migration
	// resumed
	pipe := s.client.Pipeline()
	marks := make([]*redis.StringCmd, len(prefixes))
	under := make([]*redis.IntCmd, len(prefixes))
	index := make([]*redis.SliceCmd, len(prefixes))
	for i, k := range prefixes {
		marks[i] = pipe.Get(ctx, k.marker)
		under[i] = pipe.Exists(ctx, k.prefix+"mig")
		index[i] = pipe.HMGet(ctx, k.seq, "now", "ix")
	}
	_, _ = pipe.Exec(ctx) // each command's error is read below
	todo := prefixes[:0:0]
	for i, k := range prefixes {
		v, err := marks[i].Result()
		if err != nil && !errors.Is(err, redis.Nil) && !isWrongType(err) {
			return res, mapErr(err)
		}
		if err := under[i].Err(); err != nil {
			return res, mapErr(err)
		}
		ix, ierr := index[i].Result()
		if ierr != nil {
			return res, mapErr(ierr)
		}
		if res.From == 2 && (under[i].Val() > 0 || (err == nil && v == strconv.Itoa(ProtocolVersion))) {
			res.Resumed = true
		}
		// a partition of protocol 3 needs its index of IDs built when
		// something wrote there (now) before the index existed (no ix)
		unindexed := ix[0] != nil && ix[1] != "1"
		if err != nil || v != strconv.Itoa(ProtocolVersion) || unindexed {
			todo = append(todo, k)
		}
	}
	if len(todo) == 0 && res.From == 3 {
		res.Done = true
		return res, nil
	}
	for _, k := range todo {
		pt := newPart(s.client, k, s.part.cfg, s.opts)
		cursor := ""
		for finished := false; !finished; {
			if p.MaxCalls > 0 && res.Calls >= p.MaxCalls {
				return res, nil
			}
			if err := ctx.Err(); err != nil {
				return res, err
			}
			dry := ""
			if p.DryRun {
				dry = "1"
			}
			// "1": the ready jobs of priority 0 move to the ready lists
			move := "1"
			v, err := pt.run(ctx, "migrate", step, dry, cursor, move)
			if err != nil {
				return res, fmt.Errorf("migrate %s: %w", k.prefix, err)
			}
			if len(v) != 6 {
				return res, fmt.Errorf("%w: migrate %s: a reply of %d values", weir.ErrProtocol, k.prefix, len(v))
			}
			res.Calls++
			moved, _ := strconv.ParseInt(v[1], 10, 64)
			queues, _ := strconv.Atoi(v[2])
			flagged, _ := strconv.Atoi(v[3])
			indexed, _ := strconv.ParseInt(v[5], 10, 64)
			res.Moved += moved
			res.Queues += queues
			res.Flagged += flagged
			res.Indexed += indexed
			if p.Progress != nil {
				p.Progress(res)
			}
			switch v[0] {
			case "more":
				cursor = v[4]
			case "index":
				// the index of IDs: the cursor is kept in the partition
			case "done":
				// converted: the index steps follow (a dry run counted
				// what they would read)
				finished = p.DryRun
			case "none", "was3", "indexed":
				finished = true
			case "counter":
				return res, fmt.Errorf("%w: migrate %s: queue %q's push counter passed 2^40, so its ready jobs' priorities cannot be told from their scores; nothing was written: let the queue run empty once under protocol 2 (the claim that empties it resets the counter), then run weir migrate again", weir.ErrProtocol, k.prefix, v[4])
			case "odd":
				return res, fmt.Errorf("%w: migrate %s: %sseq is neither a protocol marker nor a seq hash (not written by weir); nothing was written", weir.ErrProtocol, k.prefix, k.prefix)
			default:
				return res, fmt.Errorf("%w: migrate %s: unknown state %q", weir.ErrProtocol, k.prefix, v[0])
			}
		}
	}
	res.Done = !p.DryRun
	return res, nil
}

// migrateState reads the namespace's protocol and partition count from
// the key that holds np, weir:{<ns>:0}:seq, as protocol 2 wrote it, as a
// migration keeps it (…:mig) or as protocol 3 does (…:seq3), into
// res.From and res.Resumed, and returns the count (0: nothing written),
// checked against the count the store was opened with.
func (s *Store) migrateState(ctx context.Context, res *MigrateResult) (int, error) {
	k := keysOf(s.ns + ":0")
	mig := k.prefix + "mig"
	pipe := s.client.Pipeline()
	mark := pipe.Get(ctx, k.marker)
	old := pipe.HGet(ctx, k.marker, npField)
	during := pipe.HGet(ctx, mig, npField)
	migrating := pipe.Exists(ctx, mig)
	now := pipe.HGet(ctx, k.seq, npField)
	_, _ = pipe.Exec(ctx) // each command's error is read below
	v, err := mark.Result()
	switch {
	case err == nil && v == strconv.Itoa(ProtocolVersion):
		res.From = 3
		n, err := npOf(now)
		res.Partitions = n
		return n, err
	case err == nil:
		return 0, fmt.Errorf("%w: namespace %q is of protocol %q; this build migrates protocol 2 to %d", weir.ErrProtocol, s.ns, v, ProtocolVersion)
	case errors.Is(err, redis.Nil):
		return 0, nil // nothing written
	case !isWrongType(err):
		return 0, mapErr(err)
	}
	if err := migrating.Err(); err != nil {
		return 0, mapErr(err)
	}
	res.From = 2
	src := old
	if migrating.Val() > 0 {
		src = during
	}
	n, err := npOf(src)
	if err != nil {
		return 0, err
	}
	if s.want != 0 && s.want != n {
		return 0, fmt.Errorf("%w: namespace %q has %d partitions, this store was opened with %d (open it with %d, or 0 to take the namespace's)", weir.ErrInvalid, s.ns, n, s.want, n)
	}
	return n, nil
}

// npOf reads a partition count (HGET of np): absent is 1.
func npOf(c *redis.StringCmd) (int, error) {
	v, err := c.Result()
	if errors.Is(err, redis.Nil) {
		return 1, nil
	}
	if err != nil {
		return 0, mapErr(err)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > engine.MaxPartitions {
		return 0, fmt.Errorf("%w: partition count %q", weir.ErrProtocol, v)
	}
	return n, nil
}
