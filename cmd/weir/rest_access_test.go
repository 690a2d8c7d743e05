package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
)

// post sends a JSON body with token and returns the status and body.
func post(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

const (
	rwToken   = "rw-token-0123456789"
	readToken = "ro-token-0123456789"
	shellWF   = `{"tasks":[{"name":"a","run":"echo hi"}]}`
	goJob     = `{"queue":"resize","payload":{"width":640}}`
)

// serve off loopback refuses shell commands unless told otherwise, on
// loopback accepts them unless told otherwise; a --read-token reads and
// cannot write.
func TestServeNoShellAndReadToken(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	for _, c := range []struct {
		addr      string
		flags     []string
		wantShell int
	}{
		{"0.0.0.0:0", nil, http.StatusForbidden},
		{"0.0.0.0:0", []string{"--no-shell=false"}, http.StatusCreated},
		{"127.0.0.1:0", nil, http.StatusCreated},
		{"127.0.0.1:0", []string{"--no-shell"}, http.StatusForbidden},
	} {
		args := append([]string{"serve", "--redis", "redis://" + m.Addr(), "--http", c.addr, "--token", rwToken, "--read-token", readToken}, c.flags...)
		p := startInProcess(t, args...)
		u := strings.Replace(p.printed(t, "WEIR_HTTP_URL"), "0.0.0.0", "127.0.0.1", 1)
		if code, body := post(t, u+"/v1/workflows", rwToken, shellWF); code != c.wantShell || (code == http.StatusForbidden && !strings.Contains(body, `"NOSHELL"`)) {
			t.Errorf("%v: a shell workflow: %d %s, want %d", args, code, body, c.wantShell)
		}
		if code, body := post(t, u+"/v1/jobs", rwToken, goJob); code != http.StatusCreated {
			t.Errorf("%v: a job for a Go handler: %d %s", args, code, body)
		}
		if code, body := get(t, "GET", u+"/v1/queues", readToken); code != http.StatusOK || !strings.Contains(body, `"resize"`) {
			t.Errorf("%v: read with the read-only token: %d %s", args, code, body)
		}
		if code, body := post(t, u+"/v1/jobs", readToken, goJob); code != http.StatusForbidden || !strings.Contains(body, `"READONLY"`) {
			t.Errorf("%v: write with the read-only token: %d %s", args, code, body)
		}
		if code := p.stop(t); code != 0 {
			t.Errorf("%v: status %d\n%s", args, code, p.stderr.String())
		}
	}
}

func TestServeReadTokenUsage(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--read-token", readToken}, "--read-token without a read-write token"},
		{nil, []string{"--token", rwToken, "--read-token", "short"}, "--read-token is 5 characters"},
		{nil, []string{"--token", rwToken, "--read-token", rwToken}, "not both"},
		{[]string{"WEIR_READ_TOKEN=" + readToken}, nil, "WEIR_READ_TOKEN without a read-write token"},
	} {
		args := append([]string{"serve", "--redis", "redis://" + m.Addr(), "--http", "127.0.0.1:0"}, c.args...)
		r := weir(t, "", append([]string{"WEIR_TOKEN=", "WEIR_READ_TOKEN="}, c.env...), args...)
		if r.Code != exitUsage || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v %v: status %d, stderr %q; want 2 and %q", c.env, args, r.Code, r.Stderr, c.want)
		}
	}
}

// dev prints the read-only token it generated beside the read-write one.
// Not parallel: it clears the environment's tokens.
func TestDevGeneratesReadToken(t *testing.T) {
	t.Setenv("WEIR_TOKEN", "")
	t.Setenv("WEIR_READ_TOKEN", "")
	p := startInProcess(t, "dev", "--concurrency", "1")
	u := p.printed(t, "WEIR_HTTP_URL")
	rw, ro := p.printed(t, "WEIR_TOKEN"), p.printed(t, "WEIR_READ_TOKEN")
	if len(rw) < 16 || len(ro) < 16 || rw == ro {
		t.Fatalf("tokens %q and %q", rw, ro)
	}
	if code, body := get(t, "GET", u+"/v1/queues", ro); code != http.StatusOK {
		t.Errorf("read with WEIR_READ_TOKEN: %d %s", code, body)
	}
	if code, body := post(t, u+"/v1/workflows", ro, shellWF); code != http.StatusForbidden {
		t.Errorf("write with WEIR_READ_TOKEN: %d %s", code, body)
	}
	if code, body := post(t, u+"/v1/workflows", rw, shellWF); code != http.StatusCreated {
		t.Errorf("dev on loopback refused a shell workflow: %d %s", code, body)
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("status %d\n%s", code, p.stderr.String())
	}
}

// weir run refuses a file with tasks for Go handlers: its shell workers
// would take them for commands.
func TestRunRefusesGoTasks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "go.yaml")
	if err := os.WriteFile(path, []byte("tasks:\n  - name: a\n    queue: resize\n    payload: {width: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := miniredis.RunT(t)
	r := weir(t, dir, nil, "run", "--redis", "redis://"+m.Addr(), path)
	if r.Code != exitUsage || !strings.Contains(r.Stderr, "for Go handlers (queues resize)") {
		t.Errorf("status %d, stderr %q", r.Code, r.Stderr)
	}
	if len(m.Keys()) != 0 {
		t.Errorf("run wrote %q", m.Keys())
	}
}
