package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/weirflow/weir/engine"
)

// TestBrowserActions drives every action button of the dashboard in
// Chromium on a real `weir dev` (its REST API, its embedded Redis, the
// Redis store), on a workflow's task jobs, an undo job and plain jobs,
// and checks after each click that the store changed as the button says:
// Cancel job on a queued and a running task job (a task's job ID has a
// slash: the page escapes it, %2F, spec/rest.md) and on an undo job;
// Cancel and Re-run of a workflow; Cancel job on a task job from its
// queue's page; Cancel job, Retry and Delete on plain jobs, ready,
// running and ended; Pause, Resume and Purge of a queue. The page offers
// only what the store takes of a job of that kind and state: no Retry
// and no Delete on a task's or an undo's job, no Cancel job on an ended
// job or one whose cancel is requested. At the end, with a workflow's
// page following its event stream, SIGTERM stops dev with status 0.
func TestBrowserActions(t *testing.T) {
	d := startDev(t)
	b := newBrowser(t, 1200, 800)
	b.acceptDialogs()
	ctx := context.Background()

	// A workflow whose tasks the test runs: a (with an undo), then b, c
	// and f; a completes, b runs, c waits in a queue no one claims from,
	// f will fail.
	submit(t, d.url, "application/json", `{"id":"wf-task","tasks":[
		{"name":"a","queue":"work","run":"true","undo":{"run":"true"}},
		{"name":"b","queue":"work","run":"true","after":["a"]},
		{"name":"c","queue":"hold","run":"true","after":["a"]},
		{"name":"f","queue":"work","run":"false","after":["a"]}]}`)
	d.settle(t, d.claimOne(t, "work"), engine.OutcomeCompleted)
	bc := d.claimOne(t, "work")
	if bc.Job.ID != "wf-task/b" {
		t.Fatalf("claimed %s, want wf-task/b", bc.Job.ID)
	}
	b.run(t, chromedp.Navigate(d.url+"/#token="+testToken), wait(`#workflow-table tr[data-workflow="wf-task"]`))

	// Cancel job on a queued task job.
	card := `.job-card[data-job="wf-task/c"]`
	b.run(t, chromedp.Navigate(d.url+"/#/workflows/wf-task?task=c"), wait(card+` button.cancel-job`))
	if got := buttons(t, b, card); !slices.Equal(got, []string{"danger cancel-job"}) {
		t.Errorf("a queued task job offers %q, want Cancel job only", got)
	}
	b.run(t, click(card+` button.cancel-job`))
	d.after(t, b, "Cancel job on wf-task/c", func() (bool, string) {
		j := d.job(t, "wf-task/c")
		return j.State == weir.Cancelled, string(j.State)
	})
	b.run(t, wait(card+` .badge[data-state="cancelled"]`))
	if got := buttons(t, b, card); len(got) != 0 {
		t.Errorf("a cancelled task job offers %q, want nothing (it runs again only with its workflow's Re-run)", got)
	}

	// Cancel job on a running task job: its worker is told to stop.
	card = `.job-card[data-job="wf-task/b"]`
	b.run(t, chromedp.Navigate(d.url+"/#/workflows/wf-task?task=b"), wait(card+` button.cancel-job`))
	b.run(t, click(card+` button.cancel-job`))
	d.after(t, b, "Cancel job on the running wf-task/b", func() (bool, string) {
		j := d.job(t, "wf-task/b")
		return j.State == weir.Running && j.CancelRequested, fmt.Sprintf("%s, cancel requested %t", j.State, j.CancelRequested)
	})
	b.run(t, wait(card+` .cancel-requested`))
	if got := buttons(t, b, card); len(got) != 0 {
		t.Errorf("a running task job whose cancel is requested offers %q, want nothing", got)
	}
	// b's worker stops, f fails: a's undo is queued.
	d.settle(t, bc, engine.OutcomeCancelled)
	d.settle(t, d.claimOne(t, "work"), engine.OutcomeFailed)
	if w := d.workflow(t, "wf-task"); w.State != weir.WorkflowCompensating {
		t.Fatalf("wf-task is %s after its tasks b and c were cancelled and f failed, want compensating", w.State)
	}

	// Cancel job on an undo job (its ID has two slashes).
	card = `.job-card[data-job="wf-task/a/undo"]`
	b.run(t, chromedp.Navigate(d.url+"/#/workflows/wf-task?task=a"), wait(card+` button.cancel-job`))
	if got := buttons(t, b, `.job-card[data-job="wf-task/a"]`); len(got) != 0 {
		t.Errorf("a completed task job offers %q, want nothing", got)
	}
	if got := buttons(t, b, card); !slices.Equal(got, []string{"danger cancel-job"}) {
		t.Errorf("a queued undo job offers %q, want Cancel job only", got)
	}
	b.run(t, click(card+` button.cancel-job`))
	d.after(t, b, "Cancel job on wf-task/a/undo", func() (bool, string) {
		j := d.job(t, "wf-task/a/undo")
		return j.State == weir.Cancelled, string(j.State)
	})
	b.run(t, wait(card+` .badge[data-state="cancelled"]`))
	if got := buttons(t, b, card); len(got) != 0 {
		t.Errorf("a cancelled undo job offers %q, want nothing", got)
	}
	if w := d.workflow(t, "wf-task"); w.State != weir.WorkflowCompensationFailed {
		t.Errorf("wf-task is %s after its only undo was cancelled, want compensation_failed", w.State)
	}

	// Cancel and Re-run of a workflow.
	submit(t, d.url, "application/json", `{"id":"wf-flow","tasks":[
		{"name":"x","queue":"flow","run":"true"},
		{"name":"y","queue":"flow","run":"true","after":["x"]}]}`)
	b.run(t, chromedp.Navigate(d.url+"/#/workflows/wf-flow"), click(`#cancel-workflow`))
	d.after(t, b, "Cancel of wf-flow", func() (bool, string) {
		w := d.workflow(t, "wf-flow")
		return w.State == weir.WorkflowCancelled, string(w.State)
	})
	b.run(t, click(`#rerun-workflow`))
	d.after(t, b, "Re-run of wf-flow", func() (bool, string) {
		w := d.workflow(t, "wf-flow")
		return w.State == weir.WorkflowRunning && w.Run == 2, fmt.Sprintf("%s, run %d", w.State, w.Run)
	})
	if j := d.job(t, "wf-flow/x"); j.State != weir.Queued {
		t.Errorf("after Re-run wf-flow/x is %s, want queued", j.State)
	}

	// Cancel job on a task job from its queue's page.
	row := `#job-table tr[data-job="wf-flow/x"]`
	b.run(t, chromedp.Navigate(d.url+"/#/queues/flow?state=ready"), wait(row+` button.cancel-job`))
	if got := buttons(t, b, row); !slices.Equal(got, []string{"danger cancel-job"}) {
		t.Errorf("a ready task job on its queue's page offers %q, want Cancel job only", got)
	}
	b.run(t, click(row+` button.cancel-job`))
	d.after(t, b, "Cancel job on wf-flow/x from the queue's page", func() (bool, string) {
		j := d.job(t, "wf-flow/x")
		return j.State == weir.Cancelled, string(j.State)
	})
	b.run(t, chromedp.Navigate(d.url+"/#/queues/flow?state=cancelled"), wait(`#job-table tr[data-job="wf-flow/x"]`))
	if got := buttons(t, b, `#job-table tr[data-job="wf-flow/x"]`); len(got) != 0 {
		t.Errorf("a cancelled task job on its queue's page offers %q, want nothing", got)
	}

	// Plain jobs: mail-2 runs, mail-1 is ready.
	var mail2 engine.Claimed
	for _, id := range []string{"mail-2", "mail-1"} {
		if _, err := d.store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "mail"}}); err != nil {
			t.Fatal(err)
		}
		if id == "mail-2" {
			if mail2 = d.claimOne(t, "mail"); mail2.Job.ID != "mail-2" {
				t.Fatalf("claimed %s, want mail-2", mail2.Job.ID)
			}
		}
	}
	row = `#job-table tr[data-job="mail-1"]`
	b.run(t, chromedp.Navigate(d.url+"/#/queues/mail?state=ready"), wait(row+` button.cancel-job`))
	if got := buttons(t, b, row); !slices.Equal(got, []string{"danger cancel-job"}) {
		t.Errorf("a ready plain job offers %q, want Cancel job only", got)
	}
	b.run(t, click(row+` button.cancel-job`))
	d.after(t, b, "Cancel job on mail-1", func() (bool, string) {
		j := d.job(t, "mail-1")
		return j.State == weir.Cancelled, string(j.State)
	})
	b.run(t, chromedp.Navigate(d.url+"/#/queues/mail?state=cancelled"), wait(row+` button.retry-job`))
	if got := buttons(t, b, row); !slices.Equal(got, []string{"retry-job", "danger delete-job"}) {
		t.Errorf("a cancelled plain job offers %q, want Retry and Delete", got)
	}
	b.run(t, click(row+` button.retry-job`))
	d.after(t, b, "Retry of mail-1", func() (bool, string) {
		j := d.job(t, "mail-1")
		return j.State == weir.Queued, string(j.State)
	})
	row = `#job-table tr[data-job="mail-2"]`
	b.run(t, chromedp.Navigate(d.url+"/#/queues/mail?state=running"), click(row+` button.cancel-job`))
	d.after(t, b, "Cancel job on the running mail-2", func() (bool, string) {
		j := d.job(t, "mail-2")
		return j.State == weir.Running && j.CancelRequested, fmt.Sprintf("%s, cancel requested %t", j.State, j.CancelRequested)
	})
	b.run(t, wait(row+`:not(:has(button.cancel-job))`))
	// its worker stops it; then Delete
	d.settle(t, mail2, engine.OutcomeCancelled)
	b.run(t, chromedp.Navigate(d.url+"/#/queues/mail?state=cancelled"), click(row+` button.delete-job`))
	d.after(t, b, "Delete of mail-2", func() (bool, string) {
		_, err := d.store.GetJob(ctx, "mail-2")
		return errors.Is(err, weir.ErrNotFound), fmt.Sprintf("mail-2 read: %v", err)
	})

	// The queues page: Pause, Resume, Purge (of the plain job mail-1 and a
	// task job waiting in the same queue).
	submit(t, d.url, "application/json", `{"id":"wf-purge","tasks":[{"name":"p","queue":"mail","run":"true"}]}`)
	q := `tr[data-queue="mail"]`
	b.run(t, chromedp.Navigate(d.url+"/#/queues"), click(q+` button.pause`))
	d.after(t, b, "Pause of mail", func() (bool, string) { p := queuePaused(t, d, "mail"); return p, fmt.Sprintf("paused %t", p) })
	b.run(t, click(q+`[data-paused="true"] button.resume`))
	d.after(t, b, "Resume of mail", func() (bool, string) { p := queuePaused(t, d, "mail"); return !p, fmt.Sprintf("paused %t", p) })
	b.run(t, click(q+`[data-paused="false"] button.purge`))
	d.after(t, b, "Purge of mail", func() (bool, string) {
		m, p := d.job(t, "mail-1"), d.job(t, "wf-purge/p")
		return m.State == weir.Cancelled && m.Error == "purged" && p.State == weir.Cancelled && p.Error == "purged",
			fmt.Sprintf("mail-1 %s (%q), wf-purge/p %s (%q)", m.State, m.Error, p.State, p.Error)
	})

	if p := b.reported(); len(p) > 0 {
		t.Errorf("the page reported problems: %q", p)
	}

	// dev stops at SIGTERM with a workflow's page following its events.
	submit(t, d.url, "application/json", `{"id":"wf-live","tasks":[{"name":"l","queue":"hold","run":"true"}]}`)
	b.run(t, chromedp.Navigate(d.url+"/#/workflows/wf-live"), wait(`#live[data-mode="live"]`))
	if code := d.stop(t); code != 0 || !strings.Contains(d.stderr.String(), "weir dev: stopped") {
		t.Errorf("weir dev with a dashboard tab following a workflow, after SIGTERM: status %d\nstderr:\n%s", code, d.stderr.String())
	}
}

// queuePaused reads whether the store has queue paused.
func queuePaused(t *testing.T, d *devServer, queue string) bool {
	t.Helper()
	qs, err := d.store.Queues(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Name == queue {
			return q.Paused
		}
	}
	t.Fatalf("the store has no queue %s: %+v", queue, qs)
	return false
}
