package redisstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// TestServerClockNow: with no test clock, a write's now is the server's
// TIME in ms (spec/scripts.md, Time): read_clock makes it from TIME's
// seconds and the first three of its microseconds' six digits, which
// TIME gives without leading zeros. Each case's microseconds need a
// different padding.
func TestServerClockNow(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	s, err := New(rdb, Options{Namespace: "clk"})
	if err != nil {
		t.Fatal(err)
	}
	for i, us := range []int{0, 7, 42, 999, 7042, 12345, 100000, 999999} {
		// each case a second after the last, so that now moves on
		at := time.Unix(1796389032+int64(i), int64(us)*1000)
		m.SetTime(at)
		id := "j" + strconv.Itoa(i)
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: id, Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		keys, err := rdb.Keys(bg, "*seq3").Result()
		if err != nil || len(keys) != 1 {
			t.Fatalf("seq hash: %v %v", keys, err)
		}
		got, err := rdb.HGet(bg, keys[0], "now").Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := strconv.FormatInt(at.UnixMilli(), 10); got != want {
			t.Errorf("TIME %d s %d µs: the write's now is %s, want %s", at.Unix(), us, got, want)
		}
	}
}
