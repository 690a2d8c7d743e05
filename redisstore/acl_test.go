package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// aclRules reads the ACL SETUSER line of docs/security.md and returns its
// rules after the user name, with the password rule removed.
func aclRules(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[0] == "ACL" && f[1] == "SETUSER" {
			var rules []string
			for _, r := range f[3:] {
				if !strings.HasPrefix(r, ">") {
					rules = append(rules, r)
				}
			}
			return rules
		}
	}
	t.Fatal("docs/security.md has no ACL SETUSER line")
	return nil
}

// TestACLCoversScriptCommands: every command a script calls
// (redis.call / redis.pcall with a literal name) is allowed by the ACL
// line of docs/security.md, and no script names its command dynamically:
// Redis checks a script's commands against the user who runs it.
func TestACLCoversScriptCommands(t *testing.T) {
	rules := aclRules(t)
	call := regexp.MustCompile(`redis\.p?call\(\s*(['"]?)([A-Za-z_]*)`)
	for _, dir := range []string{luaScripts, luaInclude} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(dir + "/" + e.Name())
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range call.FindAllStringSubmatch(string(b), -1) {
				if m[1] == "" {
					t.Errorf("%s/%s calls a command by a variable (%q): the ACL cannot be checked", dir, e.Name(), m[0])
					continue
				}
				if cmd := "+" + strings.ToLower(m[2]); !slices.Contains(rules, cmd) {
					t.Errorf("%s/%s calls %s, which docs/security.md's ACL does not allow (%s)", dir, e.Name(), m[2], cmd)
				}
			}
		}
	}
}

// TestLeastPrivilegeACL creates the Redis user of docs/security.md (under
// a random name, deleted at the end), connects as it and runs every kind
// of transition, a blocking claim, an await, a staged submit and SCRIPT
// LOAD, and identifies the server (INFO, as a store's first call does);
// then checks that the user cannot reach a key, a channel or a
// command outside its rules, from a script either.
func TestLeastPrivilegeACL(t *testing.T) {
	opt := redistest.Shared(t).Options
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := redistest.Client(t, opt)
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	user, pass := "weir-acl-"+hex.EncodeToString(rnd[:4]), hex.EncodeToString(rnd[4:])
	args := []any{"ACL", "SETUSER", user}
	for _, r := range aclRules(t) {
		args = append(args, r)
	}
	args = append(args, ">"+pass) // after the rules: "reset" clears passwords
	if err := admin.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", user) })

	uopt := *opt
	uopt.Username, uopt.Password = user, pass
	rdb := redistest.Client(t, &uopt)
	ns := redistest.Namespace(t, admin, "acl")
	s, err := New(rdb, Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s as the ACL user: %v", what, err)
		}
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING as the ACL user: %v", err)
	}
	// The store can tell what the server is (+info): it refuses KeyDB.
	srv, err := IdentifyServer(ctx, rdb)
	must("INFO", err)
	if srv.Name == "" {
		t.Fatalf("the ACL user cannot tell what the server is (INFO): %+v", srv)
	}
	must("Load", s.Load(ctx))
	if s.CallPath() != "functions" {
		t.Fatalf("the ACL user's store runs %s: the ACL does not let it load the function library", s.CallPath())
	}

	// submit, claim, heartbeat, finish (promoting b), claim, finish: the
	// workflow completes while a waiter awaits it.
	plan := engine.Plan{ID: "w1", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}, {Name: "b", Queue: "q", After: []string{"a"}}}}
	_, err = s.Submit(ctx, engine.SubmitParams{Plan: plan})
	must("submit", err)
	awaited := make(chan error, 1)
	go func() {
		w, err := s.AwaitWorkflow(ctx, "w1")
		if err == nil && w.State != weir.WorkflowCompleted {
			err = fmt.Errorf("workflow ended %s", w.State)
		}
		awaited <- err
	}()
	for _, task := range []string{"a", "b"} {
		cs, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute, Wait: time.Second})
		must("claim", err)
		if len(cs) != 1 || cs[0].Job.Task != task {
			t.Fatalf("claimed %+v, want task %s", cs, task)
		}
		st, err := s.Heartbeat(ctx, engine.HeartbeatParams{Leases: []engine.LeaseRef{{JobID: cs[0].Job.ID, Token: cs[0].Lease.Token}}, Extend: time.Minute})
		must("heartbeat", err)
		if st[0].Lost {
			t.Fatal("lease lost")
		}
		res, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: cs[0].Job.ID, Token: cs[0].Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte(task)}}})
		must("finish", err)
		must("settle", res.Settled[0].Err)
	}
	must("await", <-awaited)
	// The waiter unregistered itself (ZREM): no publish for nobody.
	waitKey := "weir:{" + ns + ":0}:await:w:w1"
	if n, err := admin.Exists(ctx, waitKey).Result(); err != nil || n != 0 {
		t.Errorf("waiter set %s exists (%d, %v) after the await, want gone", waitKey, n, err)
	}

	// After SCRIPT FLUSH (a restart, a failover) the scripts are sent again
	// with EVAL.
	must("SCRIPT FLUSH", admin.ScriptFlush(ctx).Err())
	if _, err := s.GetWorkflow(ctx, "w1"); err != nil {
		t.Fatalf("get workflow after SCRIPT FLUSH as the ACL user: %v", err)
	}

	// A blocking claim on an empty queue waits (BLPOP) and returns nothing.
	cs, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"empty"}, Max: 1, Lease: time.Minute, Wait: 300 * time.Millisecond})
	must("blocking claim", err)
	if len(cs) != 0 {
		t.Fatalf("claimed %d from an empty queue", len(cs))
	}
	// A cancelled blocking claim wakes itself through its private list.
	cctx, ccancel := context.WithCancel(ctx)
	go func() { time.Sleep(100 * time.Millisecond); ccancel() }()
	if _, err := s.Claim(cctx, engine.ClaimParams{Queues: []string{"empty"}, Max: 1, Lease: time.Minute, Wait: 10 * time.Second}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled claim: %v", err)
	}

	// A plain job: enqueue, await it while it is cancelled.
	_, err = s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "j1", Queue: "jobs", Payload: []byte("p")}})
	must("enqueue", err)
	_, err = s.CancelJob(ctx, engine.CancelJobParams{ID: "j1"})
	must("cancel job", err)
	j, err := s.AwaitJob(ctx, "j1")
	must("await job", err)
	if j.State != weir.Cancelled {
		t.Fatalf("job %s", j.State)
	}

	// A large plan is staged (HSET, PEXPIRE) before its submit; cancel it.
	big := engine.Plan{ID: "w2"}
	for i := range 1500 {
		big.Tasks = append(big.Tasks, engine.TaskSpec{Name: fmt.Sprintf("t%d", i), Queue: "big", Payload: []byte("x")})
	}
	_, err = s.Submit(ctx, engine.SubmitParams{Plan: big})
	must("staged submit", err)
	cr, err := s.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: "w2"})
	must("cancel workflow", err)
	if !cr.WorkflowState.Ended() {
		t.Fatalf("cancelled workflow is %s", cr.WorkflowState)
	}
	// A workflow that large is read with a MULTI of HGETALL and GET.
	w2, err := s.GetWorkflow(ctx, "w2")
	must("get large workflow", err)
	if len(w2.Tasks) != 1500 || w2.State != cr.WorkflowState {
		t.Fatalf("large workflow read back: %d tasks, %s", len(w2.Tasks), w2.State)
	}

	// Leases that expire are swept.
	_, err = s.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "j2", Queue: "jobs"}})
	must("enqueue", err)
	_, err = s.Claim(ctx, engine.ClaimParams{Queues: []string{"jobs"}, Max: 1, Lease: time.Millisecond})
	must("claim", err)
	time.Sleep(5 * time.Millisecond)
	_, err = s.ExpireLeases(ctx, engine.ExpireParams{})
	must("expire", err)

	page, err := s.ListWorkflows(ctx, weir.ListParams{})
	must("list", err)
	if len(page.Workflows) != 2 {
		t.Fatalf("listed %d workflows, want 2", len(page.Workflows))
	}
	must("pause", s.PauseQueue(ctx, "q"))
	qs, err := s.Queues(ctx)
	must("queues", err)
	paused := false
	for _, q := range qs {
		paused = paused || (q.Name == "q" && q.Paused)
	}
	if !paused {
		t.Fatalf("queue q not paused: %+v", qs)
	}
	must("resume", s.ResumeQueue(ctx, "q"))
	_, err = s.Stats(ctx)
	must("stats", err)
	_, err = s.PurgeQueue(ctx, "jobs")
	must("purge", err)
	_, err = s.GetJob(ctx, "w1/a")
	must("get job", err)
	must("beat worker", s.BeatWorker(ctx, engine.BeatWorkerParams{Info: weir.WorkerInfo{ID: "w-1", Host: "h"}, TTL: time.Minute}))
	wl, err := s.Workers(ctx)
	must("workers", err)
	if wl.Total != 1 {
		t.Fatalf("listed %d workers, want 1", wl.Total)
	}
	must("remove worker", s.RemoveWorker(ctx, "w-1"))

	// weir migrate of a namespace protocol 2 wrote (the fixture, loaded
	// by the admin), then a claim of it
	f := readP2Fixture(t)
	loadP2(t, admin, f, "p2four")
	s2, err := New(rdb, Options{Namespace: "p2four", Clock: func() time.Time { return p2T0.Add(10 * time.Second) }})
	must("new store", err)
	mr, err := s2.Migrate(ctx, MigrateParams{Step: 3})
	must("migrate", err)
	if !mr.Done {
		t.Fatalf("migrate as the ACL user: %+v", mr)
	}
	_, err = s2.Claim(ctx, engine.ClaimParams{Queues: []string{"mixed"}, Max: 5, Lease: time.Minute})
	must("claim after migrate", err)

	// Outside its rules: other keys, other channels, other commands, and
	// other keys from inside a script.
	noperm := func(what string, err error) {
		t.Helper()
		if !isPermissionError(err) {
			t.Errorf("%s as the ACL user: %v, want a permission error", what, err)
		}
	}
	noperm("SET other key", rdb.Set(ctx, "acl-test-other:"+ns, "x", time.Minute).Err())
	noperm("GET other key", rdb.Get(ctx, "acl-test-other:"+ns).Err())
	noperm("PUBLISH other channel", rdb.Publish(ctx, "other:"+ns, "x").Err())
	noperm("KEYS", rdb.Keys(ctx, "*").Err())
	noperm("FLUSHALL", rdb.FlushAll(ctx).Err())
	noperm("CONFIG GET", rdb.ConfigGet(ctx, "*").Err())
	noperm("EVAL on another key", rdb.Eval(ctx, "return redis.call('SET', KEYS[1], 'x')", []string{"acl-test-other:" + ns}).Err())
	noperm("EVAL on an undeclared key", rdb.Eval(ctx, "return redis.call('GET', 'acl-test-other:"+ns+"')", nil).Err())
	if n, err := admin.Exists(ctx, "acl-test-other:"+ns).Result(); err != nil || n != 0 {
		t.Errorf("the ACL user wrote a key outside weir:*: %d %v", n, err)
	}
}

// scriptACLFailures are the words of the error a server gives a script
// whose redis.call the ACL refuses: the whole reply's class is ERR (the
// script's error), so these words tell it from any other script error.
var scriptACLFailures = []string{
	"can't access",          // Redis 6.x and 7.0, KeyDB: "The user executing the script can't access at least one of the keys …"
	"ACL failure in script", // Redis 7.2 and later, Valkey: "ACL failure in script: No permissions to access a key"
}

// isPermissionError reports whether err is a server's refusal by ACL: the
// error class NOPERM (a command, or the keys EVAL declares), or a script's
// ERR with the words of a refused redis.call (scriptACLFailures), in any
// server's wording.
func isPermissionError(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	class, _, _ := strings.Cut(rerr.Error(), " ")
	switch class {
	case "NOPERM":
		return true
	case "ERR":
		for _, w := range scriptACLFailures {
			if strings.Contains(rerr.Error(), w) {
				return true
			}
		}
	}
	return false
}

// isPermissionError knows every server's wording of an ACL refusal (as
// each replied, 2026-12-06: Redis 7.0.15, 7.4.1, Valkey 8.0.1, KeyDB) and
// no other error.
func TestIsPermissionError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{redisError("NOPERM this user has no permissions to access one of the keys used as arguments"), true}, // 7.0, KeyDB
		{redisError("NOPERM No permissions to access a key"), true},                                           // 7.2+, Valkey
		{redisError("NOPERM No permissions to access a channel"), true},
		{redisError("NOPERM User u has no permissions to run the 'keys' command"), true},
		{redisError("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments script: 3b0b, on @user_script:1."), true},
		{redisError("ERR ACL failure in script: No permissions to access a key script: 3b0b, on @user_script:1."), true},
		{redisError("ERR Error running script (call to f_3b0b): @user_script:1: @user_script: 1: The user executing the script can't access at least one of the keys mentioned in the command arguments"), true}, // KeyDB
		{redisError("ERR Error running script (call to f_3b0b): @user_script:1: attempt to call a nil value"), false},
		{redisError("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{redisError("ERR unknown command 'keys'"), false},
		{errors.New("NOPERM but not a reply"), false},
		{nil, false},
	} {
		if got := isPermissionError(c.err); got != c.want {
			t.Errorf("isPermissionError(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// redisError is an error reply, as go-redis gives one (redis.Error).
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}
