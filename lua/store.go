// Package lua is weir's Redis store: engine.Store implemented as one atomic
// Lua script per transition, over any go-redis UniversalClient (a plain
// client, a failover client or a cluster client).
//
// The transitions (lua/scripts/*.lua, with their helpers from
// lua/include/*.lua, built into lua/build/) port the reference state
// machine engine.Model: the same states, reasons, pushes and queue order.
// On servers with Redis Functions they run as one function library, loaded
// once and called with FCALL; elsewhere (miniredis, Redis before 7) as
// scripts with EVALSHA. spec/keys.md lists every key and spec/scripts.md
// every transition's arguments and replies.
package lua

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

var _ engine.Store = (*Store)(nil)

// Options configures a Store.
type Options struct {
	// Namespace isolates one engine instance inside a Redis; it must match
	// ^[A-Za-z0-9_.-]{1,64}$. Empty means "default".
	Namespace string
	// Config gives the limits and the retention. The zero Config means
	// engine.DefaultConfig(); zero Limits alone mean engine.DefaultLimits().
	// Every store of a namespace must use the same Config.
	Config engine.Config
	// Clock, for tests only, replaces the server's clock: each call passes
	// Clock() to its script as "now" (see spec/scripts.md, "Test clock").
	// With it set, records get no Redis TTL; ended records are removed by
	// the scripts' expiry sweep instead.
	Clock func() time.Time
	// Path chooses how transitions run on the server: PathAuto (the zero
	// value) uses functions where the server has them, else scripts.
	Path CallPath
	// Durable, when its Replicas > 0, acknowledges a transition only once
	// that many replicas have it (Durable, ErrNotReplicated).
	Durable Durable
}

// Store is an engine.Store on Redis. It is safe for concurrent use; it
// holds no connection of its own beyond the client's, and starts no
// goroutine.
type Store struct {
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

// New returns a Store over client for opts.Namespace (partition 0).
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
	if cfg == (engine.Config{}) {
		cfg = engine.DefaultConfig()
	}
	if cfg.Limits == (engine.Limits{}) {
		cfg.Limits = engine.DefaultLimits()
	}
	if cfg.Retention < 0 {
		return nil, fmt.Errorf("%w: negative retention", engine.ErrInvalid)
	}
	if opts.Path < PathAuto || opts.Path > PathScripts {
		return nil, fmt.Errorf("%w: unknown call path %d", engine.ErrInvalid, opts.Path)
	}
	if err := opts.Durable.validate(client); err != nil {
		return nil, err
	}
	st := &Store{rdb: client, keys: k, cfg: cfg, clock: opts.Clock, prefixArg: k.prefix, durable: opts.Durable}
	st.path.Store(int32(opts.Path))
	st.fixedPath = opts.Path != PathAuto
	st.limitArgs = []any{cfg.Retention.Milliseconds(), cfg.Limits.MaxBackoff.Milliseconds()}
	return st, nil
}

// Config returns the store's configuration.
func (s *Store) Config() engine.Config { return s.cfg }

// run calls script name with args after the common ones.
func (s *Store) run(ctx context.Context, name string, args ...any) ([]string, error) {
	sc := scripts[name]
	return s.call(ctx, sc, append(s.argv(sc, len(args)), args...))
}

// mapErr turns a Redis or script error into the engine's sentinels: a
// script's result code into its sentinel, OOM into ErrStoreFull, a busy,
// read-only, loading or unreachable server into ErrUnavailable. The
// original error stays in the chain.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		code, rest, _ := strings.Cut(msg, " ")
		if e := engine.ErrorForCode(code); e != nil {
			return &codeErr{code: e, detail: rest}
		}
		switch code {
		case "OOM":
			return fmt.Errorf("%w: %w", engine.ErrStoreFull, err)
		case "BUSY", "READONLY", "LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "MOVED", "ASK":
			return fmt.Errorf("%w: %w", engine.ErrUnavailable, err)
		}
		return fmt.Errorf("%w: %w", engine.ErrProtocol, err)
	}
	var nerr net.Error
	if errors.As(err, &nerr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w: %w", engine.ErrUnavailable, err)
	}
	return fmt.Errorf("%w: %w", engine.ErrUnavailable, err)
}

// validJobID reports whether id can name a job: a plain ID, "<wf>/<task>"
// or "<wf>/<task>/undo". Only such IDs reach a key.
func validJobID(id string) bool {
	wf, rest, ok := strings.Cut(id, "/")
	if !ok {
		return engine.ValidID(id)
	}
	task, undo, isUndo := strings.Cut(rest, "/")
	if isUndo && undo != "undo" {
		return false
	}
	return engine.ValidID(wf) && engine.ValidName(task)
}

func invalid(field, format string, args ...any) error {
	return &engine.ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

func tooLarge(field, format string, args ...any) error {
	return &engine.ValidationError{Field: field, Problem: fmt.Sprintf(format, args...), TooLarge: true}
}

func (s *Store) validateQueues(queues []string) error {
	if len(queues) == 0 {
		return invalid("queues", "name at least one queue")
	}
	for _, q := range queues {
		if !engine.ValidName(q) {
			return invalid("queues", "queue name %q must match ^[A-Za-z0-9_.-]{1,64}$", q)
		}
	}
	return nil
}

func (s *Store) validateBatch(field string, n int) error {
	if n < 1 || n > s.cfg.Limits.MaxBatch {
		return invalid(field, "%d is outside [1, %d]", n, s.cfg.Limits.MaxBatch)
	}
	return nil
}

func (s *Store) validateLease(d time.Duration) error {
	if d < time.Millisecond || d > s.cfg.Limits.MaxLease || d%time.Millisecond != 0 {
		return invalid("lease", "%v must be whole milliseconds in [1ms, %v]", d, s.cfg.Limits.MaxLease)
	}
	return nil
}

func (s *Store) validateClaim(p engine.ClaimParams) error {
	if err := s.validateQueues(p.Queues); err != nil {
		return err
	}
	if err := s.validateBatch("max", p.Max); err != nil {
		return err
	}
	return s.validateLease(p.Lease)
}

func invalidQueue(name string) error {
	return invalid("queue", "queue name %q must match ^[A-Za-z0-9_.-]{1,64}$", name)
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return ""
}

// Submit implements engine.Store.
func (s *Store) Submit(ctx context.Context, p engine.SubmitParams) (engine.SubmitResult, error) {
	if err := engine.ValidatePlan(p.Plan, s.cfg.Limits); err != nil {
		return engine.SubmitResult{}, err
	}
	hash := engine.PlanHash(p.Plan)
	fields, payloads, index, roots := planArgs(p.Plan, hash)
	staged := len(fields)+len(payloads)+len(index) > stageAbove
	var v []string
	var err error
	for try := 0; ; try++ {
		if staged {
			if err := s.stage(ctx, p.Plan.ID, hash, fields, payloads, index); err != nil {
				return engine.SubmitResult{}, err
			}
		}
		args := s.argv(scripts["submit"], 8+len(fields)+len(payloads)+len(index)+len(roots))
		args = append(args, p.Plan.ID, hash, len(p.Plan.Tasks))
		if staged {
			args = append(args, "s", 0, 0, 0)
		} else {
			args = append(args, "i", len(fields))
			args = append(args, fields...)
			args = append(args, len(payloads))
			args = append(args, payloads...)
			args = append(args, len(index))
			args = append(args, index...)
		}
		args = append(args, roots...)
		v, err = s.call(ctx, scripts["submit"], args)
		if err != nil {
			return engine.SubmitResult{}, err
		}
		if len(v) != 1 || v[0] != "R" || try > 0 {
			break
		}
	}
	r := newReader(v)
	res := engine.SubmitResult{Created: r.flag(), Pushed: r.pushed()}
	_, stopped := r.stopped()
	if err := r.done(); err != nil || !stopped {
		return res, err
	}
	// more roots than a call's budget: drain calls push the rest
	var d drained
	if err := s.drain(ctx, &d); err != nil {
		return engine.SubmitResult{}, err
	}
	res.Pushed = append(res.Pushed, d.Pushed...)
	return res, nil
}

// stageAbove is the number of field and value strings above which a plan
// is staged before its submit, so that no script call stores a large plan
// at once.
const stageAbove = 2000

// stage writes a plan's workflow-hash, payload-hash and index-hash fields
// into the staging keys stage:<id>:<hash>[:p|:i], 1,000 strings a command,
// with a TTL;
// submit.lua renames them into place.
func (s *Store) stage(ctx context.Context, id, hash string, fields, payloads, index []any) error {
	key := s.keys.stage(id, hash)
	pipe := s.rdb.Pipeline()
	for _, kv := range []struct {
		key string
		v   []any
	}{{key, fields}, {key + ":p", payloads}, {key + ":i", index}} {
		for i := 0; i < len(kv.v); i += 1000 {
			pipe.HSet(ctx, kv.key, kv.v[i:min(i+1000, len(kv.v))]...)
		}
		pipe.PExpire(ctx, kv.key, stageTTL)
	}
	_, err := pipe.Exec(ctx)
	return mapErr(err)
}

// stageTTL bounds how long an abandoned staging key lives.
const stageTTL = time.Hour

// Enqueue implements engine.Store.
func (s *Store) Enqueue(ctx context.Context, p engine.EnqueueParams) (engine.EnqueueResult, error) {
	args := s.argv(scripts["enqueue"], 1+enqueueArgs)
	args = append(args, 1)
	args, err := s.appendEnqueue(args, p.Job)
	if err != nil {
		return engine.EnqueueResult{}, err
	}
	v, err := s.call(ctx, scripts["enqueue"], args)
	if err != nil {
		return engine.EnqueueResult{}, err
	}
	r := newReader(v)
	res, err := enqueueReply(r, p.Job.ID)
	if r.err != nil {
		return engine.EnqueueResult{}, r.err
	}
	return res, err
}

// enqueueArgs is the number of enqueue.lua arguments per job.
const enqueueArgs = 8

// appendEnqueue validates j and appends its enqueue arguments to args.
func (s *Store) appendEnqueue(args []any, j engine.JobSpec) ([]any, error) {
	if err := engine.ValidateJob(j, s.cfg.Limits); err != nil {
		return nil, err
	}
	attempts := max(j.MaxAttempts, 1)
	backoff := j.Backoff
	if backoff <= 0 {
		backoff = engine.DefaultBackoff
	}
	var runAt int64
	if !j.RunAt.IsZero() {
		runAt = j.RunAt.UnixMilli()
	}
	return append(args, j.ID, j.Queue, j.Priority, jobSpec(j.Queue, j.Priority, attempts, backoff, j.Timeout)+expiriesField(j.MaxExpiries),
		flagArg(j.Payload != nil), bytesArg(j.Payload), runAt, engine.JobHash(j)), nil
}

// enqueueReply reads one job's part of enqueue's reply: created, state.
func enqueueReply(r *reader, id string) (engine.EnqueueResult, error) {
	created, state := r.str(), r.str()
	switch created {
	case "1", "":
		return engine.EnqueueResult{Created: created == "1", State: engine.State(state)}, nil
	}
	return engine.EnqueueResult{}, codeError(created, fmt.Sprintf("job %q exists with a different spec", id))
}

// appendClaimArgs appends a claim's ARGV (max, lease, nonce, queues...) to
// args.
func appendClaimArgs(args []any, p engine.ClaimParams) []any {
	args = append(args, p.Max, p.Lease.Milliseconds(), nonce())
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
func (s *Store) claimOnce(ctx context.Context, p engine.ClaimParams, wait time.Duration) ([]engine.Claimed, time.Duration, error) {
	var got []engine.Claimed
	for {
		out, due, at, stopped, err := s.claimCall(ctx, p, wait)
		if err != nil {
			return nil, 0, err
		}
		got = append(got, out...)
		if !stopped {
			return got, due, nil
		}
		if err := s.drain(ctx, nil); err != nil {
			return nil, 0, err
		}
		p.Queues, p.Max = p.Queues[max(at, 1)-1:], p.Max-len(out)
		if p.Max <= 0 {
			return got, -1, nil
		}
	}
}

// claimCall runs claim.lua once (claimOnce) and reports whether and in
// which queue it stopped on its budget.
func (s *Store) claimCall(ctx context.Context, p engine.ClaimParams, wait time.Duration) ([]engine.Claimed, time.Duration, int, bool, error) {
	waitArg := ""
	if wait > 0 {
		waitArg = strconv.FormatInt((wait + time.Second).Milliseconds(), 10)
	}
	args := s.argv(scripts["claim"], 4+len(p.Queues))
	args = append(args, p.Max, p.Lease.Milliseconds(), waitArg, nonce())
	for _, q := range p.Queues {
		args = append(args, q)
	}
	v, err := s.call(ctx, scripts["claim"], args)
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
	if err := s.readDeps(ctx, out, r.lazy); err != nil {
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

// Claim implements engine.Store. With p.Wait it blocks on the queues'
// wake-up lists (BLPOP), never sleeping in a loop: every push into a queue
// adds a token there; the wait ends no later than the next delayed job or
// lease deadline the claim saw, then the claim runs again. A cancelled
// context wakes the wait through a private list of this call.
func (s *Store) Claim(ctx context.Context, p engine.ClaimParams) ([]engine.Claimed, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.validateClaim(p); err != nil {
		return nil, err
	}
	if p.Wait <= 0 {
		out, _, err := s.claimOnce(ctx, p, 0)
		return out, err
	}
	deadline := time.Now().Add(p.Wait)
	var wakeKeys []string
	for _, q := range p.Queues {
		if k := s.keys.wake(q); !slices.Contains(wakeKeys, k) {
			wakeKeys = append(wakeKeys, k)
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	private := s.keys.prefix + "wk:" + hex.EncodeToString(rnd[:])
	wakeKeys = append(wakeKeys, private)
	stop := context.AfterFunc(ctx, func() {
		pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pipe := s.rdb.Pipeline()
		pipe.LPush(pctx, private, "1")
		pipe.PExpire(pctx, private, time.Minute)
		_, _ = pipe.Exec(pctx)
	})
	defer stop()
	for {
		out, due, err := s.claimOnce(ctx, p, max(time.Until(deadline), time.Millisecond))
		if err != nil || len(out) > 0 {
			return out, err
		}
		block := time.Until(deadline)
		if block <= 0 {
			return nil, nil
		}
		if due >= 0 && due < block {
			block = due
		}
		block = min(max(block, time.Millisecond), maxBlock)
		err = s.blpop(ctx, block, wakeKeys)
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
// decimal timeout (Redis 6 and later).
func (s *Store) blpop(ctx context.Context, d time.Duration, keys []string) error {
	if d >= time.Second {
		return s.rdb.BLPop(ctx, d.Truncate(time.Second), keys...).Err()
	}
	args := make([]any, 0, len(keys)+2)
	args = append(args, "BLPOP")
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
	return s.rdb.Do(ctx, args...).Err()
}

// Finish implements engine.Store.
func (s *Store) Finish(ctx context.Context, p engine.FinishParams) (engine.FinishResult, error) {
	lim := s.cfg.Limits
	if len(p.Outcomes) == 0 && p.Claim == nil {
		return engine.FinishResult{}, invalid("outcomes", "give at least one outcome or a claim")
	}
	if len(p.Outcomes) > lim.MaxBatch {
		return engine.FinishResult{}, tooLarge("outcomes", "%d outcomes, the limit is %d", len(p.Outcomes), lim.MaxBatch)
	}
	for _, o := range p.Outcomes {
		switch o.Kind {
		case engine.OutcomeCompleted, engine.OutcomeFailed, engine.OutcomeCancelled, engine.OutcomeReleased:
		default:
			return engine.FinishResult{}, invalid("kind", "outcome kind %q of job %q is not completed, failed, cancelled or released", o.Kind, o.JobID)
		}
		if len(o.Result) > lim.MaxResult {
			return engine.FinishResult{}, tooLarge("result", "result of job %q is %d bytes, the limit is %d", o.JobID, len(o.Result), lim.MaxResult)
		}
		if o.RetryAfter < 0 || o.RetryAfter > lim.MaxBackoff {
			return engine.FinishResult{}, invalid("retry_after", "%v of job %q is outside [0, %v]", o.RetryAfter, o.JobID, lim.MaxBackoff)
		}
	}
	if p.Claim != nil {
		if err := s.validateClaim(*p.Claim); err != nil {
			return engine.FinishResult{}, err
		}
	}
	res := engine.FinishResult{Settled: make([]engine.Settled, len(p.Outcomes))}
	// Outcomes whose job ID cannot exist are answered here; the others go
	// to the script, in order. sent lists those sent, or is nil when all
	// are.
	var sent []int
	for i, o := range p.Outcomes {
		if validJobID(o.JobID) {
			if sent != nil {
				sent = append(sent, i)
			}
			continue
		}
		if sent == nil {
			sent = make([]int, i, len(p.Outcomes))
			for k := range sent {
				sent[k] = k
			}
		}
		res.Settled[i] = engine.Settled{JobID: o.JobID, Err: fmt.Errorf("%w: job %q is unknown", engine.ErrLeaseLost, o.JobID)}
	}
	nSent := len(p.Outcomes)
	if sent != nil {
		nSent = len(sent)
	}
	if sent == nil {
		sent = make([]int, nSent)
		for k := range sent {
			sent[k] = k
		}
	}
	// A call that stops on its budget (drain.go) settled the first n of
	// what it was sent: the rest, and the claim, go in another call once
	// the cascade it left is drained.
	var doneIdx []int
	var kept []string // workflows that earlier calls of this finish ended
	for {
		n, claimed, at, stopped, err := s.finishOnce(ctx, p, sent, kept, res.Settled)
		if err != nil {
			return engine.FinishResult{}, err
		}
		res.Claimed = append(res.Claimed, claimed...)
		if !stopped {
			return res, nil
		}
		var d drained
		if err := s.drain(ctx, &d); err != nil {
			return engine.FinishResult{}, err
		}
		if at > 0 {
			// the claim stopped in its at-th queue: it goes on from there
			c := *p.Claim
			c.Queues, c.Max, c.Wait = c.Queues[at-1:], c.Max-len(claimed), 0
			more, _, err := s.claimOnce(ctx, c, 0)
			if err != nil {
				return engine.FinishResult{}, err
			}
			res.Claimed = append(res.Claimed, more...)
			return res, nil
		}
		if n > 0 {
			d.addTo(&res.Settled[sent[n-1]])
		}
		for _, i := range sent[:n] {
			if st := res.Settled[i]; st.WorkflowEnded {
				wf, _, _ := strings.Cut(st.JobID, "/")
				kept = append(kept, wf)
			}
		}
		doneIdx = append(doneIdx, sent[:n]...)
		sent = answerRepeats(p.Outcomes, doneIdx, sent[n:], res.Settled)
		if len(sent) == 0 && p.Claim == nil {
			return res, nil
		}
	}
}

// answerRepeats answers, among the outcomes at the indices rest, those
// that repeat the last outcome at done of the same job (same token, and
// answered without error), as one call would: with that outcome's Settled
// (its record may be gone since: a plain job that ended with retention 0).
// Every other outcome is left to send: the script finds in the job's
// record what one call would have known (a settle cleared the token and
// kept its Settled under its own; an outcome that repeated an older finish
// changed nothing). Returns the indices left to send.
func answerRepeats(outcomes []engine.Outcome, done, rest []int, settled []engine.Settled) []int {
	left := rest[:0:0]
	for _, i := range rest {
		o := outcomes[i]
		last := -1 // the last outcome of the job sent so far
		for _, k := range done {
			if outcomes[k].JobID == o.JobID {
				last = k
			}
		}
		if last < 0 || outcomes[last].Token != o.Token || settled[last].Err != nil {
			left = append(left, i)
			continue
		}
		settled[i] = settled[last]
		settled[i].Pushed = slices.Clone(settled[last].Pushed)
	}
	return left
}

// finishOnce sends the outcomes of p at the indices sent, and p's claim,
// in one finish call (which still finds the workflows kept names after
// their retention passed: earlier calls of this finish ended them), storing each Settled in settled; returns how many
// outcomes it settled, what it claimed, and whether and where it stopped
// on its budget (at: 0 among the outcomes, else in the claim's at-th
// queue).
func (s *Store) finishOnce(ctx context.Context, p engine.FinishParams, sent []int, kept []string, settled []engine.Settled) (n int, claimed []engine.Claimed, at int, stopped bool, err error) {
	lim := s.cfg.Limits
	nSent := len(sent)
	nq := 0
	if p.Claim != nil {
		nq = len(p.Claim.Queues)
	}
	args := s.argv(scripts["finish"], 1+8*nSent+4+nq)
	args = append(args, nSent)
	for _, i := range sent {
		o := &p.Outcomes[i]
		msg := o.Error
		if len(msg) > lim.MaxError {
			msg = msg[:lim.MaxError]
		}
		// RetryAfter in whole milliseconds, rounded up, as the model does.
		retryAfter := (o.RetryAfter + time.Millisecond - 1).Milliseconds()
		args = append(args, o.JobID, o.Token, kindArg(o.Kind), flagArg(o.Result != nil), bytesArg(o.Result), msg,
			flagArg(o.NonRetryable), retryAfter)
	}
	args = append(args, strings.Join(kept, " "))
	if p.Claim != nil {
		args = appendClaimArgs(args, *p.Claim)
	} else {
		args = append(args, 0, 0, argEmpty)
	}
	v, err := s.call(ctx, scripts["finish"], args)
	if err != nil {
		return 0, nil, 0, false, err
	}
	r := newReader(v)
	n = r.count()
	if r.err == nil && (n > nSent || (n < nSent && !strings.HasPrefix(v[len(v)-1], "P"))) {
		return 0, nil, 0, false, fmt.Errorf("%w: %d settled for %d outcomes", engine.ErrProtocol, n, nSent)
	}
	for k := range n {
		settled[sent[k]] = r.settled()
	}
	claimed = r.claimed()
	at, stopped = r.stopped()
	if err := r.done(); err != nil {
		return 0, nil, 0, false, err
	}
	if err := s.readDeps(ctx, claimed, r.lazy); err != nil {
		return 0, nil, 0, false, err
	}
	return n, claimed, at, stopped, nil
}

// Heartbeat implements engine.Store.
func (s *Store) Heartbeat(ctx context.Context, p engine.HeartbeatParams) ([]engine.LeaseStatus, error) {
	if err := s.validateBatch("leases", len(p.Leases)); err != nil {
		return nil, err
	}
	if err := s.validateLease(p.Extend); err != nil {
		return nil, err
	}
	out := make([]engine.LeaseStatus, len(p.Leases))
	args := s.argv(scripts["heartbeat"], 1+2*len(p.Leases))
	args = append(args, p.Extend.Milliseconds())
	var sent []int
	for i, l := range p.Leases {
		out[i] = engine.LeaseStatus{JobID: l.JobID, Lost: true}
		if validJobID(l.JobID) {
			sent = append(sent, i)
			args = append(args, l.JobID, l.Token)
		}
	}
	if len(sent) == 0 {
		return out, nil
	}
	v, err := s.call(ctx, scripts["heartbeat"], args)
	if err != nil {
		return nil, err
	}
	r := newReader(v)
	for _, i := range sent {
		lost, cancel, dl := r.flag(), r.flag(), r.time()
		if !lost {
			out[i] = engine.LeaseStatus{JobID: p.Leases[i].JobID, Cancel: cancel, Deadline: dl}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// ExpireLeases implements engine.Store.
func (s *Store) ExpireLeases(ctx context.Context, p engine.ExpireParams) (engine.ExpireResult, error) {
	n := p.Max
	if n == 0 {
		n = s.cfg.Limits.MaxBatch
	}
	if err := s.validateBatch("max", n); err != nil {
		return engine.ExpireResult{}, err
	}
	// a sweep that stops on its budget (drain.go) goes on in another call
	// once the cascade is drained
	var res engine.ExpireResult
	from := ""
	for {
		args := append(s.argv(scripts["expire"], 2), n)
		if from != "" {
			args = append(args, from)
		}
		v, err := s.call(ctx, scripts["expire"], args)
		if err != nil {
			return engine.ExpireResult{}, err
		}
		r := newReader(v)
		for k := r.count(); k > 0 && r.err == nil; k-- {
			res.Expired = append(res.Expired, r.settled())
		}
		res.Due = append(res.Due, r.pushed()...)
		mark, stopped := r.mark()
		if err := r.done(); err != nil {
			return engine.ExpireResult{}, err
		}
		if !stopped {
			return res, nil
		}
		from = mark
		var d drained
		if err := s.drain(ctx, &d); err != nil {
			return engine.ExpireResult{}, err
		}
		if k := len(res.Expired); k > 0 {
			d.addTo(&res.Expired[k-1])
		}
	}
}

// codeErr is a script's error reply "CODE detail": it matches the code's
// sentinel with errors.Is.
type codeErr struct {
	code   *engine.Error
	detail string
}

func (e *codeErr) Error() string { return e.code.Error() + ": " + e.detail }
func (e *codeErr) Unwrap() error { return e.code }

// cancelError decodes "WFENDED|JOBENDED <state> ..." error replies of the
// cancel scripts, which carry the state the model returns with the error.
func cancelError(err error) (string, error) {
	var ce *codeErr
	if !errors.As(err, &ce) || (ce.code != engine.ErrWorkflowEnded && ce.code != engine.ErrJobEnded) {
		return "", err
	}
	st, _, _ := strings.Cut(ce.detail, " ")
	return st, err
}

// CancelWorkflow implements engine.Store.
func (s *Store) CancelWorkflow(ctx context.Context, p engine.CancelWorkflowParams) (engine.CancelResult, error) {
	if !engine.ValidID(p.ID) {
		if err := ctx.Err(); err != nil {
			return engine.CancelResult{}, err
		}
		return engine.CancelResult{}, fmt.Errorf("%w: workflow %q", engine.ErrNotFound, p.ID)
	}
	undo := ""
	if p.Undo != nil {
		undo = "0"
		if *p.Undo {
			undo = "1"
		}
	}
	v, err := s.run(ctx, "cancel_workflow", p.ID, undo)
	if err != nil {
		st, err := cancelError(err)
		return engine.CancelResult{WorkflowState: engine.WorkflowState(st)}, err
	}
	r := newReader(v)
	res := engine.CancelResult{WorkflowState: engine.WorkflowState(r.str())}
	states, names := r.str(), strings.Split(r.str(), "\n")
	if states != "" && len(names) != len(states) {
		return engine.CancelResult{}, fmt.Errorf("%w: %d task states for %d names", engine.ErrProtocol, len(states), len(names))
	}
	for i := 0; i < len(states); i++ {
		if states[i] == 'w' || states[i] == 'q' {
			res.Cancelled = append(res.Cancelled, engine.TaskJobID(p.ID, names[i]))
		}
	}
	res.Stopping = r.strings()
	res.Pushed = r.pushed()
	_, stopped := r.stopped()
	if err := r.done(); err != nil || !stopped {
		return res, err
	}
	// the compensation it started stopped on the call's budget (drain.go)
	var d drained
	if err := s.drain(ctx, &d); err != nil {
		return engine.CancelResult{}, err
	}
	res.Pushed = append(res.Pushed, d.Pushed...)
	if d.Workflow == p.ID {
		res.WorkflowState = d.State
	}
	return res, nil
}

// CancelJob implements engine.Store.
func (s *Store) CancelJob(ctx context.Context, p engine.CancelJobParams) (engine.CancelResult, error) {
	if !validJobID(p.ID) {
		if err := ctx.Err(); err != nil {
			return engine.CancelResult{}, err
		}
		return engine.CancelResult{}, fmt.Errorf("%w: job %q", engine.ErrNotFound, p.ID)
	}
	v, err := s.run(ctx, "cancel_job", p.ID)
	if err != nil {
		st, err := cancelError(err)
		return engine.CancelResult{State: engine.State(st)}, err
	}
	r := newReader(v)
	res := engine.CancelResult{State: engine.State(r.str()), WorkflowState: engine.WorkflowState(r.str())}
	res.Cancelled = r.strings()
	res.Stopping = r.strings()
	res.Pushed = r.pushed()
	_, stopped := r.stopped()
	if err := r.done(); err != nil || !stopped {
		return res, err
	}
	// its cascade stopped on the call's budget (drain.go)
	var d drained
	if err := s.drain(ctx, &d); err != nil {
		return engine.CancelResult{}, err
	}
	res.Cancelled = append(res.Cancelled, d.Cancelled...)
	res.Pushed = append(res.Pushed, d.Pushed...)
	if d.Workflow != "" {
		res.WorkflowState = d.State
	}
	return res, nil
}

func (s *Store) getWorkflow(ctx context.Context, id string, evenExpired bool) (engine.Workflow, error) {
	if !engine.ValidID(id) {
		if err := ctx.Err(); err != nil {
			return engine.Workflow{}, err
		}
		return engine.Workflow{}, fmt.Errorf("%w: workflow %q", engine.ErrNotFound, id)
	}
	v, err := s.run(ctx, "get_workflow", id, flag(evenExpired))
	if err != nil {
		return engine.Workflow{}, err
	}
	if len(v) == 1 && v[0] == "L" {
		if v, err = s.readWorkflowHash(ctx, id); err != nil {
			return engine.Workflow{}, err
		}
	}
	return workflowFromHash(v)
}

// readWorkflowHash reads a large workflow's record, which get_workflow
// found live, as get_workflow's reply: the fields a snapshot shows
// (workflowFromHash), tasksPerPage tasks an HMGET, and the task-state
// string after them, all in one round trip. Each command is short
// whatever the workflow's size (spec/scripts.md, get_workflow). The pages
// agree with each other when the state string and the workflow's state
// fields read before and after them are the same (a task's attempt,
// result and error change only with its state byte, an undo's with urem
// or its own state); otherwise it reads again, and after three changes in
// a row it reads the whole record in one MULTI. A record removed in
// between (its TTL fired) is not found.
func (s *Store) readWorkflowHash(ctx context.Context, id string) ([]string, error) {
	key := s.keys.workflow(id)
	for range 3 {
		pipe := s.rdb.Pipeline()
		before := pipe.HMGet(ctx, key, wfHeaderFields...)
		st0 := pipe.Get(ctx, s.keys.taskStates(id))
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, mapErr(err)
		}
		hv := before.Val()
		n, _ := strconv.Atoi(str(hv[len(hv)-1]))
		if hv[0] == nil || n <= 0 {
			return nil, &codeErr{code: engine.ErrNotFound, detail: "workflow " + strconv.Quote(id)}
		}
		pipe = s.rdb.Pipeline()
		var pages []*redis.SliceCmd
		var names [][]string
		for first := 1; first <= n; first += tasksPerPage {
			fs := make([]string, 0, 8*tasksPerPage)
			for i := first; i <= min(first+tasksPerPage-1, n); i++ {
				// what workflowFromHash reads of task i and of its undo
				t, u := "t"+strconv.Itoa(i), "u"+strconv.Itoa(i)
				fs = append(fs, t, t+".a", t+".e", t+".r", t+".dp", u+".s", u+".a", u+".e")
			}
			names = append(names, fs)
			pages = append(pages, pipe.HMGet(ctx, key, fs...))
		}
		after := pipe.HMGet(ctx, key, wfHeaderFields...)
		st1 := pipe.Get(ctx, s.keys.taskStates(id))
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, mapErr(err)
		}
		if st0.Val() != st1.Val() || !slices.Equal(hv, after.Val()) {
			continue // it changed while being read
		}
		out := make([]string, 0, 2*len(hv)+16*n+2)
		for k, f := range wfHeaderFields {
			if v, ok := hv[k].(string); ok {
				out = append(out, f, v)
			}
		}
		for p, page := range pages {
			for k, v := range page.Val() {
				if v, ok := v.(string); ok {
					out = append(out, names[p][k], v)
				}
			}
		}
		return append(out, "S", st1.Val()), nil
	}
	return s.readWorkflowAtOnce(ctx, id)
}

// tasksPerPage is how many tasks one HMGET of readWorkflowHash reads.
const tasksPerPage = 500

// wfHeaderFields are the workflow fields a snapshot shows, and those that
// change when an undo does (urem), its task count last.
var wfHeaderFields = []string{"id", "st", "rs", "ff", "uoc", "cr", "cu", "h", "c", "en", "x", "urem", "rem", "n"}

// str is a reply value as a string ("" for nil).
func str(v any) string { s, _ := v.(string); return s }

// readWorkflowAtOnce reads a large workflow's hash and its task states in
// one MULTI (a workflow that kept changing while read in pages).
func (s *Store) readWorkflowAtOnce(ctx context.Context, id string) ([]string, error) {
	var h *redis.MapStringStringCmd
	var st *redis.StringCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		h = p.HGetAll(ctx, s.keys.workflow(id))
		st = p.Get(ctx, s.keys.taskStates(id))
		return nil
	})
	if errors.Is(err, redis.Nil) || (err == nil && len(h.Val()) == 0) {
		return nil, &codeErr{code: engine.ErrNotFound, detail: "workflow " + strconv.Quote(id)}
	}
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]string, 0, 2*len(h.Val())+2)
	for f, v := range h.Val() {
		out = append(out, f, v)
	}
	return append(out, "S", st.Val()), nil
}

func (s *Store) getJob(ctx context.Context, id string, evenExpired bool) (engine.Job, error) {
	if !validJobID(id) {
		if err := ctx.Err(); err != nil {
			return engine.Job{}, err
		}
		return engine.Job{}, fmt.Errorf("%w: job %q", engine.ErrNotFound, id)
	}
	v, err := s.run(ctx, "get_job", id, flag(evenExpired))
	if err != nil {
		return engine.Job{}, err
	}
	r := newReader(v)
	j := r.job()
	return j, r.err
}

// GetWorkflow implements engine.Store.
func (s *Store) GetWorkflow(ctx context.Context, id string) (engine.Workflow, error) {
	return s.getWorkflow(ctx, id, false)
}

// GetJob implements engine.Store.
func (s *Store) GetJob(ctx context.Context, id string) (engine.Job, error) {
	return s.getJob(ctx, id, false)
}

var workflowStates = []engine.WorkflowState{
	engine.WorkflowRunning, engine.WorkflowCompleted, engine.WorkflowFailed, engine.WorkflowCancelled,
	engine.WorkflowCompensating, engine.WorkflowCompensated, engine.WorkflowCompensationFailed,
}

// ListWorkflows implements engine.Store. The cursor is the model's,
// "<created ms>:<id>" of the previous page's last workflow.
func (s *Store) ListWorkflows(ctx context.Context, p engine.ListParams) (engine.WorkflowPage, error) {
	limit := p.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 {
		return engine.WorkflowPage{}, invalid("limit", "%d is outside [1, 1000]", p.Limit)
	}
	if p.State != "" && !slices.Contains(workflowStates, p.State) {
		return engine.WorkflowPage{}, invalid("state", "unknown workflow state %q", p.State)
	}
	cursor := ""
	if p.Cursor != "" {
		c, id, ok := strings.Cut(p.Cursor, ":")
		created, err := strconv.ParseInt(c, 10, 64)
		if !ok || err != nil || !engine.ValidID(id) {
			return engine.WorkflowPage{}, invalid("cursor", "%q is not a cursor this store returned", p.Cursor)
		}
		switch {
		case created < 0:
			return engine.WorkflowPage{}, ctx.Err()
		case created > 999_999_999_999_999:
			cursor = ""
		default:
			cursor = fmt.Sprintf("%015d:%s", created, id)
		}
	}
	v, err := s.run(ctx, "list", string(p.State), limit, cursor)
	if err != nil {
		return engine.WorkflowPage{}, err
	}
	r := newReader(v)
	next := r.str()
	n := r.count()
	var page engine.WorkflowPage
	for i := 0; i < n && r.err == nil; i++ {
		if r.peek() == "L" {
			// a large record, or one past what the call read itself
			r.i++
			id := r.str()
			w, err := s.getWorkflow(ctx, id, false)
			if errors.Is(err, engine.ErrNotFound) {
				continue // removed since (its retention passed)
			}
			if err != nil {
				return engine.WorkflowPage{}, err
			}
			page.Workflows = append(page.Workflows, w)
			continue
		}
		k := r.count()
		if r.i+k > len(r.v) {
			return engine.WorkflowPage{}, fmt.Errorf("%w: short list reply", engine.ErrProtocol)
		}
		w, err := workflowFromHash(r.v[r.i : r.i+k])
		if err != nil {
			return engine.WorkflowPage{}, err
		}
		r.i += k
		page.Workflows = append(page.Workflows, w)
	}
	if r.err != nil {
		return engine.WorkflowPage{}, r.err
	}
	if next != "" {
		c, id, _ := strings.Cut(next, ":")
		created, _ := strconv.ParseInt(strings.TrimLeft(c, "0"), 10, 64)
		page.NextCursor = strconv.FormatInt(created, 10) + ":" + id
	}
	return page, nil
}

// PauseQueue implements engine.Store.
func (s *Store) PauseQueue(ctx context.Context, queue string) error { return s.pause(ctx, queue, "1") }

// ResumeQueue implements engine.Store.
func (s *Store) ResumeQueue(ctx context.Context, queue string) error {
	return s.pause(ctx, queue, "0")
}

func (s *Store) pause(ctx context.Context, queue, v string) error {
	if !engine.ValidName(queue) {
		return invalidQueue(queue)
	}
	_, err := s.run(ctx, "pause", queue, v)
	return err
}

// PurgeQueue implements engine.Store.
func (s *Store) PurgeQueue(ctx context.Context, queue string) (engine.PurgeResult, error) {
	if !engine.ValidName(queue) {
		return engine.PurgeResult{}, invalidQueue(queue)
	}
	// a call goes through at most its budget of jobs (drain.go): those of
	// the queue it did not reach go in more calls, 1,000 at most a call
	var res engine.PurgeResult
	var rest []string
	for first := true; ; first = false {
		var sent []string
		args := []any{queue}
		if !first {
			sent = rest[:min(len(rest), 1000)]
			for _, id := range sent {
				args = append(args, id)
			}
		}
		v, err := s.run(ctx, "purge", args...)
		if err != nil {
			return engine.PurgeResult{}, err
		}
		r := newReader(v)
		res.Purged = append(res.Purged, r.strings()...)
		res.Pushed = append(res.Pushed, r.pushed()...)
		done, left := r.count(), r.strings()
		_, stopped := r.stopped()
		if err := r.done(); err != nil {
			return engine.PurgeResult{}, err
		}
		if first {
			rest = left
		} else if done <= len(sent) {
			rest = rest[done:]
		}
		if stopped {
			var d drained
			if err := s.drain(ctx, &d); err != nil {
				return engine.PurgeResult{}, err
			}
			res.Pushed = append(res.Pushed, d.Pushed...)
		}
		if len(rest) == 0 {
			return res, nil
		}
	}
}

// Queues implements engine.Store.
func (s *Store) Queues(ctx context.Context) ([]engine.QueueInfo, error) {
	v, err := s.run(ctx, "queues")
	if err != nil {
		return nil, err
	}
	r := newReader(v)
	out := queuesReply(r)
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// queuesReply reads the queues reply (reply.lua queues_reply).
func queuesReply(r *reader) []engine.QueueInfo {
	out := make([]engine.QueueInfo, r.count())
	for i := range out {
		out[i] = engine.QueueInfo{Name: r.str(), Paused: r.flag(), Ready: int(r.int()), Delayed: int(r.int()), Running: int(r.int())}
	}
	return out
}
