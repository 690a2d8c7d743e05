package redisstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// TestWorkerRegistryKeys holds the worker registry's keys to spec/keys.md:
// one field and one member per worker in partition 0, a beat removes at
// most engine.WorkerSweep dead records, and both keys carry a server TTL
// past the latest expiry, so a registry whose workers all died goes away.
func TestWorkerRegistryKeys(t *testing.T) {
	e := newEnv(t, engine.DefaultConfig())
	prefix := keysOf(e.ns + ":0").prefix
	kh, kt := prefix+"workers", prefix+"workers:t"
	beat := func(id string, ttl time.Duration) {
		t.Helper()
		err := e.store.BeatWorker(bg, engine.BeatWorkerParams{Info: weir.WorkerInfo{ID: id, Host: "h"}, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
	}
	n := engine.WorkerSweep + 5
	for i := range n {
		beat(fmt.Sprintf("dead%02d", i), time.Second)
	}
	if h, z := e.rdb.HLen(bg, kh).Val(), e.rdb.ZCard(bg, kt).Val(); h != int64(n) || z != int64(n) {
		t.Fatalf("after %d beats: %d fields, %d members", n, h, z)
	}
	e.advance(time.Second)
	beat("live", time.Minute)
	want := int64(n - engine.WorkerSweep + 1)
	if h, z := e.rdb.HLen(bg, kh).Val(), e.rdb.ZCard(bg, kt).Val(); h != want || z != want {
		t.Fatalf("a beat after %d records died: %d fields, %d members, want %d (it removes %d)", n, h, z, want, engine.WorkerSweep)
	}
	beat("live", time.Minute)
	if h := e.rdb.HLen(bg, kh).Val(); h != 1 {
		t.Fatalf("a second beat: %d fields, want 1", h)
	}
	for _, k := range []string{kh, kt} {
		ttl := e.rdb.PTTL(bg, k).Val()
		if ttl <= time.Minute || ttl > 2*time.Minute {
			t.Fatalf("%s: TTL %v, want the latest expiry (1m ahead) plus 60s", k, ttl)
		}
	}
	if err := e.store.RemoveWorker(bg, "live"); err != nil {
		t.Fatal(err)
	}
	if n := e.rdb.Exists(bg, kh, kt).Val(); n != 0 {
		t.Fatalf("after the last worker's removal %d registry keys remain", n)
	}
}

// BenchmarkWorkerBeat is one worker's registry write per heartbeat, with
// 100 running job IDs in its record, and the list of 100 live workers:
//
//	WEIR_REDIS_URL=redis://127.0.0.1:6379/0 go test ./redisstore -run '^$' -bench WorkerBeat
func BenchmarkWorkerBeat(b *testing.B) {
	e := newEnv(b, engine.DefaultConfig())
	jobs := make([]string, engine.MaxWorkerJobs)
	for i := range jobs {
		jobs[i] = fmt.Sprintf("01JDZ8W3V0KQ5N7C9X2M4P6R%02d", i)
	}
	info := func(i int) weir.WorkerInfo {
		return weir.WorkerInfo{ID: fmt.Sprintf("host-%d-0a1b2c3d", i), Host: "host", PID: i, Version: "v1.0.0", Concurrency: 100,
			Queues: []weir.WorkerQueue{{Name: "default", Weight: 1}}, Running: len(jobs), RunningJobs: jobs}
	}
	for i := range 100 {
		if err := e.store.BeatWorker(bg, engine.BeatWorkerParams{Info: info(i), TTL: time.Minute}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("beat", func(b *testing.B) {
		p := engine.BeatWorkerParams{Info: info(0), TTL: time.Minute}
		for b.Loop() {
			if err := e.store.BeatWorker(bg, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list100", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.store.Workers(bg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
