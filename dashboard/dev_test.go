package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"github.com/weirflow/weir"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/clitest"
	"github.com/weirflow/weir/redisstore"
)

// weirBinary is the weir command, built on the first test that runs a
// real `weir dev` (with -race when the tests run with it).
var weirBinary = clitest.NewFrom("weir", "../cmd/weir")

// syncBuffer is a bytes.Buffer-like writer safe for one writer and
// readers: a process's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// devServer is a `weir dev` process, the whole stack the dashboard
// drives: its REST API and dashboard, its embedded Redis and the Redis
// store on it. Its workers serve only the queue "idle", so that the test
// runs the other queues' jobs itself, as a worker would, through store:
// its own connection to dev's Redis.
type devServer struct {
	url    string // WEIR_HTTP_URL
	redis  string // WEIR_REDIS_URL
	store  *redisstore.Store
	cmd    *exec.Cmd
	stderr syncBuffer
	done   chan error // the process's end
}

// startDev builds and starts `weir dev` with testToken; the test's end
// kills it if it still runs.
func startDev(t *testing.T) *devServer {
	t.Helper()
	d := &devServer{done: make(chan error, 1)}
	d.cmd = exec.Command(weirBinary.Path(t), "dev", "--queues", "idle", "--concurrency", "1", "--token", testToken)
	d.cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=", "WEIR_REDIS_CLUSTER=", "WEIR_PARTITIONS=", "WEIR_TOKEN=", "WEIR_READ_TOKEN=")
	pr, pw := io.Pipe()
	d.cmd.Stdout, d.cmd.Stderr = pw, &d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		d.cmd.Process.Kill()
		err := <-d.done
		d.done <- err
		pw.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	printed := map[string]string{}
	sc := bufio.NewScanner(pr)
	for (printed["WEIR_REDIS_URL"] == "" || printed["WEIR_HTTP_URL"] == "") && sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			printed[k] = v
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }() // keep dev's stdout drained; ends with pw
	d.url, d.redis = printed["WEIR_HTTP_URL"], printed["WEIR_REDIS_URL"]
	if d.url == "" || printed["WEIR_REDIS_URL"] == "" {
		t.Fatalf("weir dev printed %v\nstderr:\n%s", printed, d.stderr.String())
	}
	opt, err := redis.ParseURL(printed["WEIR_REDIS_URL"])
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	if d.store, err = redisstore.New(rdb, redisstore.Options{}); err != nil {
		t.Fatal(err)
	}
	return d
}

// stop sends SIGTERM and returns dev's exit status.
func (d *devServer) stop(t *testing.T) int {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.done:
		d.done <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second): // a hang guard
		t.Fatalf("weir dev did not exit after SIGTERM\nstderr:\n%s", d.stderr.String())
		return -1
	}
}

// claimOne claims the next job of queue as a worker would.
func (d *devServer) claimOne(t *testing.T, queue string) engine.Claimed {
	t.Helper()
	cs, err := d.store.Claim(context.Background(), engine.ClaimParams{Queues: []string{queue}, Max: 1, Lease: time.Hour})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim from %s: %d jobs, %v", queue, len(cs), err)
	}
	return cs[0]
}

// settle ends a claimed job with outcome kind: completed, failed (not
// retried) or cancelled (a worker told to stop).
func (d *devServer) settle(t *testing.T, c engine.Claimed, kind engine.OutcomeKind) {
	t.Helper()
	o := engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: kind}
	if kind == engine.OutcomeFailed {
		o.Error, o.NonRetryable = "exit status 1", true
	}
	res, err := d.store.Finish(context.Background(), engine.FinishParams{Outcomes: []engine.Outcome{o}})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range res.Settled {
		if st.Err != nil {
			t.Fatalf("finish %s: %v", c.Job.ID, st.Err)
		}
	}
}

// job reads a job from the store.
func (d *devServer) job(t *testing.T, id string) weir.Job {
	t.Helper()
	j, err := d.store.GetJob(context.Background(), id)
	if err != nil {
		t.Fatalf("job %s: %v", id, err)
	}
	return j
}

// workflow reads a workflow from the store.
func (d *devServer) workflow(t *testing.T, id string) weir.Workflow {
	t.Helper()
	w, err := d.store.GetWorkflow(context.Background(), id)
	if err != nil {
		t.Fatalf("workflow %s: %v", id, err)
	}
	return w
}

// after waits, once an action's button was clicked, until the store
// holds what the button says (cond; got describes what it holds). A
// refusal the page shows in its banner fails the test at once: the
// store would never get there.
func (d *devServer) after(t *testing.T, b *browser, action string, cond func() (ok bool, got string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // a hang guard, not a timing check
	for {
		ok, got := cond()
		if ok {
			return
		}
		banner := evaluate[string](t, b, `(() => { const e = document.getElementById('banner'); return e.hidden ? '' : e.textContent })()`)
		if banner != "" {
			t.Fatalf("%s: the page says %q; the store has %s", action, banner, got)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the store still has %s", action, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// buttons lists the classes of the buttons under the elements matching
// sel (a job card, a row), in order.
func buttons(t *testing.T, b *browser, sel string) []string {
	t.Helper()
	return evaluate[[]string](t, b, `[...document.querySelectorAll(`+jsString(sel)+` + ' button')].map(e => e.className)`)
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
