package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/dashboard"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/rest"
)

// setValue sets the value of the first input matching sel once one
// matches, as typing would (an input event follows).
func setValue(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](`(() => { const e = document.querySelector(` + jsString(sel) + `); if (!e) return false; ` +
		`e.value = ` + jsString(value) + `; e.dispatchEvent(new Event('input', {bubbles: true})); return true })()`)
}

// putSchedule creates a schedule through the API.
func putSchedule(t *testing.T, srv, token, name, body string) {
	t.Helper()
	req, err := http.NewRequest("PUT", srv+"/v1/schedules/"+name, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("put schedule %s: %s", name, res.Status)
	}
}

// failPlain enqueues plain jobs in queue and fails each, as a worker would.
func (d *devServer) failPlain(t *testing.T, queue string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := d.store.Enqueue(context.Background(), engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: queue}}); err != nil {
			t.Fatal(err)
		}
		d.settle(t, d.claimOne(t, queue), engine.OutcomeFailed)
	}
}

// queueInfo reads a queue's counts and limits from the store.
func (d *devServer) queueInfo(t *testing.T, name string) weir.QueueInfo {
	t.Helper()
	qs, err := d.store.Queues(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Name == name {
			return q
		}
	}
	t.Fatalf("no queue %s in %+v", name, qs)
	return weir.QueueInfo{}
}

// TestBrowserParity drives, on a real `weir dev`, the dashboard's
// actions that the CLI has and that the first dashboard lacked, checking
// the store after each click: signalling an open signal task with a
// value and failing another with a reason; deleting the ended workflow;
// pausing, resuming and removing a schedule; changing a queue's
// concurrency limit, rate limit and per-key limit; retrying every failed
// job of a queue in one call, then cancelling one ticked job. It checks
// too that a running job's progress shows as a bar, that times carry
// their date, and that the ID box keeps the workflows of the page whose
// ID starts with what it holds.
func TestBrowserParity(t *testing.T) {
	d := startDev(t)
	b := newBrowser(t, 1280, 900)
	b.acceptDialogs()
	ctx := context.Background()

	// Signals: approve gets a value, note fails with a reason.
	submit(t, d.url, "application/json", `{"id":"wf-sig","tasks":[{"name":"approve","signal":true},{"name":"note","signal":true}]}`)
	b.run(t, chromedp.Navigate(d.url+"/#token="+testToken), wait(`#workflow-table tr[data-workflow="wf-sig"]`))
	created := evaluate[string](t, b, `document.querySelector('#workflow-table tr[data-workflow="wf-sig"] td:nth-child(5)').textContent`)
	if !regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`).MatchString(created) {
		t.Errorf("the list's created time is %q, want a date and a time", created)
	}
	b.run(t, chromedp.Navigate(d.url+"/#/workflows/wf-sig"), wait(`.signal[data-task="note"] button.signal-fail`))
	b.run(t, setValue(`.signal[data-task="approve"] .signal-value-input`, `{"by":"ana"}`), click(`.signal[data-task="approve"] button.signal-value`))
	d.after(t, b, "Send value to approve", func() (bool, string) {
		w := d.workflow(t, "wf-sig")
		return w.Tasks[0].State == weir.Completed && len(w.Tasks[0].Result) > 1, fmt.Sprintf("approve %s, result %x", w.Tasks[0].State, w.Tasks[0].Result)
	})
	b.run(t, wait(`#signals:not(:has(.signal[data-task="approve"]))`))
	b.run(t, setValue(`.signal[data-task="note"] .signal-reason-input`, "not today"), click(`.signal[data-task="note"] button.signal-fail`))
	d.after(t, b, "Fail note", func() (bool, string) {
		w := d.workflow(t, "wf-sig")
		return w.Tasks[1].State == weir.Failed && w.Tasks[1].Error == "not today", fmt.Sprintf("note %s %q", w.Tasks[1].State, w.Tasks[1].Error)
	})

	// Delete the workflow, now ended.
	b.run(t, click(`#delete-workflow`))
	d.after(t, b, "Delete of wf-sig", func() (bool, string) {
		_, err := d.store.GetWorkflow(ctx, "wf-sig")
		return errors.Is(err, weir.ErrNotFound), fmt.Sprintf("wf-sig read: %v", err)
	})
	b.run(t, wait(`#workflow-table, #workflows p.muted`))

	// Find by ID prefix: the API lists the workflows whose ID starts with it.
	submit(t, d.url, "application/json", `{"id":"find-me-1","tasks":[{"name":"a","queue":"hold","run":"true"}]}`)
	submit(t, d.url, "application/json", `{"id":"other-1","tasks":[{"name":"a","queue":"hold","run":"true"}]}`)
	b.run(t, chromedp.Navigate(d.url+"/#/"), wait(`tr[data-workflow="other-1"]`), setValue(`#search`, "find-"),
		wait(`#workflow-table:not(:has(tr[data-workflow="other-1"]))`))
	shown := evaluate[[]string](t, b, `[...document.querySelectorAll('#workflow-table tr[data-workflow]')].map(r => r.dataset.workflow)`)
	if strings.Join(shown, " ") != "find-me-1" {
		t.Errorf("with the prefix find- the list shows %v, want find-me-1", shown)
	}

	// Schedules: pause, resume, remove.
	putSchedule(t, d.url, testToken, "nightly", `{"every":"1h","job":{"queue":"hold"}}`)
	row := `#schedule-table tr[data-schedule="nightly"]`
	paused := func() (bool, string) {
		s, err := d.store.GetSchedule(ctx, "nightly")
		if err != nil {
			t.Fatal(err)
		}
		return s.Paused, fmt.Sprintf("paused %t", s.Paused)
	}
	b.run(t, chromedp.Navigate(d.url+"/#/schedules"), click(row+` button.pause-schedule`))
	d.after(t, b, "Pause of nightly", paused)
	b.run(t, click(row+`[data-paused="true"] button.resume-schedule`))
	d.after(t, b, "Resume of nightly", func() (bool, string) { p, s := paused(); return !p, s })
	b.run(t, click(row+`[data-paused="false"] button.delete-schedule`))
	d.after(t, b, "Remove of nightly", func() (bool, string) {
		_, err := d.store.GetSchedule(ctx, "nightly")
		return errors.Is(err, weir.ErrNotFound), fmt.Sprintf("nightly read: %v", err)
	})
	b.run(t, wait(`#schedules p.muted`))

	// A queue's limits.
	d.failPlain(t, "bulk", "b1", "b2", "b3")
	b.run(t, chromedp.Navigate(d.url+"/#/queues/bulk?state=failed"), wait(`#limit-input`),
		setValue(`#limit-input`, "3"), click(`button.set-limit`))
	d.after(t, b, "Set limit", func() (bool, string) {
		q := d.queueInfo(t, "bulk")
		return q.Concurrency == 3, fmt.Sprintf("concurrency %d", q.Concurrency)
	})
	b.run(t, wait(`#limits-now[data-limit="3"]`), setValue(`#rate-input`, "5"), setValue(`#rate-period-input`, "2000"), click(`button.set-rate`))
	d.after(t, b, "Set rate", func() (bool, string) {
		q := d.queueInfo(t, "bulk")
		return q.RateLimit == 5 && q.RatePeriod == 2*time.Second, fmt.Sprintf("rate %d per %s", q.RateLimit, q.RatePeriod)
	})
	b.run(t, wait(`#limits-now[data-rate="5/2000"]`), setValue(`#key-limit-input`, "2"), click(`button.set-key-limit`))
	d.after(t, b, "Set key limit", func() (bool, string) {
		q := d.queueInfo(t, "bulk")
		return q.KeyConcurrency == 2, fmt.Sprintf("key limit %d", q.KeyConcurrency)
	})

	// Retry every failed job of the queue in one call.
	b.run(t, wait(`#job-table tr[data-job="b3"]`), click(`button.bulk-retry-all`))
	d.after(t, b, "Retry all failed", func() (bool, string) {
		var got []string
		for _, id := range []string{"b1", "b2", "b3"} {
			got = append(got, string(d.job(t, id).State))
		}
		return strings.Join(got, " ") == "queued queued queued", strings.Join(got, " ")
	})
	b.run(t, wait(`#notice:not([hidden])`))
	if n := evaluate[string](t, b, `document.getElementById('notice').textContent`); !strings.HasPrefix(n, "3 job(s) retried") {
		t.Errorf("after Retry all failed the page says %q", n)
	}

	// Cancel one ticked job of the ready list.
	b.run(t, chromedp.Navigate(d.url+"/#/queues/bulk?state=ready"), click(`input.select-job[data-job="b2"]`),
		wait(`button.bulk-cancel-selected:not([disabled])`), click(`button.bulk-cancel-selected`))
	d.after(t, b, "Cancel selected", func() (bool, string) {
		b1, b2 := d.job(t, "b1"), d.job(t, "b2")
		return b2.State == weir.Cancelled && b1.State == weir.Queued, fmt.Sprintf("b1 %s, b2 %s", b1.State, b2.State)
	})

	// A job's exact ID in the queue page's ID box opens its card.
	// (value and Enter on one element in one step: the page may draw the
	// queue's view again between two steps, and a new box is empty)
	b.run(t, chromedp.Poll[chromedp.Void](`(() => { const e = document.getElementById('job-prefix'); if (!e) return false; e.value = 'b1'; `+
		`e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true})); return true })()`),
		wait(`#job .job-card[data-job="b1"] .badge[data-state="queued"]`))

	// A running job's progress shows as a bar, on its queue's page and its card.
	c := d.claimOne(t, "bulk")
	if err := d.store.Progress(ctx, engine.ProgressParams{JobID: c.Job.ID, Token: c.Lease.Token, Report: &weir.Progress{Percent: 75, Message: "step 3 of 4"}}); err != nil {
		t.Fatal(err)
	}
	b.run(t, chromedp.Navigate(d.url+"/#/queues/bulk?state=running"), wait(`#job-table tr[data-job="`+c.Job.ID+`"] .progress[data-percent="75"] progress`))
	if txt := evaluate[string](t, b, `document.querySelector('#job-table .progress').textContent`); !strings.Contains(txt, "75% step 3 of 4") {
		t.Errorf("the progress cell says %q, want 75%% step 3 of 4", txt)
	}
	if p := b.reported(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}
}

// TestBrowserReadOnly: with a read-only token the dashboard shows no
// write control (it asks GET /v1/whoami), where the read-write token
// shows them on the same pages; a task's progress shows on the workflow
// page either way.
func TestBrowserReadOnly(t *testing.T) {
	const readToken = "read-only-token-of-the-tests"
	s := memstore.New()
	srv := newServer(t, rest.Config{Store: s, Token: testToken, ReadTokens: []string{readToken}, Dashboard: dashboard.Handler()})
	ctx := context.Background()
	submit(t, srv.URL, "application/json", `{"id":"wf-ro","tasks":[{"name":"a","queue":"q","run":"true"},{"name":"ok","signal":true}]}`)
	if _, err := s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "p1", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
	putSchedule(t, srv.URL, testToken, "hourly", `{"every":"1h","job":{"queue":"q"}}`)
	cs := claim(t, s, "q")
	c := cs["wf-ro/a"]
	if err := s.Progress(ctx, engine.ProgressParams{JobID: c.Job.ID, Token: c.Lease.Token, Report: &weir.Progress{Percent: 40, Message: "two of five"}}); err != nil {
		t.Fatal(err)
	}
	// every write control of the pages below
	const writes = `button.pause, button.resume, button.purge, #cancel-workflow, #delete-workflow, .signal button, ` +
		`button.cancel-job, button.retry-job, button.delete-job, input.select-job, [class^="bulk-"], #limit-input, button.set-limit, ` +
		`button.pause-schedule, button.resume-schedule, button.delete-schedule`
	controls := func(b *browser) []string {
		return evaluate[[]string](t, b, `[...document.querySelectorAll(`+jsString(writes)+`)].map(e => e.className || e.id)`)
	}
	pages := []struct{ path, ready string }{
		{"/#/workflows/wf-ro", `#task-table tr[data-task="a"] .progress[data-percent="40"]`},
		{"/#/queues", `tr[data-queue="q"]`},
		{"/#/queues/q?state=running", `#job-table tr[data-job="wf-ro/a"]`},
		{"/#/schedules", `tr[data-schedule="hourly"]`},
	}
	for _, tc := range []struct {
		token string
		write bool
	}{{testToken, true}, {readToken, false}} {
		b := newBrowser(t, 1280, 900)
		b.run(t, chromedp.Navigate(srv.URL+"/#token="+tc.token), wait(`#workflow-table tr[data-workflow="wf-ro"]`))
		for _, p := range pages {
			b.run(t, chromedp.Navigate(srv.URL+p.path), wait(p.ready))
			got := controls(b)
			if tc.write && len(got) == 0 {
				t.Errorf("read-write token, %s: no write control", p.path)
			}
			if !tc.write && len(got) > 0 {
				t.Errorf("read-only token, %s: write controls %q", p.path, got)
			}
		}
		if p := b.reported(); len(p) > 0 {
			t.Errorf("the page reported problems: %q", p)
		}
	}
}
