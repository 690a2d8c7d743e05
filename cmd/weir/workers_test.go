package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/weirflow/weir/rest"
)

// workersJSON runs weir workers --json.
func workersJSON(t *testing.T, env []string, ns string) []rest.WorkerRecord {
	t.Helper()
	r := weir(t, "", env, "workers", "--json", "--namespace", ns)
	r.WantCode(t, 0)
	var l []rest.WorkerRecord
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil || l == nil {
		t.Fatalf("weir workers --json: %v, want an array\n%s", err, r.Stdout)
	}
	return l
}

// weir workers lists a running weir worker (table and --json), which
// leaves the list when it stops; one killed with kill -9 leaves it once
// its lease from its last heartbeat has passed.
func TestWorkersCommand(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	ns := "registry"
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}

	if out := weir(t, "", env, "workers", "--namespace", ns); out.Code != 0 || out.Stdout != "no live workers\n" {
		t.Fatalf("weir workers with none: %d %q %q", out.Code, out.Stdout, out.Stderr)
	}
	if l := workersJSON(t, env, ns); len(l) != 0 {
		t.Fatalf("weir workers --json with none: %+v", l)
	}
	w := startWeirWorker(t, env, "--namespace", ns, "--lease", "2s", "--concurrency", "3")
	l := workersJSON(t, env, ns)
	if len(l) != 1 {
		t.Fatalf("one weir worker running: %+v", l)
	}
	got := l[0]
	host, _ := os.Hostname()
	if got.PID != w.cmd.Process.Pid || got.Host != host || got.Concurrency != 3 || len(got.Queues) == 0 || got.Queues[0].Name != "default" ||
		got.Expires == nil || got.LastHeartbeat == nil || got.Expires.Sub(got.LastHeartbeat.Time) != 2*time.Second {
		t.Fatalf("the worker's record: %+v; want pid %d, host %s, concurrency 3, queue default first, a TTL of its lease (2s)", got, w.cmd.Process.Pid, host)
	}
	table := weir(t, "", env, "workers", "--namespace", ns)
	table.WantCode(t, 0)
	if lines := strings.Split(strings.TrimSpace(table.Stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "ID ") || !strings.HasPrefix(lines[1], got.ID+" ") || !strings.Contains(lines[1], " 0/3 ") {
		t.Fatalf("weir workers:\n%s", table.Stdout)
	}

	// a clean stop removes the record at once
	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err, rest := w.wait(); err != nil {
		t.Fatalf("weir worker after SIGINT: %v\n%s", err, rest)
	}
	if l := workersJSON(t, env, ns); len(l) != 0 {
		t.Fatalf("after a clean stop: %+v", l)
	}

	// kill -9: listed until its lease from its last heartbeat passes
	w = startWeirWorker(t, env, "--namespace", ns, "--lease", "2s")
	l = workersJSON(t, env, ns)
	if len(l) != 1 {
		t.Fatalf("the second worker: %+v", l)
	}
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = w.wait() // killed: its error says so
	killed := time.Now()
	s := testStore(t, m.Addr(), ns)
	var last rest.WorkerRecord
	for {
		wl, err := s.Workers(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(wl.Workers) == 0 {
			// gone: the store's now passed the expiry it last showed
			if last.Expires != nil && wl.Now.Before(last.Expires.Time) {
				t.Fatalf("the killed worker left at %v, before its expiry %v", wl.Now, last.Expires)
			}
			break
		}
		last = rest.NewWorkerRecord(wl.Workers[0])
		if d := wl.Workers[0].Expires.Sub(wl.Workers[0].LastHeartbeat); d != 2*time.Second {
			t.Fatalf("the killed worker's expiry is %v after its last heartbeat, want its lease (2s)", d)
		}
		if time.Since(killed) > 30*time.Second {
			t.Fatalf("the killed worker is still listed 30 s after kill -9: %+v", wl.Workers[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("kill -9 to gone from the list: %v (lease 2s; the last heartbeat was %v before the kill at most)", time.Since(killed).Round(time.Millisecond), 2*time.Second/3)
	if l := workersJSON(t, env, ns); len(l) != 0 {
		t.Fatalf("weir workers after the killed worker's lease: %+v", l)
	}
}
