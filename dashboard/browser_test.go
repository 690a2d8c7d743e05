package dashboard_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirflow/weir/dashboard"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/rest"
)

// The browser tests drive the dashboard in a headless Chromium (Debian's
// chromium package) through the DevTools protocol (chromedp). They skip
// when no Chromium is found, unless WEIR_BROWSER=required (.ci/run sets
// it). WEIR_CHROMIUM names the binary; else chromium, chromium-browser,
// google-chrome are looked up in PATH.

// browserTimeout bounds a whole browser test: a deadline for a hung
// browser, not a timed assertion.
const browserTimeout = 2 * time.Minute

// chromiumPath returns the browser to run, or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome"}
	if p := os.Getenv("WEIR_CHROMIUM"); p != "" {
		names = []string{p}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("WEIR_BROWSER") == "required" {
		t.Fatalf("WEIR_BROWSER=required but none of %v is found", names)
	}
	t.Skipf("no Chromium (%v) found; WEIR_BROWSER=required makes this a failure", names)
	return ""
}

// browser is a headless Chromium tab, and what its page reported: script
// exceptions and console or browser-log errors (a CSP violation among
// them).
type browser struct {
	ctx      context.Context
	wg       sync.WaitGroup // the goroutines reading the tab's events
	mu       sync.Mutex
	problems []string
}

// newBrowser starts Chromium with a new profile and opens a tab of
// width x height; both end with the test.
func newBrowser(t *testing.T, width, height int) *browser {
	t.Helper()
	path := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	t.Cleanup(cancel)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	b := &browser{ctx: bctx}
	if err := chromedp.Do(bctx); err != nil { // starts the browser and opens the tab
		t.Fatalf("start %s: %v", path, err)
	}
	messages := chromedp.Console(bctx)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException || m.Source == "security" {
				b.mu.Lock()
				b.problems = append(b.problems, string(m.Type)+": "+m.String()+" "+m.URL)
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		// Close the browser before its profile directory is removed.
		_ = chromedp.Cancel(bctx)
		bcancel()
		acancel()
		b.wg.Wait()
	})
	return b
}

// acceptDialogs makes the tab accept every dialog (confirm) it opens from
// now on.
func (b *browser) acceptDialogs() {
	dialogs := chromedp.Events(b.ctx, page.JavascriptDialogOpening)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for _, err := range dialogs {
			if err != nil {
				return
			}
			if _, err := chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true}); err != nil {
				return
			}
		}
	}()
}

// run runs actions in the tab; a failure (a selector never matched before
// the deadline, say) fails the test.
func (b *browser) run(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatalf("browser: %v (page problems: %q)", err, b.reported())
	}
}

// reported returns what the page reported so far.
func (b *browser) reported() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.problems)
}

// evaluate evaluates a JavaScript expression in b's page into a T.
func evaluate[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// wait waits until the page has an element matching the CSS selector.
func wait(sel string) chromedp.Action[chromedp.Void] { return chromedp.WaitReady(chromedp.CSS(sel)) }

// click clicks the first element matching the CSS selector once one
// matches: the page's own click() on the element (a click event on an SVG
// element, which has no click()), found and clicked in one step. (chromedp.Click finds the node, then sends mouse events to it: a
// page that re-renders in between, as a refresh after an action does,
// fails it with "Could not find node with given id".)
func click(sel string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(sel)
	return chromedp.Poll[chromedp.Void](`(() => { const e = document.querySelector(` + string(q) + `); if (!e) return false; ` +
		`if (e.click) e.click(); else e.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true})); return true })()`)
}

// node is a task's node in the drawn DAG.
type node struct {
	Task, State, Class, Fill string
}

// nodes reads the DAG's nodes: their task, state, classes and the fill
// the style sheet gives their box.
func (b *browser) nodes(t *testing.T) []node {
	t.Helper()
	return evaluate[[]node](t, b, `[...document.querySelectorAll('#dag-svg g.node')].map(g => ({
		Task: g.dataset.task, State: g.dataset.state, Class: g.getAttribute('class'),
		Fill: getComputedStyle(g.querySelector('rect.box')).fill}))`)
}

// submit posts a workflow file to the API and fails the test unless it is
// created.
func submit(t *testing.T, srv string, contentType, body string) {
	t.Helper()
	req, err := http.NewRequest("POST", srv+"/v1/workflows", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %s", res.Status)
	}
}

// claim claims the queued jobs of queue as a worker would and returns them
// by job ID.
func claim(t *testing.T, s engine.Store, queue string) map[string]engine.Claimed {
	t.Helper()
	cs, err := s.Claim(context.Background(), engine.ClaimParams{Queues: []string{queue}, Max: 50, Lease: time.Hour, WorkerID: "test-worker.1"})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]engine.Claimed{}
	for _, c := range cs {
		m[c.Job.ID] = c
	}
	return m
}

// finish ends a claimed job: completed with result, or failed with errText
// (not retried).
func finish(t *testing.T, s engine.Store, c engine.Claimed, result, errText string) {
	t.Helper()
	o := engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}
	if errText != "" {
		o.Kind, o.Error, o.NonRetryable = engine.OutcomeFailed, errText, true
	} else {
		b, err := msgpack.Marshal(result)
		if err != nil {
			t.Fatal(err)
		}
		o.Result = b
	}
	res, err := s.Finish(context.Background(), engine.FinishParams{Outcomes: []engine.Outcome{o}})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Settled {
		if st.Err != nil {
			t.Fatalf("finish %s: %v", c.Job.ID, st.Err)
		}
	}
}

// TestBrowser opens the dashboard in Chromium on a memstore through the
// REST API and checks what a user sees and does: the workflow list, the
// workflow's DAG (one node per task, coloured by its state, an edge per
// dependency) following the store as a worker runs the tasks, pausing and
// resuming a queue, the token handling, and no script error or CSP
// violation on the way.
func TestBrowser(t *testing.T) {
	b := newBrowser(t, 1280, 900)
	s := memstore.New()
	srv := newServer(t, rest.Config{Store: s, Token: testToken, Dashboard: dashboard.Handler()})
	submit(t, srv.URL, "application/json", `{"id":"wf-1","tasks":[
		{"name":"a","run":"true"},
		{"name":"b","run":"true","after":["a"]},
		{"name":"c","run":"true","after":["a"]},
		{"name":"d","run":"true","after":["b","c"],"undo":{"run":"true"}}]}`)

	// The token arrives in the fragment, moves to sessionStorage and leaves
	// the address bar.
	b.run(t, chromedp.Navigate(srv.URL+"/#token="+testToken), wait(`#workflow-table tr[data-workflow="wf-1"]`))
	href := evaluate[string](t, b, `location.href`)
	stored := evaluate[string](t, b, `sessionStorage.getItem('weir.token')`)
	if strings.Contains(href, testToken) || stored != testToken {
		t.Errorf("after load: location %q, sessionStorage token %q; want the token stored and gone from the URL", href, stored)
	}
	listed := evaluate[string](t, b, `document.querySelector('tr[data-workflow="wf-1"] .badge').dataset.state`)
	if listed != "running" {
		t.Errorf("the list shows wf-1 %q, want running", listed)
	}

	// The workflow page: its DAG.
	b.run(t, click(`tr[data-workflow="wf-1"] a`), wait(`#dag-svg g.node[data-task="d"]`))
	checkNodes := func(want map[string]string) []node {
		t.Helper()
		ns := b.nodes(t)
		var names []string
		for _, n := range ns {
			names = append(names, n.Task)
			if n.State != want[n.Task] || !strings.Contains(n.Class, "st-"+n.State) {
				t.Errorf("node %s: state %q, classes %q; want %s", n.Task, n.State, n.Class, want[n.Task])
			}
		}
		if !slices.Equal(names, []string{"a", "b", "c", "d"}) {
			t.Errorf("the DAG's nodes are %v, want a b c d", names)
		}
		return ns
	}
	ns := checkNodes(map[string]string{"a": "queued", "b": "waiting", "c": "waiting", "d": "waiting"})
	edges := evaluate[[]string](t, b, `[...document.querySelectorAll('#dag-svg path.edge')].map(e => e.dataset.from + '>' + e.dataset.to).sort()`)
	if want := []string{"a>b", "a>c", "b>d", "c>d"}; !slices.Equal(edges, want) {
		t.Errorf("the DAG's edges are %v, want %v", edges, want)
	}
	undos := evaluate[int](t, b, `document.querySelectorAll('#dag-svg g.node[data-task="d"] g.undo').length`)
	if undos != 1 {
		t.Errorf("task d's node has %d undo marks, want 1", undos)
	}
	if ns[0].Fill == ns[1].Fill {
		t.Errorf("a queued and a waiting node have the same fill %s: the style sheet did not colour them", ns[0].Fill)
	}

	// Live: the page follows the store while a worker runs the tasks.
	cs := claim(t, s, "default")
	b.run(t, wait(`#dag-svg g.node[data-task="a"][data-state="running"]`))
	checkNodes(map[string]string{"a": "running", "b": "waiting", "c": "waiting", "d": "waiting"})
	finish(t, s, cs["wf-1/a"], "hello", "")
	b.run(t, wait(`#dag-svg g.node[data-task="b"][data-state="queued"]`))
	ns = checkNodes(map[string]string{"a": "completed", "b": "queued", "c": "queued", "d": "waiting"})
	if ns[0].Fill == ns[1].Fill || ns[0].Fill == ns[3].Fill {
		t.Errorf("fills completed %s, queued %s, waiting %s: want each its own", ns[0].Fill, ns[1].Fill, ns[3].Fill)
	}
	cs = claim(t, s, "default")
	finish(t, s, cs["wf-1/b"], "", "exit status 3: disk full")
	b.run(t, wait(`#dag-svg g.node[data-task="b"][data-state="failed"]`),
		wait(`#workflow-meta`), click(`#dag-svg g.node[data-task="b"]`), wait(`.job-card[data-job="wf-1/b"]`))
	jobText := evaluate[string](t, b, `document.querySelector('.job-card[data-job="wf-1/b"]').textContent`)
	if !strings.Contains(jobText, "exit status 3: disk full") {
		t.Errorf("the job card of the failed task says %q, want its error", jobText)
	}
	// its attempt history: the one attempt, by the worker that claimed it
	attempts := evaluate[[]string](t, b, `[...document.querySelectorAll('.job-card[data-job="wf-1/b"] table.attempt-history tbody tr')].map(r => r.dataset.outcome + ' ' + r.children[1].textContent)`)
	if want := []string{"failed test-worker.1"}; !slices.Equal(attempts, want) {
		t.Errorf("the job card's attempt history rows are %q, want %q", attempts, want)
	}

	// Cancel, confirmed in the page's dialog.
	b.acceptDialogs()
	b.run(t, click(`#cancel-workflow`), wait(`#workflow-meta .cancel-requested`))
	wf, err := s.GetWorkflow(context.Background(), "wf-1")
	if err != nil {
		t.Fatal(err)
	}
	if !wf.CancelRequested {
		t.Errorf("after Cancel the workflow is %s without a cancel requested", wf.State)
	}
	// c's worker stops it: the workflow ends.
	c := cs["wf-1/c"]
	if _, err := s.Finish(context.Background(), engine.FinishParams{Outcomes: []engine.Outcome{{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCancelled}}}); err != nil {
		t.Fatal(err)
	}
	if wf, err = s.GetWorkflow(context.Background(), "wf-1"); err != nil {
		t.Fatal(err)
	}
	if wf.State == weir.WorkflowRunning {
		t.Fatalf("the workflow is still running after its last job was cancelled")
	}
	b.run(t, wait(`h1 .badge[data-state="`+string(wf.State)+`"]`))
	if n := evaluate[int](t, b, `document.querySelectorAll('#cancel-workflow').length`); n != 0 {
		t.Errorf("the ended workflow's page shows %d Cancel buttons", n)
	}

	// Re-run, confirmed in the page's dialog: the failed and cancelled
	// tasks run again, a keeps its result, the page shows run 2.
	b.run(t, click(`#rerun-workflow`), wait(`h1 .badge[data-state="running"]`), wait(`#workflow-run`))
	if wf, err = s.GetWorkflow(context.Background(), "wf-1"); err != nil {
		t.Fatal(err)
	}
	if wf.Run != 2 || wf.State != weir.WorkflowRunning || wf.Tasks[0].State != weir.Completed || wf.Tasks[1].State != weir.Queued {
		t.Errorf("after Re-run the workflow is %s, run %d, tasks a %s b %s; want running, run 2, a completed, b queued",
			wf.State, wf.Run, wf.Tasks[0].State, wf.Tasks[1].State)
	}
	if run := evaluate[string](t, b, `document.querySelector('#workflow-run').textContent`); run != "run2" {
		t.Errorf("the page's run says %q, want run2", run)
	}
	if n := evaluate[int](t, b, `document.querySelectorAll('#rerun-workflow').length`); n != 0 {
		t.Errorf("the running workflow's page shows %d Re-run buttons", n)
	}

	// The queues page: pause and resume.
	b.run(t, click(`#nav-queues`), wait(`tr[data-queue="default"][data-paused="false"] button.pause`))
	b.run(t, click(`tr[data-queue="default"] button.pause`), wait(`tr[data-queue="default"][data-paused="true"] button.resume`))
	qs, err := s.Queues(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || !qs[0].Paused {
		t.Errorf("after Pause the store has the queues %+v, want default paused", qs)
	}
	b.run(t, click(`tr[data-queue="default"] button.resume`), wait(`tr[data-queue="default"][data-paused="false"]`))
	if qs, err = s.Queues(context.Background()); err != nil {
		t.Fatal(err)
	} else if qs[0].Paused {
		t.Errorf("after Resume the store has the queues %+v, want default not paused", qs)
	}
	// a concurrency limit set elsewhere shows on the next refresh
	if err := s.LimitQueue(context.Background(), engine.LimitQueueParams{Queue: "default", Concurrency: 3}); err != nil {
		t.Fatal(err)
	}
	b.run(t, wait(`tr[data-queue="default"] td[data-limit="3"]`))
	// and so does a rate limit
	if err := s.RateLimitQueue(context.Background(), engine.RateLimitQueueParams{Queue: "default", Limit: 10, Period: time.Second}); err != nil {
		t.Fatal(err)
	}
	b.run(t, wait(`tr[data-queue="default"] td[data-rate="10/1000"]`))
	// and a per-key limit
	if err := s.LimitKeys(context.Background(), engine.LimitKeysParams{Queue: "default", Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	b.run(t, wait(`tr[data-queue="default"] td[data-key-limit="2"]`))
	// The API has the inspector's routes: each queue gets a Purge button and
	// links to its jobs by state (TestBrowserActions drives them on a real
	// weir dev).
	if n := evaluate[int](t, b, `document.querySelectorAll('tr[data-queue="default"] button.purge').length`); n != 1 {
		t.Errorf("the queues page shows %d Purge buttons for default, want 1 (the API has the purge route)", n)
	}
	if n := evaluate[int](t, b, `document.querySelectorAll('tr[data-queue="default"] a[href="#/queues/default"]').length`); n != 1 {
		t.Errorf("the queues page links default to its jobs %d times, want 1", n)
	}

	if p := b.reported(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}

// TestBrowserNoToken: with no token configured the page works as is.
func TestBrowserNoToken(t *testing.T) {
	b := newBrowser(t, 1000, 700)
	s := memstore.New()
	srv := newServer(t, rest.Config{Store: s, Dashboard: dashboard.Handler()})
	submit(t, srv.URL, "application/json", `{"id":"wf-open","tasks":[{"name":"a","run":"true"}]}`)
	b.run(t, chromedp.Navigate(srv.URL+"/"), wait(`#workflow-table tr[data-workflow="wf-open"]`))
	if p := b.reported(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}

// TestBrowserToken: a tab without the token is asked for it, and the page
// works once it is given.
func TestBrowserToken(t *testing.T) {
	b := newBrowser(t, 1000, 700)
	s := memstore.New()
	srv := newServer(t, rest.Config{Store: s, Token: testToken, Dashboard: dashboard.Handler()})
	submit(t, srv.URL, "application/json", `{"id":"wf-t","tasks":[{"name":"a","run":"true"}]}`)
	b.run(t, chromedp.Navigate(srv.URL+"/"), wait(`#token-form`))
	shown := evaluate[int](t, b, `document.querySelectorAll('#workflow-table').length`)
	if shown != 0 {
		t.Error("the workflow list shows without a token")
	}
	b.run(t, chromedp.SendKeys(chromedp.CSS(`#token-input`), testToken), click(`#token-form button[type="submit"]`),
		wait(`#workflow-table tr[data-workflow="wf-t"]`))
	// The 401 that asked for the token is logged by the browser as a failed
	// load: that one is expected.
	for _, p := range b.reported() {
		if !strings.Contains(p, "401") {
			t.Errorf("the page reported %q", p)
		}
	}
}

// TestBrowserOnFailure: a catch task (on_failure, spec/workflow-file.md)
// is marked in the DAG (its box, the edges into it, its state line) and
// in the task table; the other tasks and edges are not.
func TestBrowserOnFailure(t *testing.T) {
	b := newBrowser(t, 1000, 700)
	s := memstore.New()
	srv := newServer(t, rest.Config{Store: s, Dashboard: dashboard.Handler()})
	submit(t, srv.URL, "application/json", `{"id":"wf-catch","tasks":[
		{"name":"a","run":"true"},
		{"name":"b","run":"true","after":["a"]},
		{"name":"alert","run":"true","after":["a","b"],"on_failure":true},
		{"name":"tidy","run":"true","after":["b"],"always":true}]}`)
	b.run(t, chromedp.Navigate(srv.URL+"/#/workflows/wf-catch"), wait(`#dag-svg g.node[data-task="alert"]`))
	type edge struct {
		From, To, Class, Stroke string
	}
	edges := evaluate[[]edge](t, b, `[...document.querySelectorAll('#dag-svg path.edge')].map(e => ({
		From: e.dataset.from, To: e.dataset.to, Class: e.getAttribute('class'), Stroke: getComputedStyle(e).stroke}))`)
	strokes := map[bool]map[string]bool{true: {}, false: {}}
	for _, e := range edges {
		catch := e.To == "alert"
		if strings.Contains(e.Class, "on-failure") != catch {
			t.Errorf("edge %s>%s has classes %q: on-failure should be there only on the edges into alert", e.From, e.To, e.Class)
		}
		if strings.Contains(e.Class, "always") != (catch || e.To == "tidy") {
			t.Errorf("edge %s>%s has classes %q: always should be on the edges into alert and tidy", e.From, e.To, e.Class)
		}
		strokes[catch][e.Stroke] = true
	}
	if len(edges) != 4 {
		t.Errorf("the DAG has %d edges, want 4: %v", len(edges), edges)
	}
	for c := range strokes[true] {
		if strokes[false][c] {
			t.Errorf("an edge into the catch task and another edge share the stroke %s: the style sheet did not mark it", c)
		}
	}
	for _, n := range b.nodes(t) {
		if strings.Contains(n.Class, "on-failure") != (n.Task == "alert") {
			t.Errorf("node %s has classes %q: on-failure should mark alert only", n.Task, n.Class)
		}
	}
	sub := evaluate[string](t, b, `document.querySelector('#dag-svg g.node[data-task="alert"] text.sub').textContent`)
	if !strings.HasPrefix(sub, "on failure · ") {
		t.Errorf("alert's state line is %q, want it to start with \"on failure · \"", sub)
	}
	after := evaluate[[]string](t, b, `[...document.querySelectorAll('#task-table tbody tr')].map(r => r.dataset.task + ': ' + r.cells[4].textContent)`)
	if want := []string{"a: ", "b: a", "alert: on failure of a, b", "tidy: b"}; !slices.Equal(after, want) {
		t.Errorf("the task table's After column is %q, want %q", after, want)
	}
	if p := b.reported(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}

// shotWidth is the width of the screenshots, in CSS pixels.
const shotWidth = 1200

// screenshots is where TestScreenshots writes its PNGs (docs/img from the
// repository's root is ../docs/img); empty skips it.
var screenshots = flag.String("screenshots", "", "directory TestScreenshots writes the dashboard's screenshots to (empty: skip)")

// TestScreenshots writes the README's screenshots of the dashboard: a
// running workflow, a failed one, a saga compensating, the list, the
// queues, the workers and a 1,000-task workflow's collapsed graph (with
// its state filter and minimap):
//
//	go test ./dashboard -run TestScreenshots -screenshots ../docs/img
//
// It checks each page shows the states it set up before taking it.
func TestScreenshots(t *testing.T) {
	if *screenshots == "" {
		t.Skip("no -screenshots directory")
	}
	if err := os.MkdirAll(*screenshots, 0o755); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, 1200, 760)
	s := memstore.New()
	srv := newServer(t, rest.Config{Store: s, Token: testToken, Dashboard: dashboard.Handler()})
	ctx := context.Background()

	// A failed deploy: the tests fail, what depends on them is cancelled.
	submit(t, srv.URL, "application/yaml", `id: deploy-1842
tasks:
  - {name: build, run: make build}
  - {name: unit-tests, run: make test, after: [build]}
  - {name: lint, run: make lint, after: [build]}
  - {name: deploy-eu, run: ./deploy eu, after: [unit-tests, lint]}
  - {name: deploy-us, run: ./deploy us, after: [unit-tests, lint]}
  - {name: smoke-test, run: ./smoke, after: [deploy-eu, deploy-us]}
`)
	cs := claim(t, s, "default")
	finish(t, s, cs["deploy-1842/build"], "bin/shop 41 MB", "")
	cs = claim(t, s, "default")
	finish(t, s, cs["deploy-1842/lint"], "0 issues", "")
	finish(t, s, cs["deploy-1842/unit-tests"], "", "exit status 1: --- FAIL: TestCheckoutTotals (0.02s)\n    cart_test.go:88: total = 41.90, want 42.00\nFAIL\tshop/cart\t0.412s")

	// A saga compensating (examples/saga.yaml): paying fails, the undo of
	// the car booking runs, the hotel's and the flight's wait for it.
	saga, err := os.ReadFile("../examples/saga.yaml")
	if err != nil {
		t.Fatal(err)
	}
	submit(t, srv.URL, "application/yaml", "id: trip-0193\n"+string(saga))
	for _, step := range []struct{ task, result string }{{"flight", "FL-1"}, {"hotel", "HO-2"}, {"car", "CA-3"}} {
		cs = claim(t, s, "default")
		finish(t, s, cs["trip-0193/"+step.task], step.result, "")
	}
	cs = claim(t, s, "default")
	finish(t, s, cs["trip-0193/pay"], "", "exit status 3: card declined")
	cs = claim(t, s, "default")
	if _, ok := cs["trip-0193/car/undo"]; !ok {
		t.Fatalf("the saga's first undo is not the car's: claimed %v", slices.Collect(maps.Keys(cs)))
	}

	// A running image pipeline, submitted last: the newest.
	submit(t, srv.URL, "application/yaml", `id: photos-2026-12-04
tasks:
  - {name: fetch, run: ./fetch.sh}
  - {name: resize, run: ./resize.sh, after: [fetch]}
  - {name: thumbnails, run: ./thumbs.sh, after: [fetch]}
  - {name: detect-faces, run: ./faces.py, after: [fetch], queue: gpu, retries: 3, backoff: 1ms}
  - {name: index, run: ./index.sh, after: [resize, thumbnails, detect-faces]}
  - {name: publish, run: ./publish.sh, after: [index], undo: {run: ./unpublish.sh}}
  - {name: notify, run: ./notify.sh, after: [publish], always: true}
`)
	cs = claim(t, s, "default")
	finish(t, s, cs["photos-2026-12-04/fetch"], "1,204 photos, 3.1 GB", "")
	cs = claim(t, s, "default")
	finish(t, s, cs["photos-2026-12-04/resize"], "1,204 resized", "")
	gpu := claim(t, s, "gpu")
	g := gpu["photos-2026-12-04/detect-faces"]
	o := engine.Outcome{JobID: g.Job.ID, Token: g.Lease.Token, Kind: engine.OutcomeFailed, Error: "CUDA out of memory", RetryAfter: time.Millisecond}
	if _, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{o}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"gpu"}, Max: 1, Lease: time.Hour, Wait: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}

	// shoot opens url at the width of the shots, waits for the selectors,
	// then grows the viewport to the page's height and writes a PNG of it.
	shoot := func(name, url string, ready ...string) {
		t.Helper()
		b.run(t, chromedp.EmulateViewport(shotWidth, 700), chromedp.Navigate(url))
		for _, sel := range ready {
			b.run(t, wait(sel))
		}
		b.run(t, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
		height := evaluate[int64](t, b, `Math.max(360, document.body.scrollHeight)`)
		b.run(t, chromedp.EmulateViewport(shotWidth, height))
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*screenshots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.run(t, chromedp.Navigate(srv.URL+"/#token="+testToken), wait(`#workflow-table tr[data-workflow="deploy-1842"]`))
	shoot("dashboard-running.png", srv.URL+"/#/workflows/photos-2026-12-04",
		`#dag-svg g.node[data-task="detect-faces"][data-state="running"]`, `#live[data-mode="live"]`)
	shoot("dashboard-failed.png", srv.URL+"/#/workflows/deploy-1842?task=unit-tests",
		`#dag-svg g.node[data-task="unit-tests"][data-state="failed"] ~ g.node[data-task="deploy-eu"][data-state="cancelled"]`,
		`.job-card[data-job="deploy-1842/unit-tests"]`, `#live[data-mode="live"]`)
	shoot("dashboard-compensating.png", srv.URL+"/#/workflows/trip-0193?task=car",
		`#dag-svg g.node[data-task="car"] g.undo[data-undo-state="running"]`, `.job-card[data-job="trip-0193/car/undo"]`, `#live[data-mode="live"]`)
	shoot("dashboard-workflows.png", srv.URL+"/#/", `#workflow-table tr[data-workflow="photos-2026-12-04"]`)
	if err := s.PauseQueue(ctx, "gpu"); err != nil {
		t.Fatal(err)
	}
	shoot("dashboard-queues.png", srv.URL+"/#/queues", `tr[data-queue="gpu"][data-paused="true"]`)
	// two workers: a shell worker running the pipeline's thumbnails, and
	// a GPU worker with its retry of detect-faces
	started := time.Now().Add(-3 * time.Hour)
	for _, w := range []weir.WorkerInfo{
		{ID: "build-07-41822-9c0e51aa", Host: "build-07", PID: 41822, Version: "v0.9.0", Concurrency: 8, Started: started,
			Queues: []weir.WorkerQueue{{Name: "default", Weight: 1}, {Name: "weir.webhooks", Weight: 1}}, Running: 1, RunningJobs: []string{"photos-2026-12-04/thumbnails"}},
		{ID: "gpu-02-7310-4b1f0c9e", Host: "gpu-02", PID: 7310, Version: "v0.9.0", Concurrency: 2, Started: started.Add(time.Hour),
			Queues: []weir.WorkerQueue{{Name: "gpu", Weight: 1}}, Running: 1, RunningJobs: []string{"photos-2026-12-04/detect-faces"}},
	} {
		if err := s.BeatWorker(ctx, engine.BeatWorkerParams{Info: w, TTL: 30 * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	shoot("dashboard-workers.png", srv.URL+"/#/workers", `tr[data-worker="gpu-02-7310-4b1f0c9e"] a[data-job="photos-2026-12-04/detect-faces"]`)

	// A workflow of 1,000 tasks (bigPlan), opened collapsed: its chain
	// done, 40 shards run (one failed), 10 running.
	submit(t, srv.URL, "application/json", bigPlan("render-7731"))
	for _, n := range []string{"fetch", "prep-1", "prep-2", "prep-3"} {
		cs := claim(t, s, "default")
		c, ok := cs["render-7731/"+n]
		if !ok || len(cs) != 1 {
			t.Fatalf("claimed %v, want render-7731/%s alone", slices.Collect(maps.Keys(cs)), n)
		}
		finish(t, s, c, "", "")
	}
	cs = claim(t, s, "default")
	for i := range 40 {
		c := cs[fmt.Sprintf("render-7731/shard-%03d", i)]
		if i == 17 {
			finish(t, s, c, "", "exit status 2: frame 17: texture missing")
		} else {
			finish(t, s, c, "", "")
		}
	}
	b.run(t, chromedp.EmulateViewport(shotWidth, 700), chromedp.Navigate(srv.URL+"/#/workflows/render-7731"),
		wait(`#dag-svg g.group-node[data-group="group:shard-000"][data-counts="queued:915 running:10 completed:39 failed:1"]`), wait(`#live[data-mode="live"]`))
	b.run(t, chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	b.run(t, chromedp.EmulateViewport(shotWidth, 900))
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*screenshots, "dashboard-big-dag.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := b.reported(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}

// TestBrowserInspectorHooks: the controls of the inspector's routes show
// when the API's OpenAPI document lists them, and only then, and call
// them. The API here is a stand-in answering those routes as
// spec/dashboard.md expects, so that it can leave one out and refuse a
// call; TestBrowserActions drives every action on a real weir dev.
func TestBrowserInspectorHooks(t *testing.T) {
	b := newBrowser(t, 1000, 700)
	calls := make(chan string, 10)
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", dashboard.Handler())
	mux.Handle("GET /ui/", dashboard.Handler())
	mux.HandleFunc("GET /v1/openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "openapi: 3.0.3\npaths:\n  /v1/queues:\n    get:\n  /v1/queues/{name}/jobs:\n    get:\n"+
			"  /v1/queues/{name}/purge:\n    post:\n  /v1/jobs/{id}/retry:\n    post:\n  /v1/jobs/{id}/cancel:\n    post:\ncomponents:\n")
	})
	mux.HandleFunc("GET /v1/queues", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"queues":[{"name":"mail","paused":false,"ready":3,"delayed":0,"running":1}]}`)
	})
	listed := make(chan struct{}, 100)
	mux.HandleFunc("GET /v1/queues/mail/jobs", func(w http.ResponseWriter, r *http.Request) {
		select {
		case listed <- struct{}{}:
		default:
		}
		if r.URL.Query().Get("state") != "failed" {
			_, _ = io.WriteString(w, `{"jobs":[],"next_cursor":null}`)
			return
		}
		_, _ = io.WriteString(w, `{"jobs":[{"id":"welcome-7","queue":"mail","workflow":null,"task":null,"undo":false,"state":"failed",
			"attempts":3,"max_attempts":3,"error":"smtp: 550 mailbox unavailable","created_at":"2026-12-04T10:00:00.000Z"}],"next_cursor":null}`)
	})
	record := func(w http.ResponseWriter, r *http.Request) {
		calls <- r.Method + " " + r.URL.Path
		_, _ = io.WriteString(w, `{}`)
	}
	mux.HandleFunc("POST /v1/queues/{name}/purge", record)
	mux.HandleFunc("POST /v1/jobs/{id}/retry", func(w http.ResponseWriter, r *http.Request) {
		calls <- r.Method + " " + r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_, _ = io.WriteString(w, `{"code":"JOBRUNNING","message":"the job is running again"}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// called waits for the stand-in's next call and checks it.
	called := func(want string) {
		t.Helper()
		select {
		case c := <-calls:
			if c != want {
				t.Errorf("the page called %s, want %s", c, want)
			}
		case <-b.ctx.Done():
			t.Fatalf("the page never called %s", want)
		}
	}
	b.acceptDialogs()
	b.run(t, chromedp.Navigate(srv.URL+"/#/queues"), wait(`tr[data-queue="mail"] button.purge`), click(`tr[data-queue="mail"] button.purge`))
	called("POST /v1/queues/mail/purge")
	b.run(t, click(`tr[data-queue="mail"] a`), wait(`#job-table tr[data-job="welcome-7"]`))
	if n := evaluate[int](t, b, `document.querySelectorAll('tr[data-job="welcome-7"] button').length`); n != 1 {
		t.Errorf("the failed plain job has %d buttons, want Retry only (it has ended, and the stand-in has no delete route)", n)
	}
	b.run(t, click(`tr[data-job="welcome-7"] button`))
	called("POST /v1/jobs/welcome-7/retry")
	// The refusal shows above the view, and stays there through the
	// refreshes that follow.
	b.run(t, wait(`#banner:not([hidden])`))
	for range 2 {
		for len(listed) > 0 {
			<-listed
		}
		select {
		case <-listed:
		case <-b.ctx.Done():
			t.Fatal("the page stopped refreshing")
		}
	}
	b.run(t, wait(`tr[data-job="welcome-7"]`))
	if banner := evaluate[string](t, b, `document.getElementById('banner').hidden ? '' : document.getElementById('banner').textContent`); !strings.Contains(banner, "the job is running again (JOBRUNNING)") {
		t.Errorf("the banner after a refused retry and two refreshes says %q", banner)
	}
	// The browser logs the refused retry as a failed load: that one is
	// expected.
	for _, p := range b.reported() {
		if !strings.Contains(p, "409 (Conflict)") {
			t.Errorf("the page reported %q", p)
		}
	}
}
