package conformance

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Status is how a test of the suite ended.
type Status string

// Statuses of a Result.
const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Skipped Status = "skipped"
)

// Result is one test of the suite (a subtest path such as
// "Scenarios/chain" or "Sequences/batches/0") as RunReport ran it.
type Result struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Output holds what the test logged, in order: for a failure the
	// differing values and the reproducing sequence, for a skip the reason.
	Output  []string      `json:"output,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Report is what RunReport returns: every test that ran, parents before
// their subtests, in the order they started.
type Report struct {
	Results []Result `json:"results"`
	// Passed, Failed and Skipped count the results without subtests (the
	// leaves).
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Sequences is how many random sequences ran (counting shrinking).
	Sequences int64         `json:"sequences"`
	Elapsed   time.Duration `json:"elapsed_ns"`
}

// OK reports whether no test failed.
func (r Report) OK() bool { return r.Failed == 0 }

// RunReport runs the same suite as Run outside go test (for a command such
// as weir-conformance) and returns what happened to each test. Parallel
// subtests run in parallel as under go test; a test ends at Fatal, FailNow
// or Skip (runtime.Goexit, as in package testing), and a panic fails the
// test that panicked. When ctx is done the tests not started yet are
// skipped and the stores' calls see a canceled context.
//
// rapid (the random sequences) reads package testing's flags, so RunReport
// calls testing.Init and, when the default flag set was not parsed yet,
// parses it with no arguments. rapid's flags (-rapid.checks,
// -rapid.nofailfile, ...) are on the default flag set: a command should
// set rapid.nofailfile, or rapid writes fail files under ./testdata/rapid.
func RunReport(ctx context.Context, newStore NewStore, opts ...Option) Report {
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil) // no arguments: nothing to fail on
	}
	r := &runner{ctx: ctx}
	start := time.Now()
	root := r.newNode(nil, "")
	r.exec(root, func(t suiteT) { run(t, newStore, opts) })
	rep := Report{Elapsed: time.Since(start)}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.all[1:] {
		res := Result{Name: n.name, Status: Passed, Output: n.out, Elapsed: n.elapsed}
		switch {
		case n.failed:
			res.Status = Failed
		case n.skipped:
			res.Status = Skipped
		}
		rep.Results = append(rep.Results, res)
		if n.children == 0 {
			switch res.Status {
			case Passed:
				rep.Passed++
			case Failed:
				rep.Failed++
			case Skipped:
				rep.Skipped++
			}
		}
	}
	if root.failed && rep.Failed == 0 { // a failure outside any subtest
		rep.Failed++
		rep.Results = append(rep.Results, Result{Name: "(suite)", Status: Failed, Output: root.out})
	}
	rep.Sequences = r.sequences.Load()
	return rep
}

// runner runs a tree of tests for RunReport.
type runner struct {
	ctx       context.Context
	mu        sync.Mutex
	all       []*node
	sequences atomic.Int64
}

// node is one test of a RunReport run; it implements suiteT.
type node struct {
	r        *runner
	parent   *node
	name     string
	ctx      context.Context
	cancel   context.CancelFunc
	subs     sync.WaitGroup // subtests still running
	released chan struct{}  // closed when Run may return: the test ended or called Parallel
	parallel bool
	// under r.mu:
	out      []string
	failed   bool
	skipped  bool
	children int
	cleanups []func()
	elapsed  time.Duration
}

func (r *runner) newNode(parent *node, name string) *node {
	n := &node{r: r, parent: parent, name: name, released: make(chan struct{})}
	base := r.ctx
	if parent != nil {
		base = parent.ctx
		if parent.name != "" {
			n.name = parent.name + "/" + name
		}
	}
	n.ctx, n.cancel = context.WithCancel(base)
	r.mu.Lock()
	r.all = append(r.all, n)
	if parent != nil {
		parent.children++
	}
	r.mu.Unlock()
	return n
}

// exec runs f as test n in its own goroutine and returns when n ended or
// called Parallel.
func (r *runner) exec(n *node, f func(suiteT)) {
	if n.parent != nil {
		n.parent.subs.Add(1)
	}
	go func() {
		start := time.Now()
		defer func() {
			if v := recover(); v != nil {
				n.logf("panic: %v\n%s", v, stack())
				n.Fail()
			}
			n.subs.Wait()
			n.cancel()
			r.mu.Lock()
			cs := n.cleanups
			n.cleanups = nil
			r.mu.Unlock()
			for i := len(cs) - 1; i >= 0; i-- {
				func() {
					defer func() {
						if v := recover(); v != nil {
							n.logf("panic in cleanup: %v", v)
							n.Fail()
						}
					}()
					cs[i]()
				}()
			}
			r.mu.Lock()
			n.elapsed = time.Since(start)
			failed := n.failed
			r.mu.Unlock()
			if failed && n.parent != nil {
				n.parent.Fail()
			}
			n.release()
			if n.parent != nil {
				n.parent.subs.Done()
			}
		}()
		if err := r.ctx.Err(); err != nil && n.parent != nil {
			n.Skipf("not run: %v", err)
		}
		f(n)
	}()
	<-n.released
}

func stack() string {
	b := make([]byte, 8<<10)
	return string(b[:runtime.Stack(b, false)])
}

func (n *node) release() {
	n.r.mu.Lock()
	defer n.r.mu.Unlock()
	select {
	case <-n.released:
	default:
		close(n.released)
	}
}

func (n *node) logf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	n.r.mu.Lock()
	n.out = append(n.out, strings.TrimSuffix(s, "\n"))
	n.r.mu.Unlock()
}

// Run runs f as the subtest name of n; it returns when the subtest ended
// (reporting whether it passed) or called Parallel (reporting true).
func (n *node) Run(name string, f func(suiteT)) bool {
	c := n.r.newNode(n, name)
	n.r.exec(c, f)
	n.r.mu.Lock()
	defer n.r.mu.Unlock()
	return c.parallel || !c.failed
}

// Parallel lets the Run that started n return; n goes on running.
func (n *node) Parallel() {
	n.r.mu.Lock()
	n.parallel = true
	n.r.mu.Unlock()
	n.release()
}

func (n *node) Helper()                           {}
func (n *node) Name() string                      { return n.name }
func (n *node) Context() context.Context          { return n.ctx }
func (n *node) Log(args ...any)                   { n.logf("%s", fmt.Sprintln(args...)) }
func (n *node) Logf(format string, args ...any)   { n.logf(format, args...) }
func (n *node) Error(args ...any)                 { n.Log(args...); n.Fail() }
func (n *node) Errorf(format string, args ...any) { n.logf(format, args...); n.Fail() }
func (n *node) Fatal(args ...any)                 { n.Log(args...); n.FailNow() }
func (n *node) Fatalf(format string, args ...any) { n.logf(format, args...); n.FailNow() }
func (n *node) Skip(args ...any)                  { n.Log(args...); n.SkipNow() }
func (n *node) Skipf(format string, args ...any)  { n.logf(format, args...); n.SkipNow() }

func (n *node) Fail() {
	n.r.mu.Lock()
	n.failed = true
	n.r.mu.Unlock()
}

func (n *node) FailNow() {
	n.Fail()
	runtime.Goexit()
}

func (n *node) Failed() bool {
	n.r.mu.Lock()
	defer n.r.mu.Unlock()
	return n.failed
}

func (n *node) SkipNow() {
	n.r.mu.Lock()
	n.skipped = true
	n.r.mu.Unlock()
	runtime.Goexit()
}

func (n *node) Cleanup(f func()) {
	n.r.mu.Lock()
	n.cleanups = append(n.cleanups, f)
	n.r.mu.Unlock()
}
