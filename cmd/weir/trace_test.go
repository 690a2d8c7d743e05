package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
)

// weir enqueue stores the TRACEPARENT environment variable with the job:
// its claim hands it back.
func TestEnqueueTraceParent(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	m := miniredis.RunT(t)
	cmd := exec.CommandContext(t.Context(), binary(t), "enqueue", "--redis", "redis://"+m.Addr(), "-")
	cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=", "TRACEPARENT="+tp)
	cmd.Stdin = strings.NewReader("id: tj\nqueue: tq\npayload: 1\n")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("enqueue: %v\n%s", err, errb.String())
	}
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	s, err := redisstore.New(rdb, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Claim(t.Context(), engine.ClaimParams{Queues: []string{"tq"}, Max: 1, Lease: time.Minute})
	if err != nil || len(got) != 1 || got[0].TraceParent != tp {
		t.Fatalf("claim: %+v, %v; want job tj with traceparent %s", got, err, tp)
	}
}
