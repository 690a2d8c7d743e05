package dashboard_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserWorkers drives the Workers page on a real `weir dev`: it
// lists dev's own worker; a `weir worker` started beside it appears with
// its pid, queue and the job it runs (linked to its task); killed with
// kill -9, its row leaves the page once its lease (2 s) from its last
// heartbeat has passed, by the store's clock.
func TestBrowserWorkers(t *testing.T) {
	d := startDev(t)
	b := newBrowser(t, 1400, 800)
	b.run(t, chromedp.Navigate(d.url+"/#token="+testToken))
	b.run(t, chromedp.Navigate(d.url+"/#/workers"), wait(`#worker-table tr[data-worker]`))
	// dev's worker serves its --queues and delivers webhooks
	if got := evaluate[string](t, b, `document.querySelector('#worker-table tbody tr').cells[3].textContent`); got != "idle, weir.webhooks" {
		t.Errorf("dev's worker serves %q, want idle, weir.webhooks", got)
	}
	if !evaluate[bool](t, b, `document.getElementById('nav-workers').classList.contains('active')`) {
		t.Error("the Workers link is not marked active on the Workers page")
	}

	w := exec.Command(weirBinary.Path(t), "worker", "--redis", d.redis, "--queues", "work", "--lease", "2s", "--concurrency", "2")
	w.Env = append(os.Environ(), "WEIR_REDIS_CLUSTER=", "WEIR_PARTITIONS=")
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { w.Wait(); close(exited) }()
	t.Cleanup(func() { w.Process.Kill(); <-exited })
	row := `#worker-table tr[data-pid="` + strconv.Itoa(w.Process.Pid) + `"]`
	submit(t, d.url, "application/json", `{"id":"nap","tasks":[{"name":"sleep","queue":"work","run":"sleep 60"}]}`)
	b.run(t, wait(row+` a[data-job="nap/sleep"]`))
	cells := evaluate[[]string](t, b, `[...document.querySelector('`+row+`').cells].map(c => c.textContent)`)
	if cells[3] != "weir.webhooks, work" || cells[4] != "1 / 2" || !strings.HasPrefix(cells[5], "nap/sleep") {
		t.Errorf("the worker's row: %q; want queues weir.webhooks, work, 1 / 2 running, job nap/sleep", cells)
	}

	if err := w.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	killed := time.Now()
	b.run(t, chromedp.WaitNotPresent(chromedp.CSS(row)))
	gone := time.Since(killed)
	// the page dropped it because the store did: its record's time passed
	l, err := d.store.Workers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, wi := range l.Workers {
		if wi.PID == w.Process.Pid {
			t.Fatalf("the page dropped the killed worker, the store still lists it: %+v", wi)
		}
	}
	if len(l.Workers) != 1 {
		t.Errorf("after the kill the store lists %d workers, want dev's one", len(l.Workers))
	}
	t.Logf("kill -9 to the row gone from the Workers page: %v (lease 2s, heartbeat every 667ms, page read every 1.5s)", gone.Round(time.Millisecond))
	if p := b.reported(); len(p) != 0 {
		t.Errorf("the page reported %q", p)
	}
}
