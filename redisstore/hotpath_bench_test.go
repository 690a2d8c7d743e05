package redisstore

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// cmdStats returns INFO commandstats calls by command name (commands run
// inside Lua included), without the INFO/CONFIG calls of the measurement.
func cmdStats(t testing.TB, e *testEnv) map[string]int64 {
	m := map[string]int64{}
	for name, s := range redistest.CommandStats(t, e.rdb).Measured() {
		m[name] = s.Calls
	}
	return m
}

func statsDelta(a, b map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, v := range b {
		if v-a[k] != 0 {
			d[k] = v - a[k]
		}
	}
	return d
}

func formatStats(d map[string]int64, per int) string {
	var ks []string
	var total int64
	for k, v := range d {
		ks = append(ks, k)
		total += v
	}
	sort.Strings(ks)
	var b strings.Builder
	fmt.Fprintf(&b, "total %.2f/unit:", float64(total)/float64(per))
	for _, k := range ks {
		fmt.Fprintf(&b, " %s=%.2f", k, float64(d[k])/float64(per))
	}
	return b.String()
}

// TestHotPathCommands prints, on a private redis-server, the Redis
// commands per job of each phase of the plain-job path and of 1,000-task
// chain and fan-in workflows, by command name, and round trips per job.
// A report, not an assertion: set WEIR_HOTPATH_REPORT=1 to run it.
func TestHotPathCommands(t *testing.T) {
	if os.Getenv("WEIR_HOTPATH_REPORT") == "" {
		t.Skip("set WEIR_HOTPATH_REPORT=1 (and WEIR_REDIS_URL) to print the report")
	}
	for _, ret := range []time.Duration{7 * 24 * time.Hour, 0} {
		for _, server := range []bool{false, true} {
			cfg := engine.DefaultConfig()
			cfg.Retention = ret
			name := "plain/test-clock/retention=" + ret.String()
			if server {
				name = "plain/server-clock/retention=" + ret.String()
			}
			t.Run(name, func(t *testing.T) { hotPlain(t, cfg, 20000, 100, server) })
		}
	}
	t.Run("chain1000", func(t *testing.T) { hotDAG(t, "chain", 1000) })
	t.Run("fanin1000", func(t *testing.T) { hotDAG(t, "fanin", 1000) })
}

// hotPlain runs n plain jobs: enqueued one by one, then finished and
// claimed batch at a time. serverClock runs the store as in production
// (the server's TIME, TTLs on ended records, wake-up tokens only while a
// claim may wait); else the test clock.
func hotPlain(t *testing.T, cfg engine.Config, n, batch int, serverClock bool) {
	e := newPrivateEnv(t, cfg)
	s := e.store
	if serverClock {
		var err error
		if s, err = New(e.rdb, Options{Namespace: "private-srv", Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Load(bg); err != nil {
		t.Fatal(err)
	}
	s0 := cmdStats(t, e)
	for i := 0; i < n; i++ {
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j" + strconv.Itoa(i), Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
	}
	s1 := cmdStats(t, e)
	cp := engine.ClaimParams{Queues: []string{"q"}, Max: batch, Lease: time.Minute}
	trips := 1
	claimed, err := s.Claim(bg, cp)
	if err != nil {
		t.Fatal(err)
	}
	s2 := cmdStats(t, e)
	done, calls := finishAll(t, s, cp, claimed)
	trips += calls
	s3 := cmdStats(t, e)
	if done != n {
		t.Fatalf("%d of %d done", done, n)
	}
	t.Logf("enqueue      per job: %s (1 round trip per job, unbatched)", formatStats(statsDelta(s0, s1), n))
	t.Logf("first claim  per job: %s", formatStats(statsDelta(s1, s2), batch))
	t.Logf("finish+claim per job: %s (%.3f round trips per job)", formatStats(statsDelta(s2, s3), n), float64(trips)/float64(n))
	t.Logf("whole path   per job: %s", formatStats(statsDelta(s0, s3), n))
}

func hotDAG(t *testing.T, shape string, n int) {
	e := newPrivateEnv(t, engine.DefaultConfig())
	s := e.store
	if err := s.Load(bg); err != nil {
		t.Fatal(err)
	}
	var plans []engine.Plan
	switch shape {
	case "chain": // one workflow of n sequential tasks
		p := engine.Plan{ID: "chain"}
		for i := 0; i < n; i++ {
			ts := engine.TaskSpec{Name: "t" + strconv.Itoa(i), Queue: "q"}
			if i > 0 {
				ts.After = []string{"t" + strconv.Itoa(i-1)}
			}
			p.Tasks = append(p.Tasks, ts)
		}
		plans = append(plans, p)
	case "fanin": // n/11 workflows of 10 parallel tasks joined by one
		for w := 0; w < n/11; w++ {
			p := engine.Plan{ID: "f" + strconv.Itoa(w)}
			var after []string
			for i := 0; i < 10; i++ {
				name := "p" + strconv.Itoa(i)
				p.Tasks = append(p.Tasks, engine.TaskSpec{Name: name, Queue: "q"})
				after = append(after, name)
			}
			p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "join", Queue: "q", After: after})
			plans = append(plans, p)
		}
	}
	s0 := cmdStats(t, e)
	tasks := 0
	for _, p := range plans {
		if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
		tasks += len(p.Tasks)
	}
	s1 := cmdStats(t, e)
	done, trips := drain(t, s, engine.ClaimParams{Queues: []string{"q"}, Max: 50, Lease: time.Minute})
	s2 := cmdStats(t, e)
	if done != tasks {
		t.Fatalf("%d of %d done", done, tasks)
	}
	t.Logf("%s submit (%d calls) per task: %s", shape, len(plans), formatStats(statsDelta(s0, s1), tasks))
	t.Logf("%s claim+finish per task: %s (%.3f round trips per task)", shape, formatStats(statsDelta(s1, s2), tasks), float64(trips)/float64(tasks))
}
