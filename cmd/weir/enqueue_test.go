package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/redisstore"
)

// weir enqueue reads the job document of POST /v1/jobs from a file or
// stdin; the payload is what a Go handler's typed queue decodes.
func TestEnqueue(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr()
	dir := t.TempDir()
	path := filepath.Join(dir, "job.json")
	if err := os.WriteFile(path, []byte(`{"id": "j1", "queue": "resize", "retries": 2, "payload": {"url": "u", "width": 640}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := weir(t, dir, nil, "enqueue", "--redis", url, path)
	if r.Code != 0 || r.Stdout != "j1\n" {
		t.Fatalf("enqueue: status %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	// Again: nothing changes.
	if r := weir(t, dir, nil, "enqueue", "--redis", url, path); r.Code != 0 || r.Stdout != "j1\n" {
		t.Errorf("enqueue again: status %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}

	// From stdin, as YAML, with a generated ID.
	cmd := exec.CommandContext(t.Context(), binary(t), "enqueue", "--redis", url, "-")
	cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=")
	cmd.Stdin = strings.NewReader("queue: resize\npayload: {url: v, width: 3}\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("enqueue -: %v\n%s", err, errb.String())
	}
	id := strings.TrimSpace(out.String())

	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	s, err := redisstore.New(rdb, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type args struct {
		URL   string `json:"url"`
		Width int    `json:"width"`
	}
	q := client.NewQueue[args, string]("resize")
	for id, want := range map[string]args{"j1": {"u", 640}, id: {"v", 3}} {
		j, err := s.GetJob(t.Context(), id)
		if err != nil {
			t.Fatalf("job %q: %v", id, err)
		}
		if p, err := q.DecodePayload(j.Payload); err != nil || p != want || j.Queue != "resize" {
			t.Errorf("job %q: queue %s payload %+v %v, want %+v", id, j.Queue, p, err, want)
		}
	}

	// A bad document is status 2 naming the field; another job under an
	// existing ID is status 1.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("payload: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := weir(t, dir, nil, "enqueue", "--redis", url, bad); r.Code != exitUsage || !strings.Contains(r.Stderr, "field queue: required") {
		t.Errorf("bad document: status %d, stderr %q", r.Code, r.Stderr)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"id": "j1", "queue": "resize", "payload": {"width": 1}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := weir(t, dir, nil, "enqueue", "--redis", url, other); r.Code != exitEnded || !strings.Contains(r.Stderr, `a job "j1" exists`) {
		t.Errorf("another job under j1: status %d, stderr %q", r.Code, r.Stderr)
	}
	if r := weir(t, dir, nil, "enqueue", "--redis", url, filepath.Join(dir, "nope.json")); r.Code != exitUsage || !strings.Contains(r.Stderr, "cannot read the file") {
		t.Errorf("missing file: status %d, stderr %q", r.Code, r.Stderr)
	}
}
