//go:build unix

package faults

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// InvariantReport is what CheckStore found: the figures it counted and every
// violated invariant, one line each. A store is sound when Violations is
// empty.
type InvariantReport struct {
	Workflows  int            // workflows in the listing index
	Ended      int            // of which ended
	Tasks      int            // task jobs of those workflows
	TaskStates map[string]int // task jobs by state
	PlainJobs  int            // plain jobs found
	Running    int            // running jobs (task, undo, plain), each checked for a lease
	Violations []string
}

// OK reports whether no invariant was violated.
func (r *InvariantReport) OK() bool { return len(r.Violations) == 0 }

func (r *InvariantReport) addf(format string, args ...any) {
	if len(r.Violations) < 200 {
		r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
	}
}

// String summarises the report on one line.
func (r *InvariantReport) String() string {
	return fmt.Sprintf("workflows=%d ended=%d tasks=%d states=%v plain=%d running=%d violations=%d",
		r.Workflows, r.Ended, r.Tasks, r.TaskStates, r.PlainJobs, r.Running, len(r.Violations))
}

var stateByte = map[byte]string{
	'w': "waiting", 'q': "queued", 'r': "running", 'c': "completed", 'f': "failed", 'x': "cancelled", 'W': "cancelled", 'D': "cancelled", 'o': "open",
}

var wfStates = []string{"running", "completed", "failed", "cancelled", "compensating", "compensated", "compensation_failed"}

// taskSpec is the static spec t<i> of a workflow hash (spec/keys.md) with
// its dependencies (field t<i>.dp).
type taskSpec struct {
	name, queue, flags, undoQueue string
	deps                          []int
}

func parseSpec(s, dp string) (taskSpec, error) {
	f := strings.Split(s, "|")
	if len(f) != 8 {
		return taskSpec{}, fmt.Errorf("spec %q has %d fields, want 8", s, len(f))
	}
	flags, _, _ := strings.Cut(f[6], ":") // a concurrency key follows the flags
	t := taskSpec{name: f[0], queue: f[1], flags: flags, undoQueue: f[7]}
	if dp != "" {
		for _, d := range strings.Split(dp, ",") {
			n, err := strconv.Atoi(d)
			if err != nil {
				return taskSpec{}, fmt.Errorf("spec %q: dep %q", s, d)
			}
			t.deps = append(t.deps, n)
		}
	}
	return t, nil
}

// snapshotScript reads, in one atomic step, every key of a namespace that
// CheckStore looks at, so that a check made while workers run sees one
// consistent state. It writes nothing.
const snapshotScript = `
local P = ARGV[1]
local out = {}
local t = redis.call('TIME')
out[1] = tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local qs = {}
for _, q in ipairs(redis.call('HKEYS', P .. 'queues')) do
  qs[#qs + 1] = {q,
    redis.call('ZRANGE', P .. 'q:' .. q .. ':r', 0, -1, 'WITHSCORES'),
    redis.call('ZRANGE', P .. 'q:' .. q .. ':d', 0, -1, 'WITHSCORES'),
    redis.call('ZRANGE', P .. 'q:' .. q .. ':a', 0, -1, 'WITHSCORES'),
    redis.call('ZRANGE', P .. 'q:' .. q .. ':kr', 0, -1, 'WITHSCORES'),
    redis.call('LRANGE', P .. 'q:' .. q .. ':l', 0, -1),
    redis.call('HGETALL', P .. 'q:' .. q .. ':lx'),
    redis.call('HGET', P .. 'q:' .. q .. ':s', 'x') or '0'}
end
out[2] = qs
local members = redis.call('ZRANGE', P .. 'wf', 0, -1)
out[3] = members
local idx = {}
for i = 2, #ARGV do idx[#idx + 1] = redis.call('ZRANGE', P .. 'wf:' .. ARGV[i], 0, -1) end
out[4] = idx
out[5] = redis.call('ZRANGE', P .. 'expiry', 0, -1)
local wfs = {}
for _, m in ipairs(members) do
  local id = string.sub(m, string.find(m, ':', 1, true) + 1)
  local key = P .. 'w:' .. id
  wfs[#wfs + 1] = {m, redis.call('HGETALL', key), redis.call('GET', key .. ':s') or '',
    redis.call('PTTL', key), redis.call('PTTL', key .. ':s'), redis.call('PTTL', key .. ':i'), redis.call('PTTL', key .. ':p')}
end
out[6] = wfs
local jobs = {}
for _, key in ipairs(redis.call('KEYS', P .. 'j:*')) do
  jobs[#jobs + 1] = {key, redis.call('HGETALL', key), redis.call('PTTL', key)}
end
out[7] = jobs
local bs = {}
for _, key in ipairs(redis.call('KEYS', P .. 'xb:*')) do
  bs[#bs + 1] = {key, redis.call('LRANGE', key, 0, -1), redis.call('ZSCORE', P .. 'xb', string.sub(key, #P + 4)) or ''}
end
out[8] = bs
return out
`

type qsets struct{ r, d, a map[string]float64 }

// leaseSentinel is the member, 65 "~", that a batch write of a lease set
// adds to keep it a skiplist (spec/keys.md, q:<queue>:a): not a lease.
var leaseSentinel = strings.Repeat("~", 65)

// CheckStore reads namespace ns of the Redis behind rdb, following
// spec/keys.md, in one atomic snapshot (a read-only EVAL), cross-checks
// ended workflows with the store's GetWorkflow API, and checks weir's store
// invariants:
//
//   - every task is in exactly one state (one valid state byte; a queued job
//     is in exactly one of its queue's ready and delayed sets and not in the
//     active set; a running job only in the active set; other states in none);
//   - every workflow is in exactly one state index (wf:<state>), the one its
//     hash says;
//   - every running job (task, undo, plain) has a lease: a token, a
//     deadline, and an entry in its queue's active set scored with that
//     deadline; every active-set entry is a running job;
//   - counters equal a recount: a workflow's rem (tasks not ended), a
//     waiting task's o (open dependencies), urem (undo jobs not ended);
//   - no waiting task has all its dependencies satisfied, and no started
//     task has an unsatisfied dependency (the store side of "no task
//     started before its dependencies ended");
//   - every ended workflow and plain job has en; a workflow also x, an
//     entry in the expiry set and a Redis TTL on each of its keys, a plain
//     job no TTL and its ID in a retention bucket (P xb:<minute>) that the
//     bucket index holds; a live record has no TTL.
//
// It returns an error only when Redis cannot be read.
//
// A namespace of several partitions (spec/partitions.md) is checked
// partition by partition, each in one snapshot.
func CheckStore(ctx context.Context, rdb redis.UniversalClient, ns string) (*InvariantReport, error) {
	return CheckStoreWith(ctx, rdb, ns, CheckOptions{})
}

// CheckOptions are CheckStoreWith's settings.
type CheckOptions struct {
	// Now, when not zero, is the clock of a namespace whose stores run on a
	// test clock (redisstore.Options.Clock): the check takes it for the
	// server's TIME (a workflow whose retention passed by it is gone), reads
	// the ended workflows with a store on it, and wants of an ended plain
	// job its entry in the expiry index (j:<id>) instead of a TTL, and of
	// an ended workflow no TTL: such a store gives an ended record no
	// PEXPIREAT, its expiry index alone removes it (spec/keys.md, P expiry).
	Now time.Time
}

// CheckStoreWith is CheckStore with options.
func CheckStoreWith(ctx context.Context, rdb redis.UniversalClient, ns string, o CheckOptions) (*InvariantReport, error) {
	if ns == "" {
		ns = "default"
	}
	n, err := rdb.HGet(ctx, "weir:{"+ns+":0}:seq3", "np").Int()
	if errors.Is(err, redis.Nil) {
		n, err = 1, nil
	}
	if err != nil {
		return nil, fmt.Errorf("faults: partitions: %w", err)
	}
	rep := &InvariantReport{TaskStates: map[string]int{}}
	opts := redisstore.Options{Namespace: ns, Config: engine.Config{Partitions: n}}
	if !o.Now.IsZero() {
		opts.Clock = func() time.Time { return o.Now }
	}
	store, err := redisstore.New(rdb, opts)
	if err != nil {
		return nil, err
	}
	for p := range n {
		if err := checkPartition(ctx, rdb, store, rep, redisstore.PartitionPrefix(ns, p, n), o); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// checkPartition adds to rep what one partition, of key prefix P, shows.
func checkPartition(ctx context.Context, rdb redis.UniversalClient, store *redisstore.Store, rep *InvariantReport, P string, o CheckOptions) error {
	argv := append([]any{P}, anySlice(wfStates)...)
	raw, err := rdb.Eval(ctx, snapshotScript, []string{P + "seq3"}, argv...).Slice()
	if err != nil {
		return fmt.Errorf("faults: snapshot: %w", err)
	}
	if len(raw) != 8 {
		return fmt.Errorf("faults: snapshot has %d parts", len(raw))
	}
	now, _ := strconv.ParseInt(str(raw[0]), 10, 64)
	testClock := !o.Now.IsZero()
	if testClock {
		now = o.Now.UnixMilli()
	}

	qs := map[string]*qsets{}
	for _, x := range list(raw[1]) {
		q := list(x)
		r := scores(q[1])
		// keyed ready jobs (q:<q>:kr) are ready jobs too
		maps.Copy(r, scores(q[4]))
		// and the live elements of the list of priority 0 (q:<q>:l): of an
		// ID with a stale count k (q:<q>:lx), the first k are stale
		checkList(rep, str(q[0]), strs(q[5]), strs(q[6]), str(q[7]), r)
		a := scores(q[3])
		// the lease set's sentinel (spec/keys.md, q:<queue>:a), which a
		// batch write of the set adds, is no lease
		delete(a, leaseSentinel)
		qs[str(q[0])] = &qsets{r: r, d: scores(q[2]), a: a}
	}
	members := strs(raw[2])
	stateIdx := map[string]map[string]bool{}
	for i, x := range list(raw[3]) {
		stateIdx[wfStates[i]] = map[string]bool{}
		for _, m := range strs(x) {
			stateIdx[wfStates[i]][m] = true
		}
	}
	expiry := map[string]bool{}
	for _, m := range strs(raw[4]) {
		expiry[m] = true
	}

	seenActive := map[string]bool{} // "queue\x00job" of every running job
	markers := map[string]bool{}    // "queue\x00marker" of every deadline marker
	for q, s := range qs {
		for id := range s.d {
			if strings.HasSuffix(id, engine.DeadlineSuffix) {
				markers[q+"\x00"+id] = true
			}
		}
	}
	checkJob := func(id, queue, state string, get func(string) (string, bool)) {
		s := qs[queue]
		if s == nil {
			if state == "queued" || state == "running" {
				rep.addf("job %s is %s in unknown queue %q", id, state, queue)
			}
			return
		}
		_, inR := s.r[id]
		_, inD := s.d[id]
		sa, inA := s.a[id]
		switch state {
		case "queued":
			if inR == inD || inA {
				rep.addf("job %s queued: in ready=%v delayed=%v active=%v, want exactly one of ready/delayed", id, inR, inD, inA)
			}
		case "open":
			// a signal task: in its delayed set while it has a timeout
			if inR || inA {
				rep.addf("job %s open: in ready=%v active=%v, want neither", id, inR, inA)
			}
		case "running":
			rep.Running++
			seenActive[queue+"\x00"+id] = true
			tk, okT := get("tk")
			dl, okD := get("dl")
			if !okT || tk == "" || !okD || dl == "" {
				rep.addf("job %s running without a lease (tk=%q dl=%q)", id, tk, dl)
			}
			if !inA || inR || inD {
				rep.addf("job %s running: in ready=%v delayed=%v active=%v, want active only", id, inR, inD, inA)
			} else if d, err := strconv.ParseFloat(dl, 64); err == nil && d != sa {
				rep.addf("job %s running: lease deadline %s but active score %.0f", id, dl, sa)
			}
		default:
			// Waiting, pending and ended jobs hold no lease. (A stale ready
			// entry is tolerated by the spec: a claim drops it.)
			if inA {
				rep.addf("job %s is %s but in the active set of %q", id, state, queue)
			}
			if inD {
				rep.addf("job %s is %s but in the delayed set of %q", id, state, queue)
			}
		}
	}

	for _, x := range list(raw[5]) {
		w := list(x)
		m := str(w[0])
		_, id, _ := strings.Cut(m, ":")
		h := hash(w[1])
		if len(h) == 0 {
			// The hash expired by TTL before a sweep removed the index
			// entry: allowed only for an ended workflow.
			found := false
			for _, st := range wfStates {
				if expiry["w:"+st+":"+m] {
					found = true
				}
			}
			if !found {
				rep.addf("workflow %s in the index has no hash and no expiry entry", id)
			}
			continue
		}
		if xv, _ := strconv.ParseInt(h["x"], 10, 64); xv > 0 && xv <= now {
			continue // retention passed: treated as gone
		}
		rep.Workflows++
		var ttls [4]int64
		for k := range ttls {
			ttls[k], _ = w[3+k].(int64)
		}
		sb := str(w[2])
		rep.Tasks += len(sb)
		checkWorkflow(rep, id, m, h, sb, ttls, testClock, stateIdx, expiry, checkJob)
		// a deadline marker exactly while the workflow has a deadline, runs
		// and its cancel was not requested (spec/states.md, Deadline)
		if _, q, ok := strings.Cut(h["t1"], "|"); ok {
			q, _, _ = strings.Cut(q, "|")
			marked := false
			if s := qs[q]; s != nil {
				_, marked = s.d[engine.DeadlineMarker(id)]
			}
			want := h["wdl"] != "" && h["st"] == string(weir.WorkflowRunning) && h["cr"] != "1"
			if marked != want {
				rep.addf("workflow %s (%s, cr=%q, wdl=%q): deadline marker in %q's delayed set %v, want %v", id, h["st"], h["cr"], h["wdl"], q, marked, want)
			}
			delete(markers, q+"\x00"+engine.DeadlineMarker(id))
		}
		if weir.WorkflowState(h["st"]).Ended() {
			// Cross-check with the store's read API: an ended workflow
			// no longer changes.
			got, err := store.GetWorkflow(ctx, id)
			if err != nil {
				rep.addf("workflow %s: GetWorkflow: %v", id, err)
				continue
			}
			if string(got.State) != h["st"] {
				rep.addf("workflow %s: GetWorkflow state %s, hash st %s", id, got.State, h["st"])
			}
			for k, t := range got.Tasks {
				if k < len(sb) && string(t.State) != stateByte[sb[k]] {
					rep.addf("workflow %s task %s: GetWorkflow %s, state byte %q", id, t.Name, t.State, sb[k])
				}
			}
		}
	}
	all := map[string]bool{}
	for _, m := range members {
		all[m] = true
	}
	for st, set := range stateIdx {
		for m := range set {
			if !all[m] {
				rep.addf("workflow %s in wf:%s but not in wf", m, st)
			}
		}
	}

	inBucket := map[string]bool{}
	for _, x := range list(raw[7]) {
		b := list(x)
		if str(b[2]) == "" {
			rep.addf("retention bucket %s is not in the bucket index", str(b[0]))
		}
		for _, id := range list(b[1]) {
			inBucket[str(id)] = true
		}
	}
	for _, x := range list(raw[6]) {
		j := list(x)
		id := strings.TrimPrefix(str(j[0]), P+"j:")
		h := hash(j[1])
		if len(h) == 0 {
			continue
		}
		rep.PlainJobs++
		st := h["s"]
		switch st {
		case "queued", "running":
			if ttl, _ := j[2].(int64); ttl > 0 {
				rep.addf("live plain job %s has a TTL (%d ms)", id, ttl)
			}
		case "completed", "failed", "cancelled":
			// a retention bucket entry (protocol 3 since buckets), or, for a
			// job ended before them (a migrated namespace), its expiry
			// entry j:<id> or a TTL
			ttl, _ := j[2].(int64)
			switch {
			case inBucket[id] && ttl > 0:
				rep.addf("plain job %s ended %s has a retention bucket entry and a TTL (%d ms)", id, st, ttl)
			case !inBucket[id] && !expiry["j:"+id] && (testClock || ttl <= 0):
				rep.addf("plain job %s ended %s without a retention bucket entry (nor an expiry entry j:%s or a TTL from before buckets)", id, st, id)
			}
			if h["en"] == "" {
				rep.addf("plain job %s ended without en", id)
			}
		default:
			rep.addf("plain job %s has state %q", id, st)
		}
		queue, _, _ := strings.Cut(h["spec"], "|")
		checkJob(id, queue, st, func(f string) (string, bool) { v, ok := h[f]; return v, ok })
	}
	for m := range markers {
		q, id, _ := strings.Cut(m, "\x00")
		rep.addf("delayed set of %q holds deadline marker %s of no live workflow", q, id)
	}
	for q, s := range qs {
		for id := range s.a {
			if !seenActive[q+"\x00"+id] {
				rep.addf("active set of %q holds %s, which is not a running job of that queue", q, id)
			}
		}
	}
	return nil
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func list(v any) []any { l, _ := v.([]any); return l }

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

func strs(v any) []string {
	l := list(v)
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = str(x)
	}
	return out
}

func hash(v any) map[string]string {
	l := list(v)
	m := make(map[string]string, len(l)/2)
	for i := 0; i+1 < len(l); i += 2 {
		m[str(l[i])] = str(l[i+1])
	}
	return m
}

func scores(v any) map[string]float64 {
	l := list(v)
	m := make(map[string]float64, len(l)/2)
	for i := 0; i+1 < len(l); i += 2 {
		f, _ := strconv.ParseFloat(str(l[i+1]), 64)
		m[str(l[i])] = f
	}
	return m
}

func checkWorkflow(rep *InvariantReport, id, member string, h map[string]string, sb string,
	ttls [4]int64, testClock bool, stateIdx map[string]map[string]bool, expiry map[string]bool,
	checkJob func(id, queue, state string, get func(string) (string, bool))) {
	st := h["st"]
	n, _ := strconv.Atoi(h["n"])
	if len(sb) != n {
		rep.addf("workflow %s: %d state bytes for %d tasks", id, len(sb), n)
		return
	}
	// Exactly one state index.
	in := []string{}
	for _, s := range wfStates {
		if stateIdx[s][member] {
			in = append(in, s)
		}
	}
	if len(in) != 1 || in[0] != st {
		rep.addf("workflow %s is %q but in state indexes %v", id, st, in)
	}
	ended := weir.WorkflowState(st).Ended()
	specs := make([]taskSpec, n+1)
	for i := 1; i <= n; i++ {
		sp, err := parseSpec(h["t"+strconv.Itoa(i)], h["t"+strconv.Itoa(i)+".dp"])
		if err != nil {
			rep.addf("workflow %s task %d: %v", id, i, err)
			return
		}
		specs[i] = sp
	}
	states := make([]string, n+1)
	rem := 0
	for i := 1; i <= n; i++ {
		s, ok := stateByte[sb[i-1]]
		if !ok {
			rep.addf("workflow %s task %s: state byte %q", id, specs[i].name, sb[i-1])
			s = "?"
		}
		states[i] = s
		rep.TaskStates[s]++
		if !weir.State(s).Ended() {
			rem++
		}
	}
	if got := h["rem"]; got != strconv.Itoa(rem) {
		rep.addf("workflow %s: rem=%s, recount %d", id, got, rem)
	}
	if ended && rem != 0 {
		rep.addf("workflow %s ended %s with %d tasks not ended", id, st, rem)
	}
	if (st == "compensating") != (rem == 0 && !ended) && st != "running" {
		rep.addf("workflow %s is %s with rem %d", id, st, rem)
	}
	if st == "running" && rem == 0 {
		rep.addf("workflow %s running with every task ended", id)
	}
	for i := 1; i <= n; i++ {
		sp, s := specs[i], states[i]
		pre := "t" + strconv.Itoa(i) + "."
		jid := id + "/" + sp.name
		always := strings.Contains(sp.flags, "A")
		satisfied := 0
		for _, d := range sp.deps {
			ds := weir.State(states[d])
			if ds == weir.Completed || (always && ds.Ended()) {
				satisfied++
			}
		}
		open := len(sp.deps) - satisfied
		switch s {
		case "waiting":
			o := strconv.Itoa(len(sp.deps))
			if v, ok := h[pre+"o"]; ok {
				o = v
			}
			if o != strconv.Itoa(open) {
				rep.addf("task %s waiting: o=%s, recount %d", jid, o, open)
			}
			if open == 0 {
				rep.addf("task %s waiting with every dependency satisfied", jid)
			}
		case "queued", "open", "running", "completed", "failed":
			if open != 0 {
				rep.addf("task %s is %s but %d dependencies are not satisfied", jid, s, open)
			}
		}
		// a signal task (flag S) ends by a signal or its timeout, with no
		// attempt
		if (s == "completed" || s == "failed") && h[pre+"a"] == "" && !strings.Contains(sp.flags, "S") {
			rep.addf("task %s is %s without any attempt", jid, s)
		}
		checkJob(jid, sp.queue, s, func(f string) (string, bool) { v, ok := h[pre+f]; return v, ok })
	}
	// Undo jobs.
	urem := 0
	hasUndo := false
	for i := 1; i <= n; i++ {
		us, ok := h["u"+strconv.Itoa(i)+".s"]
		if !ok {
			continue
		}
		hasUndo = true
		if !weir.State(us).Ended() {
			urem++
		}
		pre := "u" + strconv.Itoa(i) + "."
		checkJob(id+"/"+specs[i].name+"/undo", specs[i].undoQueue, us, func(f string) (string, bool) { v, ok := h[pre+f]; return v, ok })
	}
	if hasUndo && h["urem"] != strconv.Itoa(urem) {
		rep.addf("workflow %s: urem=%s, recount %d", id, h["urem"], urem)
	}
	if st == "compensating" && urem == 0 {
		rep.addf("workflow %s compensating with no undo left", id)
	}
	// End records and TTLs.
	if ended {
		rep.Ended++
		if h["en"] == "" || h["x"] == "" {
			rep.addf("workflow %s ended %s without en/x", id, st)
		}
		if !expiry["w:"+st+":"+member] {
			rep.addf("workflow %s ended %s without expiry entry w:%s:%s", id, st, st, member)
		}
		for k, suf := range []string{"", ":s", ":i", ":p"} {
			ttl := ttls[k]
			if ttl == -2 || testClock { // key absent (:p with no payloads), or no TTL on a test clock
				continue
			}
			if ttl <= 0 {
				rep.addf("workflow %s ended %s: key w:%s%s has no TTL (%d)", id, st, id, suf, ttl)
			}
		}
	} else {
		if h["en"] != "" {
			rep.addf("workflow %s is %s but has en=%s", id, st, h["en"])
		}
		for k, suf := range []string{"", ":s", ":i", ":p"} {
			if ttl := ttls[k]; ttl > 0 {
				rep.addf("live workflow %s: key w:%s%s has a TTL (%d ms)", id, id, suf, ttl)
			}
		}
	}
}

// Observations records what handlers and worker observers saw, for the
// invariants that only the outside can check: no task started before its
// dependencies ended, each job promoted at most once, each workflow ended
// at most once. It is safe for concurrent use. Wire it with Middleware
// (handler starts and returns) and Observer (worker events), and call
// WorkflowEnded for ends the test causes itself (a CancelWorkflow reply).
type Observations struct {
	mu        sync.Mutex
	starts    map[string][]time.Time // job ID → handler starts
	returns   map[string][]time.Time // job ID → handler returns with nil
	promoted  map[string][]time.Time
	wfEnded   map[string][]time.Time
	succeeded map[string][]time.Time
	badDeps   []string
}

// NewObservations returns an empty record.
func NewObservations() *Observations {
	return &Observations{
		starts: map[string][]time.Time{}, returns: map[string][]time.Time{},
		promoted: map[string][]time.Time{},
		wfEnded:  map[string][]time.Time{}, succeeded: map[string][]time.Time{},
	}
}

// Middleware records each handler start (with the dependency outcomes the
// store handed it) and each successful return.
func (o *Observations) Middleware(next worker.Handler) worker.Handler {
	return func(ctx context.Context, j *worker.JobInfo) error {
		o.mu.Lock()
		o.starts[j.ID] = append(o.starts[j.ID], time.Now())
		for _, d := range j.Deps {
			if !d.State.Ended() {
				o.badDeps = append(o.badDeps, fmt.Sprintf("%s started with dependency %s %s", j.ID, d.Task, d.State))
			}
		}
		o.mu.Unlock()
		err := next(ctx, j)
		if err == nil {
			o.mu.Lock()
			o.returns[j.ID] = append(o.returns[j.ID], time.Now())
			o.mu.Unlock()
		}
		return err
	}
}

// Observer returns a worker.Observer that records, with their times, the
// promotions, successes and workflow ends a worker reports, then calls
// next (when not nil).
func (o *Observations) Observer(next worker.Observer) worker.Observer {
	return func(e worker.Event) {
		now := time.Now()
		o.mu.Lock()
		switch e.Kind {
		case worker.EventPromoted:
			o.promoted[e.JobID] = append(o.promoted[e.JobID], now)
		case worker.EventWorkflowEnded:
			o.wfEnded[e.Workflow] = append(o.wfEnded[e.Workflow], now)
		case worker.EventSucceeded:
			o.succeeded[e.JobID] = append(o.succeeded[e.JobID], now)
		}
		o.mu.Unlock()
		if next != nil {
			next(e)
		}
	}
}

// WorkflowEnded records an end the test caused itself (for example a
// CancelWorkflow whose reply says the workflow ended).
func (o *Observations) WorkflowEnded(wf string) {
	o.mu.Lock()
	o.wfEnded[wf] = append(o.wfEnded[wf], time.Now())
	o.mu.Unlock()
}

// Times returns a copy of the observation times of one kind, by job ID
// (workflow ID for "ended"): kind is "started", "returned", "succeeded",
// "promoted" or "ended".
func (o *Observations) Times(kind string) map[string][]time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	src := map[string]map[string][]time.Time{
		"started": o.starts, "returned": o.returns, "succeeded": o.succeeded,
		"promoted": o.promoted, "ended": o.wfEnded,
	}[kind]
	out := make(map[string][]time.Time, len(src))
	for k, v := range src {
		out[k] = slices.Clone(v)
	}
	return out
}

// Starts returns how many times job id's handler started.
func (o *Observations) Starts(id string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.starts[id])
}

// ObservedReport is what Check found in the observations.
type ObservedReport struct {
	Started        int // jobs whose handler started at least once
	Reruns         int // handler starts beyond the first, over all jobs
	Promotions     int
	DupPromotions  int // promotions beyond the first of the same job
	WorkflowEnds   int
	DupWorkflowEnd int // workflow ends beyond the first
	Violations     []string
}

// String summarises the report on one line.
func (r *ObservedReport) String() string {
	return fmt.Sprintf("started=%d reruns=%d promotions=%d dup_promotions=%d wf_ends=%d dup_wf_ends=%d violations=%d",
		r.Started, r.Reruns, r.Promotions, r.DupPromotions, r.WorkflowEnds, r.DupWorkflowEnd, len(r.Violations))
}

// Check checks the observed invariants: every dependency handed to a
// starting handler had ended; no task started before a handler of each
// dependency had returned successfully (deps lists each task job's
// dependency job IDs; nil skips that check); no job was promoted twice; no
// workflow ended twice. Duplicates are also reported as violations.
func (o *Observations) Check(deps map[string][]string) *ObservedReport {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := &ObservedReport{}
	r.Violations = append(r.Violations, o.badDeps...)
	for id, s := range o.starts {
		r.Started++
		r.Reruns += len(s) - 1
		for _, d := range deps[id] {
			rets := o.returns[d]
			if len(rets) == 0 || !rets[0].Before(s[0]) {
				if len(r.Violations) < 200 {
					r.Violations = append(r.Violations, fmt.Sprintf("%s started at %s before dependency %s returned", id, s[0].Format(time.StampMicro), d))
				}
			}
		}
	}
	for id, ts := range o.promoted {
		n := len(ts)
		r.Promotions += n
		if n > 1 {
			r.DupPromotions += n - 1
			r.Violations = append(r.Violations, fmt.Sprintf("%s promoted %d times", id, n))
		}
	}
	for id, ts := range o.wfEnded {
		n := len(ts)
		r.WorkflowEnds += n
		if n > 1 {
			r.DupWorkflowEnd += n - 1
			r.Violations = append(r.Violations, fmt.Sprintf("workflow %s ended %d times", id, n))
		}
	}
	sort.Strings(r.Violations)
	return r
}

// checkList adds queue q's live list elements (spec/keys.md, q:<queue>:l)
// to r (score 0), and reports a stale count that is not the sum of lx's or
// exceeds the elements, an ID with more than one live element, and an
// ID both live in the list and in q:<q>:r.
func checkList(rep *InvariantReport, q string, l, lx []string, x string, r map[string]float64) {
	left := map[string]int{}
	sum := 0
	for i := 0; i+1 < len(lx); i += 2 {
		n, _ := strconv.Atoi(lx[i+1])
		left[lx[i]] = n
		sum += n
	}
	if want, _ := strconv.Atoi(x); want != sum || sum > len(l) {
		rep.addf("queue %s: stale count x=%s, lx sums to %d, list holds %d", q, x, sum, len(l))
	}
	live := map[string]bool{}
	for _, id := range l {
		if left[id] > 0 {
			left[id]--
			continue
		}
		if live[id] {
			rep.addf("queue %s: job %s live twice in the ready list", q, id)
		}
		if _, inR := r[id]; inR {
			rep.addf("queue %s: job %s in the ready list and the ready set", q, id)
		}
		live[id] = true
		r[id] = 0
	}
}
