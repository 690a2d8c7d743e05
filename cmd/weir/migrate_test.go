package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// weir migrate on a namespace as protocol 2 left it (its seq hash under
// P seq, ready jobs of the default priority in the ready zset): the other
// commands refuse it naming weir migrate; --dry-run says what a run moves
// and writes nothing; a run converts it (--json), a second says there is
// nothing to do, and the namespace is usable.
func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	const P = "weir:{legacy:0}:"
	rdb.HSet(ctx, P+"seq", "now", "1793534402040", "lease", "3")
	rdb.HSet(ctx, P+"queues", "q", "0")
	rdb.HSet(ctx, P+"q:q:s", "w", "0", "push", "3")
	rdb.ZAdd(ctx, P+"q:q:r", redis.Z{Member: "a", Score: 1000<<40 + 1}, redis.Z{Member: "b", Score: 1000<<40 + 2}, redis.Z{Member: "c", Score: 1001<<40 + 3})
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}

	r := weir(t, "", env, "queues", "--namespace", "legacy")
	r.WantCode(t, exitEnded)
	if !strings.Contains(r.Stderr, "weir migrate") || !strings.Contains(r.Stderr, "protocol 2") {
		t.Fatalf("weir queues on protocol 2: %q, want a refusal naming weir migrate", r.Stderr)
	}

	type result struct {
		Namespace string `json:"namespace"`
		From      int    `json:"from"`
		Done      bool   `json:"done"`
		DryRun    bool   `json:"dry_run"`
		Moved     int    `json:"moved"`
		Queues    int    `json:"queues"`
		Flagged   int    `json:"flagged"`
		Calls     int    `json:"calls"`
	}
	run := func(args ...string) result {
		t.Helper()
		r := weir(t, "", env, append([]string{"migrate", "--namespace", "legacy", "--json"}, args...)...)
		r.WantCode(t, exitOK)
		var v result
		if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
			t.Fatalf("weir migrate --json: %v\n%s", err, r.Stdout)
		}
		return v
	}
	// a build whose claim reads the ready lists moves the ready jobs of
	// the default priority there; before, it converts the seq hash alone
	dry := run("--dry-run")
	moving := dry.Moved > 0
	want := result{Namespace: "legacy", From: 2, DryRun: true, Calls: 1}
	if moving {
		want.Moved, want.Queues, want.Flagged = 2, 1, 1
	}
	if dry != want {
		t.Fatalf("--dry-run: %+v, want %+v", dry, want)
	}
	if typ, _ := rdb.Type(ctx, P+"seq").Result(); typ != "hash" {
		t.Fatalf("the dry run wrote: seq is a %s", typ)
	}
	if v := run("--step", "1"); v.From != 2 || !v.Done || v.Moved != want.Moved || v.Queues != want.Queues || v.Flagged != want.Flagged {
		t.Fatalf("a run: %+v", v)
	}
	if v, _ := rdb.Get(ctx, P+"seq").Result(); v != "3" {
		t.Fatalf("the marker: %q, want 3", v)
	}
	if l, _ := rdb.LRange(ctx, P+"q:q:l", 0, -1).Result(); moving && strings.Join(l, ",") != "a,b" || !moving && len(l) != 0 {
		t.Fatalf("the ready list: %v (moving %v)", l, moving)
	}
	text := weir(t, "", env, "migrate", "--namespace", "legacy")
	text.WantCode(t, exitOK)
	if text.Stdout != "namespace \"legacy\" is of protocol 3 already: nothing to do\n" {
		t.Fatalf("weir migrate again: %q", text.Stdout)
	}
	weir(t, "", env, "queues", "--namespace", "legacy").WantCode(t, exitOK)
	if r := weir(t, "", env, "migrate", "--step", "0"); r.Code != exitUsage || !strings.Contains(r.Stderr, "--step 0") {
		t.Fatalf("--step 0: %d %q", r.Code, r.Stderr)
	}
}
