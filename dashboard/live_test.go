package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weirflow/weir/dashboard"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/rest"
)

// TestBrowserLive: a workflow's page follows the event stream. A task a
// worker claims and finishes shows its new state without a reload or a
// click while the header says "live"; with the namespace's events
// switched off the page notices the change that came without its event,
// says it is polling, and still follows the workflow; leaving the page
// closes its stream.
func TestBrowserLive(t *testing.T) {
	t.Run("memstore", func(t *testing.T) { testBrowserLive(t, memstore.New()) })
	t.Run("redis", func(t *testing.T) { testBrowserLive(t, redisStore(t)) })
}

// liveStore is a store with an event stream (and its switch, which the
// REST API finds on it).
type liveStore interface {
	engine.Store
	engine.EventReader
}

// redisStore returns a Redis store in a namespace of its own: on the
// Redis of WEIR_REDIS_URL when set (its keys removed at the end), else on
// a new miniredis.
func redisStore(t *testing.T) *redisstore.Store {
	t.Helper()
	rdb := redistest.Client(t, redistest.Default(t).Options)
	ns := redistest.Namespace(t, rdb, "dashtest-")
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testBrowserLive(t *testing.T, s liveStore) {
	b := newBrowser(t, 1200, 800)
	h, err := rest.NewHandler(rest.Config{Store: s, Token: testToken, Dashboard: dashboard.Handler(), StreamFor: 30 * time.Second}) // longer than the test: a stream left open shows
	if err != nil {
		t.Fatal(err)
	}
	// streams counts the event streams the browser holds open: a request
	// of /v1/events until the browser closes it (its context ends; a
	// handler blocked in a read of the store may outlive it a while).
	var streams atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/events") && r.Method == "GET" {
			streams.Add(1)
			var once sync.Once
			closed := func() { once.Do(func() { streams.Add(-1) }) }
			done := make(chan struct{})
			go func() {
				select {
				case <-r.Context().Done():
				case <-done:
				}
				closed()
			}()
			defer func() { close(done); closed() }()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	submit(t, srv.URL, "application/json", `{"id":"wf-live","tasks":[
		{"name":"a","run":"true"},
		{"name":"b","run":"true","after":["a"]},
		{"name":"c","run":"true","after":["b"]}]}`)

	b.run(t, chromedp.Navigate(srv.URL+"/#token="+testToken), wait(`#workflow-table tr[data-workflow="wf-live"]`))
	if mode := evaluate[string](t, b, `document.getElementById('live').hidden ? 'hidden' : 'shown'`); mode != "hidden" {
		t.Errorf("the workflows list shows the live mark (%s); it polls", mode)
	}
	b.run(t, chromedp.Evaluate[chromedp.Void](`location.hash = '#/workflows/wf-live'`),
		wait(`#dag-svg g.node[data-task="a"][data-state="queued"]`), wait(`#live[data-mode="live"]`))
	// a mark that a reload of the page would lose
	evaluate[bool](t, b, `window.weirNoReload = true`)
	eventsSeen := func() int {
		t.Helper()
		n, _ := strconv.Atoi(evaluate[string](t, b, `document.getElementById('live').dataset.events || '0'`))
		return n
	}
	// Once live the page reads the workflow once more after POLL_MS
	// (1.5 s), then only every CHECK_MS (8 s): a change shown well before
	// that came by the stream.
	time.Sleep(2 * time.Second)
	before := eventsSeen()
	start := time.Now()

	// live: a worker claims a and finishes it
	cs := claim(t, s, "default")
	b.run(t, wait(`#dag-svg g.node[data-task="a"][data-state="running"]`))
	finish(t, s, cs["wf-live/a"], "ok", "")
	b.run(t, wait(`#dag-svg g.node[data-task="a"][data-state="completed"]`), wait(`#dag-svg g.node[data-task="b"][data-state="queued"]`))
	// the read after the last one comes at the latest 9.5 s after the page
	// went live (POLL_MS, then CHECK_MS), 7.5 s after start: a change shown
	// before 7 s did not wait for it (the margin is for a loaded machine)
	if took := time.Since(start); took > 7*time.Second {
		t.Errorf("the page showed a's claim and finish %v after them: not by the stream (it checks by polling every 8 s)", took)
	}
	if after := eventsSeen(); after <= before {
		t.Errorf("the page counted %d events before the claim and %d after: the new states did not come from the stream", before, after)
	}
	if !evaluate[bool](t, b, `window.weirNoReload === true`) {
		t.Error("the page was reloaded")
	}
	if mode := evaluate[string](t, b, `document.getElementById('live').dataset.mode`); mode != "live" {
		t.Errorf("the page says %q while events come, want live", mode)
	}

	// events off: the page falls back to polling, says so, and follows on
	req, err := http.NewRequest("POST", srv.URL+"/v1/events/off", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/events/off: %s", res.Status)
	}
	cs = claim(t, s, "default")
	b.run(t, wait(`#dag-svg g.node[data-task="b"][data-state="running"]`), wait(`#live[data-mode="polling"]`))
	finish(t, s, cs["wf-live/b"], "ok", "")
	b.run(t, wait(`#dag-svg g.node[data-task="b"][data-state="completed"]`), wait(`#dag-svg g.node[data-task="c"][data-state="queued"]`))
	if mode := evaluate[string](t, b, `document.getElementById('live').dataset.mode`); mode != "polling" {
		t.Errorf("the page says %q with the events off, want polling", mode)
	}

	// events on again: the next event makes the page live again
	req, _ = http.NewRequest("POST", srv.URL+"/v1/events/on", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if res, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	claim(t, s, "default") // c runs
	b.run(t, wait(`#dag-svg g.node[data-task="c"][data-state="running"]`), wait(`#live[data-mode="live"]`))
	if !evaluate[bool](t, b, `window.weirNoReload === true`) {
		t.Error("the page was reloaded")
	}

	// leaving the page closes its stream
	if streams.Load() == 0 {
		t.Error("the workflow's page holds no event stream open")
	}
	b.run(t, click(`#nav-queues`), wait(`#queue-table`))
	deadline := time.Now().Add(5 * time.Second)
	for streams.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := streams.Load(); n != 0 {
		t.Errorf("%d event streams still open after leaving the workflow's page", n)
	}
	if mode := evaluate[string](t, b, `document.getElementById('live').hidden ? 'hidden' : 'shown'`); mode != "hidden" {
		t.Errorf("the queues page shows the live mark (%s)", mode)
	}
	if p := b.reported(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}

// noStream is a store without an event stream: the API answers its
// stream with 501.
type noStream struct{ engine.Store }

// TestBrowserNoStream: on a store without an event stream a workflow's
// page says it is not live and follows the workflow by polling.
func TestBrowserNoStream(t *testing.T) {
	b := newBrowser(t, 1000, 700)
	s := memstore.New()
	srv := newServer(t, rest.Config{Store: noStream{s}, Token: testToken, Dashboard: dashboard.Handler()})
	submit(t, srv.URL, "application/json", `{"id":"wf-poll","tasks":[{"name":"a","run":"true"}]}`)
	b.run(t, chromedp.Navigate(srv.URL+"/#token="+testToken), wait(`#workflow-table`),
		chromedp.Evaluate[chromedp.Void](`location.hash = '#/workflows/wf-poll'`),
		wait(`#dag-svg g.node[data-task="a"][data-state="queued"]`), wait(`#live[data-mode="polling"][title*="501"], #live[data-mode="polling"][title*="no event stream"]`))
	cs := claim(t, s, "default")
	b.run(t, wait(`#dag-svg g.node[data-task="a"][data-state="running"]`))
	finish(t, s, cs["wf-poll/a"], "ok", "")
	b.run(t, wait(`#dag-svg g.node[data-task="a"][data-state="completed"]`))
	if mode := evaluate[string](t, b, `document.getElementById('live').dataset.mode`); mode != "polling" {
		t.Errorf("the page says %q on a store without a stream, want polling", mode)
	}
	// The 501 of the stream is logged by the browser as a failed load:
	// that one is expected.
	for _, p := range b.reported() {
		if !strings.Contains(p, "501") {
			t.Errorf("the page reported %q", p)
		}
	}
}
