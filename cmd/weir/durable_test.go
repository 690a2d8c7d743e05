package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/weirflow/weir/internal/redistest"
)

// TestDurableFlags: --durable-replicas needs a shared Redis, and with one
// that has no replica a write command fails, saying the write was not
// replicated.
func TestDurableFlags(t *testing.T) {
	// a new ID each run: a workflow's plan includes its file's directory
	id := "durable-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	file := writeFile(t, "wf.json", `{"id":"`+id+`","tasks":[{"name":"a","run":"true"}]}`)
	url := os.Getenv("WEIR_REDIS_URL")
	t.Setenv("WEIR_REDIS_URL", "") // run and dev: the embedded server
	t.Setenv("WEIR_REDIS_CLUSTER", "")
	for _, args := range [][]string{
		{"run", "--durable-replicas", "1", file},
		{"dev", "--durable-replicas", "1"},
	} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "no replicas") {
			t.Errorf("%v: status %d, stderr %q, want 2 and a word on replicas", args, code, errb.String())
		}
	}
	if url == "" {
		t.Skip("the rest needs a real redis-server (WEIR_REDIS_URL)")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	ns := redistest.Namespace(t, redistest.Client(t, opt), "durable-cli")
	var out, errb bytes.Buffer
	args := []string{"submit", "--redis", url, "--namespace", ns, "--durable-replicas", "1", "--durable-timeout", "50ms", file}
	if code := run(t.Context(), args, &out, &errb); code != exitEnded || !strings.Contains(errb.String(), "not replicated") {
		t.Errorf("submit without a replica: status %d, stderr %q, want 1 and \"not replicated\"", code, errb.String())
	}
	args = []string{"submit", "--redis", url, "--namespace", ns, "--durable-replicas", "-1", file}
	if code := run(t.Context(), args, &out, &errb); code != exitUsage {
		t.Errorf("--durable-replicas -1: status %d, stderr %q, want 2", code, errb.String())
	}
}
