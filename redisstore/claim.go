package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	mrand "math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// appendClaimArgs appends a claim's ARGV (max, lease, nonce, worker, queues...) to
// args.
func appendClaimArgs(args []any, p engine.ClaimParams) []any {
	args = append(args, p.Max, p.Lease.Milliseconds(), nonce(), p.WorkerID)
	for _, q := range p.Queues {
		args = append(args, q)
	}
	return args
}

// claimOnce runs claim.lua once. With wait > 0, when it claims nothing it
// also returns how long until the next delayed job or lease deadline of
// those queues (-1: none), and registers the caller as waiting on them for
// wait plus a second (pushes write wake-up tokens only while someone may
// wait; see spec/keys.md, P seq).
//
// A claim whose sweep stopped on its budget (drain.go) goes on, once the
// cascade is drained, from the queue where it stopped.
func (pt *part) claimOnce(ctx context.Context, p engine.ClaimParams, wait time.Duration) ([]engine.Claimed, time.Duration, error) {
	var got []engine.Claimed
	for {
		out, due, at, stopped, err := pt.claimCall(ctx, p, wait)
		if err != nil {
			return nil, 0, err
		}
		got = appendClaimed(got, out)
		if !stopped {
			return got, due, nil
		}
		if err := pt.drain(ctx, nil); err != nil {
			return nil, 0, err
		}
		p.Queues, p.Max = resumeQueues(p.Queues, max(at, 1)-1), p.Max-len(out)
		if p.Max <= 0 {
			return got, -1, nil
		}
	}
}

// appendClaimed is append(got, more...), without copying more when got is
// nil (the common case: one call claimed them all; a Claimed is large).
func appendClaimed(got, more []engine.Claimed) []engine.Claimed {
	if got == nil && len(more) > 0 {
		return more
	}
	return append(got, more...)
}

// resumeQueues is the queue list a claim that stopped at queues[at] goes
// on with: that queue, then the later ones but those the claim visited
// before it. A claim visits each queue once, at its first mention
// (engine.Model.claim); without the filter, a queue named again after the
// stop would be visited a second time, and could hand out a job that the
// cascade just drained pushed there (a webhook's delivery, an undo).
func resumeQueues(queues []string, at int) []string {
	out := []string{queues[at]}
	for _, q := range queues[at+1:] {
		if !slices.Contains(queues[:at], q) {
			out = append(out, q)
		}
	}
	return out
}

// claimCall runs claim.lua once (claimOnce) and reports whether and in
// which queue it stopped on its budget.
func (pt *part) claimCall(ctx context.Context, p engine.ClaimParams, wait time.Duration) ([]engine.Claimed, time.Duration, int, bool, error) {
	waitArg := ""
	if wait > 0 {
		waitArg = strconv.FormatInt((wait + time.Second).Milliseconds(), 10)
	}
	args := pt.argv(scripts["claim"], 5+len(p.Queues))
	args = append(args, p.Max, p.Lease.Milliseconds(), waitArg, nonce(), p.WorkerID)
	for _, q := range p.Queues {
		args = append(args, q)
	}
	v, err := pt.call(ctx, scripts["claim"], args)
	if err != nil {
		return nil, 0, 0, false, err
	}
	r := newReader(v)
	now := r.int()
	next := r.int()
	out := r.claimed()
	at, stopped := r.stopped()
	if err := r.done(); err != nil {
		return nil, 0, 0, false, err
	}
	if err := pt.readDeps(ctx, out, r.lazy); err != nil {
		return nil, 0, 0, false, err
	}
	due := time.Duration(-1)
	if next > 0 {
		due = max(0, time.Duration(next-now)*time.Millisecond)
	}
	return out, due, at, stopped, nil
}

// nonce names one claim call (claim_once in lua/include/lease.lua): the
// same when go-redis sends the call again after a broken connection, new
// for every call.
func nonce() string {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], mrand.Uint64())
	return hex.EncodeToString(b[:])
}

// maxBlock bounds one blocking wait for a wake-up (a safety net: the
// claim runs again after it).
const maxBlock = time.Minute

// blockFor is how long a blocking claim that found nothing waits for a
// wake-up: until its deadline or the next due time (due, -1 for none) it
// saw, at least 1 ms and at most maxBlock; 0 or less once the deadline
// passed.
func blockFor(deadline time.Time, due time.Duration) time.Duration {
	block := time.Until(deadline)
	if block <= 0 {
		return block
	}
	if due >= 0 && due < block {
		block = due
	}
	return min(max(block, time.Millisecond), maxBlock)
}

// Claim implements engine.Store. With p.Wait it blocks on the queues'
// wake-up lists (BLPOP), never sleeping in a loop: every push into a queue
// adds a token there; the wait ends no later than the next delayed job or
// lease deadline the claim saw, then the claim runs again. A cancelled
// context wakes the wait through a private list of this call.
func (pt *part) Claim(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := pt.validateClaim(p); err != nil {
		return nil, err
	}
	if p.Wait <= 0 {
		out, _, err := pt.claimOnce(ctx, p, 0)
		return out, err
	}
	deadline := time.Now().Add(p.Wait)
	var wakeKeys []string
	for _, q := range p.Queues {
		if k := pt.keys.wake(q); !slices.Contains(wakeKeys, k) {
			wakeKeys = append(wakeKeys, k)
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	private := pt.keys.prefix + "wk:" + hex.EncodeToString(rnd[:])
	wakeKeys = append(wakeKeys, private)
	stop := context.AfterFunc(ctx, func() {
		pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pipe := pt.rdb.Pipeline()
		pipe.LPush(pctx, private, "1")
		pipe.PExpire(pctx, private, time.Minute)
		_, _ = pipe.Exec(pctx)
	})
	defer stop()
	for {
		out, due, err := pt.claimOnce(ctx, p, max(time.Until(deadline), time.Millisecond))
		if err != nil || len(out) > 0 {
			return out, err
		}
		block := blockFor(deadline, due)
		if block <= 0 {
			return nil, nil
		}
		_, err = pt.blpop(ctx, block, wakeKeys)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		var nerr net.Error
		if err != nil && !errors.Is(err, redis.Nil) && !(errors.As(err, &nerr) && nerr.Timeout()) {
			return nil, mapErr(err)
		}
	}
}

// blpop blocks on keys for at most d: whole seconds through go-redis's
// BLPop (which sets the read timeout for it), less than a second with a
// decimal timeout (Redis 6 and later). It returns the key it popped from
// (empty when the wait timed out).
func (pt *part) blpop(ctx context.Context, d time.Duration, keys []string) (string, error) {
	if d >= time.Second {
		v, err := pt.rdb.BLPop(ctx, d.Truncate(time.Second), keys...).Result()
		if len(v) > 0 {
			return v[0], err
		}
		return "", err
	}
	args := make([]any, 0, len(keys)+2)
	args = append(args, "BLPOP")
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	v, err := pt.rdb.Do(ctx, args...).StringSlice()
	if len(v) > 0 {
		return v[0], err
	}
	return "", err
}

// Claim implements engine.Store. With one partition it is the partition's
// claim. With several, claim call number c visits the partitions c mod P,
// c+1 mod P, … (spec/partitions.md, Claim rotation), each for the jobs
// still missing from Max. A blocking claim that finds nothing waits on
// every partition's wake-up lists at once, one BLPOP per partition (each
// with a private list of its own, through which the first to return, or
// a cancelled context, wakes the others); every wait has ended when Claim
// returns. After a wait it visits only the partitions that woke it (whose
// wake-up list gave a token) and those whose next due time (a delayed job,
// a lease deadline, a rate limit's next start) has come: the others were
// found empty and have not been pushed into since. A partition that fails
// is left out for the rest of the call; the error is returned only when
// no partition answered.
func (s *Store) Claim(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, error) {
	ps, err := s.layout(ctx)
	if err != nil {
		return nil, err
	}
	if len(ps) == 1 {
		return ps[0].Claim(ctx, p)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ps[0].validateClaim(p); err != nil {
		return nil, err
	}
	if p.Wait <= 0 {
		out, err := s.claimRound(ctx, ps, p, 0, nil)
		return out, err
	}
	deadline := time.Now().Add(p.Wait)
	st := &roundState{failed: make([]bool, len(ps)), dueAt: make([]time.Time, len(ps))}
	for {
		out, err := s.claimRound(ctx, ps, p, max(time.Until(deadline), time.Millisecond), st)
		if err != nil || len(out) > 0 {
			return out, err
		}
		block := blockFor(deadline, st.nextDue())
		if block <= 0 {
			return nil, nil
		}
		woken, err := s.blockAll(ctx, ps, p.Queues, block, st.failed)
		if err != nil {
			return nil, err
		}
		st.plan(woken)
	}
}

// roundState is what a blocking claim over several partitions knows
// between its rounds.
type roundState struct {
	failed []bool      // partitions left out for the rest of the call
	dueAt  []time.Time // each partition's next due time it reported (zero: none)
	// visit, when not nil, is the partitions the next round visits (after
	// a wait); nil visits all (the first round)
	visit []bool
}

// nextDue is how long until the earliest due time of a partition not
// failed (-1: none).
func (st *roundState) nextDue() time.Duration {
	due := time.Duration(-1)
	for q, at := range st.dueAt {
		if at.IsZero() || st.failed[q] {
			continue
		}
		if d := max(time.Until(at), 0); due < 0 || d < due {
			due = d
		}
	}
	return due
}

// plan sets the partitions the round after a wait visits: those woken
// (a token popped from their wake-up lists) and those whose due time has
// come.
func (st *roundState) plan(woken []bool) {
	if st.visit == nil {
		st.visit = make([]bool, len(st.failed))
	}
	now := time.Now()
	for q := range st.visit {
		st.visit[q] = woken[q] || (!st.dueAt[q].IsZero() && !st.dueAt[q].After(now))
	}
}

// claimRound is one claim over the partitions in rotation (Claim),
// returning the jobs claimed. With st (a blocking claim), it visits only
// st.visit when set, records each partition's next due time in st.dueAt,
// and marks a partition that fails in st.failed (left out by later
// rounds); the error (the first partition's) is returned only when no
// partition answered.
func (s *Store) claimRound(ctx context.Context, ps []*part, p engine.ClaimParams, wait time.Duration, st *roundState) ([]engine.Claimed, error) {
	n := uint64(len(ps))
	c := s.claims.Add(1) - 1
	var got []engine.Claimed
	var first error
	answered, visited := false, false
	for i := range n {
		q := int((c + i) % n)
		if st != nil && (st.failed[q] || (st.visit != nil && !st.visit[q])) {
			continue
		}
		visited = true
		sub := p
		sub.Max = p.Max - len(got)
		out, d, err := ps[q].claimOnce(ctx, sub, wait)
		if err != nil {
			if st != nil {
				st.failed[q] = true
			}
			if first == nil {
				first = partErr(ps, q, err)
			}
			continue
		}
		answered = true
		got = appendClaimed(got, out)
		if st != nil {
			st.dueAt[q] = time.Time{}
			if d >= 0 {
				st.dueAt[q] = time.Now().Add(d)
			}
		}
		if len(got) >= p.Max {
			break
		}
	}
	if !answered && (visited || st == nil || st.visit == nil) {
		if first == nil { // every partition failed before
			first = fmt.Errorf("%w: every partition failed", weir.ErrUnavailable)
		}
		if err := ctx.Err(); err != nil {
			first = err
		}
		return nil, first
	}
	return got, nil
}

// blockAll waits, for at most d, for a wake-up token in any partition not
// failed (Claim): one BLPOP per partition, on its wake-up lists of queues
// and a private list; the first to return, or ctx ending, pushes into
// every private list, so that all have returned when blockAll does. It
// returns the partitions whose wait popped a wake-up token. A partition
// whose wait failed is marked in failed; the error is returned when every
// partition has failed.
func (s *Store) blockAll(ctx context.Context, ps []*part, queues []string, d time.Duration, failed []bool) ([]bool, error) {
	type waiter struct {
		q       int
		keys    []string
		private string
	}
	var ws []waiter
	for q, pt := range ps {
		if failed[q] {
			continue
		}
		w := waiter{q: q}
		for _, name := range queues {
			if k := pt.keys.wake(name); !slices.Contains(w.keys, k) {
				w.keys = append(w.keys, k)
			}
		}
		var rnd [8]byte
		_, _ = rand.Read(rnd[:])
		w.private = pt.keys.prefix + "wk:" + hex.EncodeToString(rnd[:])
		w.keys = append(w.keys, w.private)
		ws = append(ws, w)
	}
	var once sync.Once
	wake := func() {
		once.Do(func() {
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			pipe := s.client.Pipeline()
			for _, w := range ws {
				pipe.LPush(pctx, w.private, "1")
				pipe.PExpire(pctx, w.private, time.Minute)
			}
			_, _ = pipe.Exec(pctx)
		})
	}
	stop := context.AfterFunc(ctx, wake)
	defer stop()
	errs := make([]error, len(ws))
	popped := make([]string, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			popped[i], errs[i] = ps[w.q].blpop(ctx, d, w.keys)
			wake()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	woken := make([]bool, len(ps))
	var first error
	left := 0
	for i, w := range ws {
		err := errs[i]
		var nerr net.Error
		if err != nil && !errors.Is(err, redis.Nil) && !(errors.As(err, &nerr) && nerr.Timeout()) {
			failed[w.q] = true
			if first == nil {
				first = partErr(ps, w.q, mapErr(err))
			}
			continue
		}
		left++
		woken[w.q] = popped[i] != "" && popped[i] != w.private
	}
	if left == 0 && first != nil {
		return nil, first
	}
	return woken, nil
}
