package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/weirflow/weir/internal/clitest"
)

// syncBuffer is a bytes.Buffer safe for one writer and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
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

// inProcess is a weir command run in this process by run.
type inProcess struct {
	stdout, stderr syncBuffer
	cancel         context.CancelFunc
	done           chan int
}

func startInProcess(t *testing.T, args ...string) *inProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &inProcess{cancel: cancel, done: make(chan int, 1)}
	go func() { p.done <- run(ctx, args, &p.stdout, &p.stderr) }()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// printed waits for the line NAME=value on stdout and returns the value;
// it fails the test if the command ends first.
func (p *inProcess) printed(t *testing.T, name string) string {
	t.Helper()
	deadline := time.After(30 * time.Second) // a hang guard, not a timing check
	for {
		for _, l := range strings.Split(p.stdout.String(), "\n") {
			if v, ok := strings.CutPrefix(l, name+"="); ok {
				return v
			}
		}
		select {
		case code := <-p.done:
			p.done <- code
			t.Fatalf("ended with status %d before printing %s\nstdout:\n%s\nstderr:\n%s", code, name, p.stdout.String(), p.stderr.String())
		case <-deadline:
			t.Fatalf("%s not printed\nstdout:\n%s\nstderr:\n%s", name, p.stdout.String(), p.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stop cancels the command's context and returns its exit status.
func (p *inProcess) stop(t *testing.T) int {
	t.Helper()
	p.cancel()
	select {
	case code := <-p.done:
		p.done <- code
		return code
	case <-time.After(30 * time.Second): // a hang guard
		t.Fatalf("did not stop\nstderr:\n%s", p.stderr.String())
		return -1
	}
}

// get requests url with the token (when not empty) on a client that keeps
// no connection open.
var get = clitest.Get

func TestServeRefusesPublicAddressWithoutToken(t *testing.T) {
	t.Parallel()
	if os.Getenv("WEIR_TOKEN") != "" {
		t.Skip("WEIR_TOKEN is set: serve would listen")
	}
	m := miniredis.RunT(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8080", "[::]:0", "example.com:80"} {
		var out, errb bytes.Buffer
		code := run(t.Context(), []string{"serve", "--redis", "redis://" + m.Addr(), "--http", addr}, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), "is not a loopback address: set a token") {
			t.Errorf("serve --http %s without a token: status %d, stderr %q", addr, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"serve", "--redis", "redis://" + m.Addr(), "--http", "nonsense"}, &out, &errb); code != exitUsage {
		t.Errorf("serve --http nonsense: status %d, stderr %q", code, errb.String())
	}
}

// serve on a non-loopback address with a token, against a Redis; it stops
// cleanly when its context ends.
func TestServe(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	p := startInProcess(t, "serve", "--redis", "redis://"+m.Addr(), "--namespace", "served", "--http", "0.0.0.0:0", "--token", "tok-0123456789abcdef")
	u := p.printed(t, "WEIR_HTTP_URL")
	if !strings.HasPrefix(u, "http://") {
		t.Fatalf("printed URL %q", u)
	}
	u = strings.Replace(u, "0.0.0.0", "127.0.0.1", 1)
	if code, body := get(t, "GET", u+"/healthz", ""); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("healthz: %d %s", code, body)
	}
	if code, _ := get(t, "GET", u+"/v1/queues", ""); code != 401 {
		t.Errorf("/v1/queues without the token: %d", code)
	}
	if code, body := get(t, "POST", u+"/v1/queues/q/pause", "tok-0123456789abcdef"); code != 200 {
		t.Errorf("pause: %d %s", code, body)
	}
	// It used the namespace given.
	if len(m.Keys()) == 0 {
		t.Error("no keys written")
	}
	for _, k := range m.Keys() {
		if !strings.HasPrefix(k, "weir:{served:") {
			t.Errorf("key %q outside the namespace", k)
		}
	}
	if code := p.stop(t); code != 0 || !strings.Contains(p.stderr.String(), "weir serve: stopped") {
		t.Errorf("serve ended with status %d\nstderr:\n%s", code, p.stderr.String())
	}
}

// A blank, short or unprintable token is refused at start, from the flag
// and from WEIR_TOKEN alike; dev and serve refuse the same ones.
func TestServeRefusesWeakTokens(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--token", ""}, "--token is blank"},
		{nil, []string{"--token", "0123456789abcde"}, "--token is 15 characters: a token needs at least 16"},
		{nil, []string{"--token", "0123456789abcdef\x01"}, "printable ASCII"},
		{[]string{"WEIR_TOKEN=short"}, nil, "WEIR_TOKEN is 5 characters"},
		{[]string{"WEIR_TOKEN=   "}, nil, "WEIR_TOKEN is blank"},
		{[]string{"WEIR_TOKEN=é0123456789abcdef"}, nil, "printable ASCII"},
		{nil, []string{"--origin", "null"}, "--origin"},
	} {
		for _, cmd := range [][]string{{"serve", "--redis", "redis://" + m.Addr()}, {"dev"}} {
			args := append(append(append([]string{}, cmd...), "--http", "127.0.0.1:0"), c.args...)
			r := weir(t, "", append([]string{"WEIR_TOKEN="}, c.env...), args...)
			if r.Code != exitUsage || !strings.Contains(r.Stderr, c.want) {
				t.Errorf("%v %v: status %d, stderr %q; want 2 and %q", c.env, args, r.Code, r.Stderr, c.want)
			}
		}
	}
}

// A token in WEIR_TOKEN is the API's (serve off loopback accepts it). Not
// parallel: it sets the environment.
func TestServeTokenFromEnv(t *testing.T) {
	t.Setenv("WEIR_TOKEN", "env-token-0123456789")
	m := miniredis.RunT(t)
	p := startInProcess(t, "serve", "--redis", "redis://"+m.Addr(), "--http", "0.0.0.0:0")
	u := strings.Replace(p.printed(t, "WEIR_HTTP_URL"), "0.0.0.0", "127.0.0.1", 1)
	if code, _ := get(t, "GET", u+"/v1/queues", ""); code != 401 {
		t.Errorf("without the token: %d", code)
	}
	if code, body := get(t, "GET", u+"/v1/queues", "env-token-0123456789"); code != 200 {
		t.Errorf("with WEIR_TOKEN's token: %d %s", code, body)
	}
	if strings.Contains(p.stdout.String(), "env-token") {
		t.Errorf("serve printed the token:\n%s", p.stdout.String())
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve ended with status %d\n%s", code, p.stderr.String())
	}
}
