package redisstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// memoryCeilings are the bytes per record that docs/reliability.md
// (Sizing maxmemory) tells users to plan for: TestRecordMemory fails when
// a shape's INFO figure is over its ceiling, so that the table there
// stays true. Each is the figure measured on redis-server 7.0.15 plus
// about a fifth.
var memoryCeilings = map[string]int64{
	"plain job, queued":                     500,
	"plain job, running":                    650,
	"plain job, ended":                      900,
	"plain job 100 B, queued":               1_000,
	"plain job 100 B, ended":                1_750,
	"plain job 1 KiB, ended":                4_500,
	"10-task workflow, submitted":           7_000,
	"10-task workflow, root running":        7_500,
	"10-task workflow, ended":               19_500,
	"100-task workflow, submitted":          50_000,
	"100-task workflow, ended":              150_000,
	"stream: plain job, calls of one job":   180,
	"stream: plain job, calls of 100 jobs":  135,
	"stream: 10-task workflow, batch calls": 1_400,
}

// TestRecordMemory measures what weir's records cost a redis-server, for
// docs/reliability.md (Sizing maxmemory). Each shape runs on an emptied
// server (FLUSHALL: the keyspace's tables grow from nothing, as they would
// for the first records) with the server's clock (records get their Redis
// TTLs as in production) and events off, many records at once (the
// allocator rounds each allocation up, so one record alone would say
// little), and reports per record: INFO memory used_memory after a phase
// minus before the shape (what the server's limit counts), and the sum of
// MEMORY USAGE … SAMPLES 0 over the namespace's keys (what the keys hold;
// it leaves out the keyspace's tables and TTL entries). The event stream
// is measured alone: the shapes with events on, MEMORY USAGE of the
// stream. Run it with
//
//	WEIR_REDIS_URL=redis://127.0.0.1:6379/0 go test -count=1 -run '^TestRecordMemory$' -v ./redisstore/
//
// (WEIR_REDIS_URL says a real server is wanted; the test starts its own
// redis-server.) Each INFO figure must stay under its memoryCeilings entry.
func TestRecordMemory(t *testing.T) {
	rdb := privateRedis(t)
	var rows []string
	// shape runs fn on an emptied server with a store of namespace "mem"
	// (events on or off); fn calls mark(phase, n, unit) after each phase,
	// which reports the phase's bytes per unit.
	shape := func(name string, events bool, fn func(s *Store, mark func(phase string, n int, unit string))) {
		t.Helper()
		// SYNC: Valkey 8 flushes in the background by default
		// (lazyfree-lazy-user-flush), and the memory still being freed
		// would count against the shape
		if err := rdb.Do(bg, "FLUSHALL", "SYNC").Err(); err != nil {
			t.Fatal(err)
		}
		s, err := New(rdb, Options{Namespace: "mem", Config: engine.DefaultConfig()})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetEventsOff(bg, !events); err != nil {
			t.Fatal(err)
		}
		// the function library is loaded before (its code counts in
		// used_memory once per server, not per record)
		if _, err := s.Queues(bg); err != nil {
			t.Fatal(err)
		}
		before := usedMemory(t, rdb)
		fn(s, func(phase string, n int, unit string) {
			t.Helper()
			label := name + ", " + phase
			if events {
				label = "stream: " + name + ", " + phase
				u, err := rdb.MemoryUsage(bg, s.keys.prefix+"events", 0).Result()
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, fmt.Sprintf("%-40s %7d B per %s (MEMORY USAGE of the stream, %d %ss)", label, u/int64(n), unit, n, unit))
				checkMemoryCeiling(t, label, u/int64(n))
				return
			}
			info := (usedMemory(t, rdb) - before) / int64(n)
			rows = append(rows, fmt.Sprintf("%-40s %7d B per %s (keys %d; %d %ss)", label, info, unit, keysMemory(t, rdb)/int64(n), n, unit))
			checkMemoryCeiling(t, label, info)
		})
	}
	pad := func(n int) []byte { return []byte(strings.Repeat("p", n)) }
	claimAll := func(s *Store, queue string, n, batch int) []engine.Claimed {
		t.Helper()
		var out []engine.Claimed
		for len(out) < n {
			c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{queue}, Max: batch, Lease: time.Hour})
			if err != nil || len(c) == 0 {
				t.Fatalf("claim %s: %v, %d jobs after %d", queue, err, len(c), len(out))
			}
			out = append(out, c...)
		}
		return out
	}
	finishAll := func(s *Store, cs []engine.Claimed, result []byte, batch int) {
		t.Helper()
		for i := 0; i < len(cs); i += batch {
			var os []engine.Outcome
			for _, c := range cs[i:min(i+batch, len(cs))] {
				os = append(os, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted, Result: result})
			}
			if _, err := s.Finish(bg, engine.FinishParams{Outcomes: os}); err != nil {
				t.Fatal(err)
			}
		}
	}
	const nJobs, nWorkflows = 2000, 200
	// plain enqueues nJobs jobs with a payload of size bytes, claims them
	// and completes them with a result of that size, batch jobs a call.
	plain := func(size, batch int) func(s *Store, mark func(string, int, string)) {
		return func(s *Store, mark func(string, int, string)) {
			for i := range nJobs {
				if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "job-" + strconv.Itoa(i), Queue: "plain", Payload: pad(size)}}); err != nil {
					t.Fatal(err)
				}
			}
			mark("queued", nJobs, "job")
			cs := claimAll(s, "plain", nJobs, batch)
			mark("running", nJobs, "job")
			finishAll(s, cs, pad(size), batch)
			mark("ended", nJobs, "job")
		}
	}
	// workflows submits n workflows of size tasks (a root, size-2 tasks
	// after it, a join after those; 20-byte payloads), then runs them to
	// their end (20-byte results, calls of 100 jobs).
	workflows := func(n, size int) func(s *Store, mark func(string, int, string)) {
		return func(s *Store, mark func(string, int, string)) {
			for i := range n {
				p := engine.Plan{ID: "wf-" + strconv.Itoa(i), Tasks: []engine.TaskSpec{{Name: "root", Queue: "wq", Payload: pad(20)}}}
				var mid []string
				for k := 1; k < size-1; k++ {
					name := "task-" + strconv.Itoa(k)
					mid = append(mid, name)
					p.Tasks = append(p.Tasks, engine.TaskSpec{Name: name, Queue: "wq", After: []string{"root"}, Payload: pad(20)})
				}
				p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "join", Queue: "wq", After: mid, Payload: pad(20)})
				if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
					t.Fatal(err)
				}
			}
			mark("submitted", n, "workflow")
			roots := claimAll(s, "wq", n, 100)
			mark("root running", n, "workflow")
			finishAll(s, roots, pad(20), 100)
			finishAll(s, claimAll(s, "wq", n*(size-2), 100), pad(20), 100)
			finishAll(s, claimAll(s, "wq", n, 100), pad(20), 100)
			mark("ended", n, "workflow")
		}
	}
	// only keeps the phases named.
	only := func(fn func(*Store, func(string, int, string)), phases ...string) func(*Store, func(string, int, string)) {
		return func(s *Store, mark func(string, int, string)) {
			fn(s, func(phase string, n int, unit string) {
				for _, p := range phases {
					if p == phase {
						mark(phase, n, unit)
					}
				}
			})
		}
	}

	shape("plain job", false, plain(20, 100))
	shape("plain job 100 B", false, only(plain(100, 100), "queued", "ended"))
	shape("plain job 1 KiB", false, only(plain(1024, 100), "ended"))
	shape("10-task workflow", false, workflows(nWorkflows, 10))
	shape("100-task workflow", false, only(workflows(nWorkflows/10, 100), "submitted", "ended"))
	shape("plain job", true, func(s *Store, mark func(string, int, string)) {
		only(plain(20, 1), "ended")(s, func(_ string, n int, unit string) { mark("calls of one job", n, unit) })
	})
	shape("plain job", true, func(s *Store, mark func(string, int, string)) {
		only(plain(20, 100), "ended")(s, func(_ string, n int, unit string) { mark("calls of 100 jobs", n, unit) })
	})
	shape("10-task workflow", true, func(s *Store, mark func(string, int, string)) {
		only(workflows(nWorkflows, 10), "ended")(s, func(_ string, n int, unit string) { mark("batch calls", n, unit) })
	})
	t.Logf("bytes per record on redis-server %s (INFO memory used_memory; keys: the sum of MEMORY USAGE):\n%s",
		serverInfo(t, rdb, "server", "redis_version"), strings.Join(rows, "\n"))
}

// checkMemoryCeiling fails t when a figure is over its memoryCeilings
// entry, or not above zero.
func checkMemoryCeiling(t *testing.T, label string, per int64) {
	t.Helper()
	c, ok := memoryCeilings[label]
	switch {
	case !ok:
		t.Fatalf("no ceiling for %q", label)
	case per <= 0:
		t.Errorf("%s: %d B: a record costs something; the server freed memory of something else meanwhile", label, per)
	case per > c:
		t.Errorf("%s: %d B, over the %d B docs/reliability.md (Sizing maxmemory) plans for", label, per, c)
	}
}

// usedMemory is INFO memory's used_memory.
func usedMemory(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	n, err := strconv.ParseInt(serverInfo(t, rdb, "memory", "used_memory"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// keysMemory sums MEMORY USAGE … SAMPLES 0 over every key of the server.
func keysMemory(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	var sum int64
	iter := rdb.Scan(bg, 0, "*", 1000).Iterator()
	for iter.Next(bg) {
		u, err := rdb.MemoryUsage(bg, iter.Val(), 0).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		sum += u
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return sum
}

// serverInfo is the field of an INFO section.
func serverInfo(t *testing.T, rdb *redis.Client, section, field string) string {
	t.Helper()
	info, err := rdb.Info(bg, section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	t.Fatalf("no %s in INFO %s", field, section)
	return ""
}
