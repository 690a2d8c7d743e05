//go:build unix && faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// Work is the queue of the fault workloads: the payload is the task's
// index, the result its double.
var Work = client.NewQueue[int, int]("work")

// scaled multiplies n by WEIR_FAULT_SCALE.
func scaled(n int) int { return n * FaultScale() }

// newRedisClient returns a go-redis client of addr with short timeouts, so
// that a dead server surfaces as an error quickly; the test's end closes it.
func newRedisClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	return redistest.Client(t, &redis.Options{
		Addr:         addr,
		DialTimeout:  time.Second,
		ReadTimeout:  3 * time.Second,
		WriteTimeout: 3 * time.Second,
		PoolSize:     64,
	})
}

// newStore returns a redisstore.Store on rdb in namespace ns, with cfg when
// given (else the default config).
func newStore(t testing.TB, rdb redis.UniversalClient, ns string, cfg ...engine.Config) *redisstore.Store {
	t.Helper()
	opts := redisstore.Options{Namespace: ns}
	if len(cfg) > 0 {
		opts.Config = cfg[0]
	}
	s, err := redisstore.New(rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// workload is a set of workflows of the same DAG shape: task i (i ≥ 1)
// runs after task (i-1)/2 and, every third task, after task i-1 too, so
// there are fan-outs, joins and chains.
type workload struct {
	ids   []string
	plans map[string]engine.Plan
	deps  map[string][]string // task job ID → its dependencies' job IDs
	tasks int                 // tasks in all
}

func taskName(i int) string { return "t" + strconv.Itoa(i) }

func newWorkload(t testing.TB, prefix string, workflows, tasksPer, attempts int) *workload {
	t.Helper()
	w := &workload{plans: map[string]engine.Plan{}, deps: map[string][]string{}}
	for k := range workflows {
		id := fmt.Sprintf("%s-%05d", prefix, k)
		p := engine.Plan{ID: id, UndoOnCancel: true}
		for i := range tasksPer {
			payload, err := Work.EncodePayload(i)
			if err != nil {
				t.Fatal(err)
			}
			ts := engine.TaskSpec{Name: taskName(i), Queue: Work.Name(), Payload: payload, MaxAttempts: attempts, Backoff: 10 * time.Millisecond}
			if i > 0 {
				ts.After = append(ts.After, taskName((i-1)/2))
				if i%3 == 0 && (i-1)/2 != i-1 {
					ts.After = append(ts.After, taskName(i-1))
				}
			}
			for _, d := range ts.After {
				w.deps[weir.TaskJobID(id, ts.Name)] = append(w.deps[weir.TaskJobID(id, ts.Name)], weir.TaskJobID(id, d))
			}
			p.Tasks = append(p.Tasks, ts)
		}
		w.ids = append(w.ids, id)
		w.plans[id] = p
		w.tasks += tasksPer
	}
	return w
}

// effects counts each job's handler effects (successful handler runs).
type effects struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *effects) add(id string) {
	e.mu.Lock()
	if e.n == nil {
		e.n = map[string]int{}
	}
	e.n[id]++
	e.mu.Unlock()
}

// doubled returns how many effects happened beyond the first, over all jobs.
func (e *effects) doubled() (jobs, extra int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, n := range e.n {
		jobs++
		extra += n - 1
	}
	return
}

// startWorkers starts n workers of store on the Work queue, with obs wired
// in; the test's end stops them.
func startWorkers(t testing.TB, store engine.Store, n int, cfg worker.Config, obs *Observations, eff *effects, extra worker.Observer) []*worker.Worker {
	t.Helper()
	var ws []*worker.Worker
	for range n {
		c := cfg
		if c.Logger == nil {
			c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		}
		c.Middleware = append([]worker.Middleware{obs.Middleware}, c.Middleware...)
		c.Observer = obs.Observer(extra)
		w := worker.New(store, c)
		worker.Handle(w, Work, func(ctx context.Context, j *worker.Job[int]) (int, error) {
			if eff != nil {
				eff.add(j.ID)
			}
			return 2 * j.Payload, nil
		})
		runWorker(t, w)
		ws = append(ws, w)
	}
	return ws
}

// runWorker starts w; the test's end stops it (waiting up to 10 s for
// its running jobs).
func runWorker(t testing.TB, w *worker.Worker) {
	t.Helper()
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	})
}

// ackedBefore returns the submits of acks (ID → when the submit was
// acknowledged, written under mu) acknowledged before t.
func ackedBefore(mu *sync.Mutex, acks map[string]time.Time, t time.Time) map[string]time.Time {
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]time.Time, len(acks))
	for id, at := range acks {
		if at.Before(t) {
			out[id] = at
		}
	}
	return out
}

// endedIDs lists the IDs of every ended workflow through the store's
// listing API.
func endedIDs(ctx context.Context, store engine.Store) (map[string]weir.WorkflowState, error) {
	out := map[string]weir.WorkflowState{}
	for _, st := range []weir.WorkflowState{weir.WorkflowCompleted, weir.WorkflowFailed, weir.WorkflowCancelled,
		weir.WorkflowCompensated, weir.WorkflowCompensationFailed} {
		cursor := ""
		for {
			page, err := store.ListWorkflows(ctx, weir.ListParams{State: st, Limit: 1000, Cursor: cursor})
			if err != nil {
				return nil, err
			}
			for _, w := range page.Workflows {
				out[w.ID] = w.State
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
	}
	return out, nil
}

// waitEnded polls the listing until every workflow of ids has ended, or
// fails the test after limit.
func waitEnded(t testing.TB, store engine.Store, ids []string, limit time.Duration) map[string]weir.WorkflowState {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ended, err := endedIDs(ctx, store)
		cancel()
		if err == nil {
			missing := 0
			for _, id := range ids {
				if _, ok := ended[id]; !ok {
					missing++
				}
			}
			if missing == 0 {
				return ended
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d workflows have not ended after %v", missing, len(ids), limit)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("listing: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkInvariants runs CheckStore (retrying while Redis comes back) and
// fails the test on any violation; it returns the report.
func checkInvariants(t testing.TB, rdb redis.UniversalClient, ns, when string) *InvariantReport {
	t.Helper()
	var rep *InvariantReport
	var err error
	for try := 0; try < 50; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		rep, err = CheckStore(ctx, rdb, ns)
		cancel()
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("invariants %s: %v", when, err)
	}
	if !rep.OK() {
		t.Errorf("invariants %s: %d violations, first: %v", when, len(rep.Violations), rep.Violations[:min(10, len(rep.Violations))])
	}
	return rep
}

// checkObserved fails the test on any violation of the observed invariants.
func checkObserved(t testing.TB, obs *Observations, deps map[string][]string) *ObservedReport {
	t.Helper()
	r := obs.Check(deps)
	if len(r.Violations) > 0 {
		t.Errorf("observed invariants: %d violations, first: %v", len(r.Violations), r.Violations[:min(10, len(r.Violations))])
	}
	return r
}

// checkLosses checks, after a run whose server was killed at the times
// kills (in order), what the kills took back: a job whose handler started
// again, and a promotion or a workflow end seen twice, must each follow a
// kill that came after its last observation (its latest success or start
// before the rerun, the first promotion or end) and at most window after
// it. With acked, only reruns that followed a success are counted as lost
// (a rerun after a start alone lost only a lease). It fails the test on an
// observed violation other than these doubles, and returns the losses
// counted, the oldest loss's age and the observed report.
func checkLosses(t testing.TB, obs *Observations, deps map[string][]string, kills []time.Time, window time.Duration, acked bool) (lost int, worst time.Duration, or *ObservedReport) {
	t.Helper()
	explain := func(what string, last, again time.Time) {
		i := sort.Search(len(kills), func(i int) bool { return !kills[i].Before(last) })
		if i == len(kills) || kills[i].After(again) {
			t.Errorf("%s: rerun at %s not preceded by a kill after %s", what, again.Format(time.StampMilli), last.Format(time.StampMilli))
			return
		}
		age := kills[i].Sub(last)
		worst = max(worst, age)
		if age > window {
			t.Errorf("%s: lost a transition acknowledged %v before a kill (allowed %v)", what, age, window)
		}
	}
	starts, rets := obs.Times("started"), obs.Times("succeeded")
	for id, s := range starts {
		if len(s) < 2 {
			continue
		}
		last := s[0]
		for _, x := range rets[id] {
			if x.Before(s[1]) && x.After(last) {
				last = x
			}
		}
		if acked && !last.After(s[0]) {
			continue
		}
		lost++
		explain(id, last, s[1])
	}
	or = obs.Check(deps)
	for _, v := range or.Violations {
		// doubles are checked against the kills below; a start before a
		// dependency ended is never allowed
		if strings.Contains(v, "before dependency") || strings.Contains(v, "started with dependency") {
			t.Errorf("observed: %s", v)
		}
	}
	for kind, m := range map[string]map[string][]time.Time{"promotion": obs.Times("promoted"), "workflow end": obs.Times("ended")} {
		for id, ts := range m {
			if len(ts) > 1 {
				explain(kind+" "+id, ts[0], ts[1])
			}
		}
	}
	return lost, worst, or
}

// typedError reports whether err is one the API promises: an engine
// sentinel, a context error or a network error.
func typedError(err error) bool {
	if weir.Sentinel(err) != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// atomicInt is an atomic counter.
type atomicInt = atomic.Int64

func redisZ(m string) redis.Z { return redis.Z{Score: 0, Member: m} }

// mustMember returns workflow id's listing member.
func mustMember(t testing.TB, rdb redis.UniversalClient, P, id string) string {
	t.Helper()
	ms, err := rdb.ZRange(context.Background(), P+"wf", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if strings.HasSuffix(m, ":"+id) {
			return m
		}
	}
	t.Fatalf("workflow %s not in the listing", id)
	return ""
}

// logCounter is a slog.Handler that keeps the worker's warnings and errors,
// so a test can show which store errors the workers met and retried.
type logCounter struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCounter) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	l.mu.Lock()
	l.msgs = append(l.msgs, b.String())
	l.mu.Unlock()
	return nil
}
func (l *logCounter) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCounter) WithGroup(string) slog.Handler      { return l }

// count returns how many records were logged and how many contain sub.
func (l *logCounter) count(sub string) (all, with int, example string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, sub) {
			with++
			if example == "" {
				example = m
			}
		}
	}
	return len(l.msgs), with, example
}

func itoa(n int) string { return strconv.Itoa(n) }

func slogOf(h slog.Handler) *slog.Logger { return slog.New(h) }

func errorsIsNotFound(err error) bool { return errors.Is(err, weir.ErrNotFound) }

type errState weir.WorkflowState

func (e errState) Error() string { return "workflow ended " + string(e) }
