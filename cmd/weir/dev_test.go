package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/weirflow/weir/rest"
	"github.com/weirflow/weir/workflowfile"
	"go.uber.org/goleak"
)

// weir dev in this process: the REST API and its workers run a workflow,
// the embedded server's clock advances (a key with a TTL expires), and
// cancelling the context stops everything it started. Not parallel, so that
// the goroutine check sees only this test's goroutines.
func TestDevInProcess(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	func() {
		p := startInProcess(t, "dev", "--concurrency", "2", "--queues", "default,other", "--token", "dev-token-0123456789")
		redisURL := p.printed(t, "WEIR_REDIS_URL")
		httpURL := p.printed(t, "WEIR_HTTP_URL")
		if !strings.HasPrefix(redisURL, "redis://127.0.0.1:") || !strings.HasPrefix(httpURL, "http://127.0.0.1:") {
			t.Fatalf("printed %q and %q", redisURL, httpURL)
		}
		if strings.Contains(p.stdout.String(), "WEIR_TOKEN=") {
			t.Errorf("dev printed the token it was given:\n%s", p.stdout.String())
		}

		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		body := `{"id":"dev-1","tasks":[{"name":"a","run":"echo a"},{"name":"b","queue":"other","after":["a"],"run":"cat \"$WEIR_DEPS_DIR/a\"; echo b"}]}`
		req, _ := http.NewRequestWithContext(t.Context(), "POST", httpURL+"/v1/workflows", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer dev-token-0123456789")
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("submit: %d %s", res.StatusCode, b)
		}
		var rec workflowfile.Record
		for deadline := time.Now().Add(30 * time.Second); ; { // a hang guard
			code, b := get(t, "GET", httpURL+"/v1/workflows/dev-1", "dev-token-0123456789")
			if code != 200 {
				t.Fatalf("get: %d %s", code, b)
			}
			rec = strict[workflowfile.Record](t, []byte(b))
			if rec.State != "running" || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if rec.State != "completed" || recordTask(t, rec, "b").Result != "a\nb\n" {
			t.Errorf("workflow run by dev's workers: %+v", rec)
		}

		// /metrics: the queues and workers read at the request, dev's workers' counts
		code, m := get(t, "GET", httpURL+"/metrics", "dev-token-0123456789")
		for _, want := range []string{
			`weir_queue_jobs{queue="default",state="ready"} 0`,
			`weir_queue_jobs{queue="other",state="running"} 0`,
			`weir_worker_attempts_total{outcome="succeeded",queue="default"} 1`,
			`weir_worker_attempts_total{outcome="succeeded",queue="other"} 1`,
			`weir_worker_promoted_total{queue="other"} 1`,
			`weir_worker_workflows_ended_total{state="completed"} 1`,
			`weir_workers 1`, // dev's own worker, from the registry
		} {
			if code != http.StatusOK || !strings.Contains(m, want+"\n") {
				t.Errorf("GET /metrics: %d, no line %s in\n%s", code, want, m)
			}
		}
		if code, _ := get(t, "GET", httpURL+"/metrics", ""); code != http.StatusUnauthorized {
			t.Errorf("GET /metrics without the token: %d", code)
		}

		// miniredis expires keys only when its clock is advanced: dev does it.
		opt, err := redis.ParseURL(redisURL)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(opt)
		if err := rdb.Set(t.Context(), "ttl-probe", "x", 300*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
		expired := false
		for deadline := time.Now().Add(30 * time.Second); !expired && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			n, err := rdb.Exists(t.Context(), "ttl-probe").Result()
			if err != nil {
				t.Fatal(err)
			}
			expired = n == 0
		}
		rdb.Close()
		if !expired {
			t.Error("a key with a 300ms TTL never expired on the embedded server")
		}

		if code := p.stop(t); code != 0 || !strings.Contains(p.stderr.String(), "weir dev: stopped") {
			t.Errorf("dev ended with status %d\nstderr:\n%s", code, p.stderr.String())
		}
	}()
	goleak.VerifyNone(t, ignore)
}

func TestDevUsageErrors(t *testing.T) {
	t.Parallel()
	if os.Getenv("WEIR_TOKEN") != "" {
		t.Skip("WEIR_TOKEN is set: dev would listen")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dev", "--redis", "redis://127.0.0.1:1"}, "--redis is for the other commands"},
		{[]string{"dev", "--redis-addr", "0.0.0.0:0"}, "must be a loopback"},
		{[]string{"dev", "--no-token", "--http", "0.0.0.0:0"}, "is not a loopback address: set a token"},
		{[]string{"dev", "--token", ""}, "--token is blank"},
		{[]string{"dev", "--token", "   "}, "--token is blank"},
		{[]string{"dev", "--token", "short-token"}, "--token is 11 characters: a token needs at least 16"},
		{[]string{"dev", "--token", "a token with spaces in it"}, "printable ASCII"},
		{[]string{"dev", "--no-token", "--token", "0123456789abcdef"}, "--no-token, and a token in --token"},
		{[]string{"dev", "--origin", "evil.example"}, "--origin \"evil.example\""},
		{[]string{"dev", "--origin", "http://a.example/path"}, "is not an origin"},
		{[]string{"dev", "--queues", "a,b c"}, `queue name "b c"`},
		{[]string{"dev", "--concurrency", "0"}, "--concurrency must be at least 1"},
		{[]string{"dev", "--max-body", "0"}, "--max-body must be at least 1"},
		{[]string{"dev", "--namespace", "bad ns"}, "--namespace"},
	} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), c.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: status %d, stderr %q, want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

// process is a weir process started by a test.
type process struct {
	cmd    *exec.Cmd
	stderr syncBuffer
	done   chan error
}

// startWeir starts the binary with args (WEIR_REDIS_URL cleared) in the
// repository root; the test's end kills it if it still runs.
func startWeir(t *testing.T, stdout io.Writer, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(binary(t), args...), done: make(chan error, 1)}
	p.cmd.Dir = repoRoot(t)
	p.cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=", "WEIR_TOKEN=")
	p.cmd.Stdout, p.cmd.Stderr = stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		_ = <-p.done
	})
	return p
}

// signal sends sig and returns the exit status (-1 for a signal death).
func (p *process) signal(t *testing.T, sig os.Signal) int {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second): // a hang guard
		t.Fatalf("%v did not exit after %v\nstderr:\n%s", p.cmd.Args, sig, p.stderr.String())
		return -1
	}
}

// Two processes: weir dev, then weir submit / wait / status from others,
// with dev's workers running the tasks and a weir worker process joining
// for a queue dev does not serve; SIGINT stops dev with status 0.
func TestDevTwoProcesses(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	dev := startWeir(t, pw, "dev", "--concurrency", "4")
	printed := map[string]string{}
	sc := bufio.NewScanner(pr)
	for len(printed) < 3 && sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			printed[k] = v
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }() // keep dev's stdout drained
	t.Cleanup(func() { pw.Close() })
	redisURL, httpURL, token := printed["WEIR_REDIS_URL"], printed["WEIR_HTTP_URL"], printed["WEIR_TOKEN"]
	if redisURL == "" || httpURL == "" || len(token) < rest.MinTokenLen {
		t.Fatalf("dev printed %v\nstderr:\n%s", printed, dev.stderr.String())
	}
	env := []string{"WEIR_REDIS_URL=" + redisURL}

	r := weir(t, "", nil, "submit", "examples/pipeline.yaml", "--redis", redisURL)
	r.WantCode(t, 0)
	id := strings.TrimSpace(r.Stdout)
	r = weir(t, "", env, "wait", id, "--json")
	r.WantCode(t, 0)
	if rec := decodeRecord(t, r); rec.State != "completed" || recordTask(t, rec, "words").Result != "24\n" {
		t.Errorf("pipeline run by dev: %+v", rec)
	}
	// The REST API of dev shows the same record, with the token it
	// printed (and only with it).
	if code, _ := get(t, "GET", httpURL+"/v1/workflows/"+id, ""); code != http.StatusUnauthorized {
		t.Errorf("dev's API without its generated token: %d", code)
	}
	code, body := get(t, "GET", httpURL+"/v1/workflows/"+id, token)
	if code != 200 || strings.TrimSpace(body) != strings.TrimSpace(compactJSON(t, r.Stdout)) {
		t.Errorf("REST record %d:\n%s\nwant\n%s", code, body, r.Stdout)
	}

	// A worker process joins for queue "other", which dev does not serve.
	wk := startWeir(t, io.Discard, "worker", "--queues", "other", "--concurrency", "2", "--redis", redisURL)
	p := writeFile(t, "join.yaml", `tasks:
  - name: here
    run: echo dev
  - name: there
    queue: other
    after: [here]
    run: echo "worker after $(cat "$WEIR_DEPS_DIR/here")"
`)
	r = weir(t, "", env, "submit", p)
	r.WantCode(t, 0)
	id2 := strings.TrimSpace(r.Stdout)
	r = weir(t, "", env, "wait", id2, "--json")
	r.WantCode(t, 0)
	if rec := decodeRecord(t, r); recordTask(t, rec, "there").Result != "worker after dev\n" {
		t.Errorf("joined worker's task: %+v", recordTask(t, rec, "there"))
	}

	if code := wk.signal(t, syscall.SIGTERM); code != 0 {
		t.Errorf("worker after SIGTERM: status %d\n%s", code, wk.stderr.String())
	}
	if code := dev.signal(t, os.Interrupt); code != 0 || !strings.Contains(dev.stderr.String(), "weir dev: stopped") {
		t.Errorf("dev after SIGINT: status %d\nstderr:\n%s", code, dev.stderr.String())
	}
	// The server went with it.
	r = weir(t, "", env, "status", id)
	if r.Code != 1 || !strings.Contains(r.Stderr, "connect to") {
		t.Errorf("status after dev stopped: %d %q", r.Code, r.Stderr)
	}
}

func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The cross-site attack of docs/security.md against weir dev, with its generated token
// and with --no-token: a page's text/plain POST of a workflow, a foreign
// Origin, a rebinding Host. Each is refused, and the command never runs,
// though dev's workers run a workflow submitted properly afterwards.
func TestDevRefusesCrossSite(t *testing.T) {
	t.Parallel()
	if os.Getenv("WEIR_TOKEN") != "" {
		t.Skip("WEIR_TOKEN is set: dev would use it")
	}
	for _, noToken := range []bool{false, true} {
		args := []string{"dev", "--concurrency", "2"}
		if noToken {
			args = append(args, "--no-token")
		}
		p := startInProcess(t, args...)
		httpURL := p.printed(t, "WEIR_HTTP_URL")
		token := ""
		if !noToken {
			token = p.printed(t, "WEIR_TOKEN")
			if len(token) < rest.MinTokenLen || rest.CheckToken("printed", token) != nil {
				t.Fatalf("generated token %q", token)
			}
		} else if strings.Contains(p.stdout.String(), "WEIR_TOKEN") {
			t.Fatalf("--no-token printed a token:\n%s", p.stdout.String())
		}
		proof := filepath.Join(t.TempDir(), "proof")
		attack := fmt.Sprintf(`{"tasks":[{"name":"x","run":"id > %s"}]}`, proof)
		port := httpURL[strings.LastIndex(httpURL, ":")+1:]
		send := func(header ...string) (int, string) {
			req, err := http.NewRequestWithContext(t.Context(), "POST", httpURL+"/v1/workflows", strings.NewReader(attack))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(header); i += 2 {
				if header[i] == "Host" {
					req.Host = header[i+1]
				} else {
					req.Header.Set(header[i], header[i+1])
				}
			}
			hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			res, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(b)
		}
		for _, c := range []struct {
			name   string
			header []string
			want   int
		}{
			{"a page's text/plain POST", []string{"Content-Type", "text/plain", "Origin", "http://evil.example"}, 403},
			{"text/plain without Origin", []string{"Content-Type", "text/plain"}, map[bool]int{false: 401, true: 415}[noToken]},
			{"JSON from a foreign Origin", []string{"Content-Type", "application/json", "Origin", "http://evil.example"}, 403},
			{"DNS rebinding", []string{"Content-Type", "application/json", "Host", "evil.example:" + port}, map[bool]int{false: 401, true: 421}[noToken]},
		} {
			code, body := send(c.header...)
			if code != c.want {
				t.Errorf("no-token %t, %s: %d %s, want %d", noToken, c.name, code, body, c.want)
			}
		}
		// A proper submit runs: the workers are there.
		canary := filepath.Join(t.TempDir(), "canary")
		body := fmt.Sprintf(`{"id":"canary","tasks":[{"name":"c","run":"touch %s"}]}`, canary)
		hdr := []string{"Content-Type", "application/json"}
		if token != "" {
			hdr = append(hdr, "Authorization", "Bearer "+token)
		}
		req, _ := http.NewRequestWithContext(t.Context(), "POST", httpURL+"/v1/workflows", strings.NewReader(body))
		for i := 0; i < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("the proper submit: %d", res.StatusCode)
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) { // a hang guard
			if _, err := os.Stat(canary); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the proper workflow did not run")
			}
		}
		if code, body := get(t, "GET", httpURL+"/v1/workflows", token); code != 200 || strings.Count(body, `"id"`) != 1 {
			t.Errorf("workflows after the attacks: %d %s", code, body)
		}
		if _, err := os.Stat(proof); err == nil {
			t.Errorf("no-token %t: the cross-site command ran", noToken)
		}
		if code := p.stop(t); code != 0 {
			t.Errorf("dev ended with status %d\n%s", code, p.stderr.String())
		}
	}
}
