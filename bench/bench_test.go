package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/internal/rediskeys"
	"github.com/weirflow/weir/internal/redistest"
	"go.uber.org/goleak"
)

// workerEnv makes the test binary a bench worker process (see TestMain).
const workerEnv = "WEIR_BENCH_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		cfg, err := ParseWorkerArgs(os.Args[1:])
		if err == nil {
			err = RunWorkerProcess(context.Background(), cfg, os.Stdin, os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// selfWorker runs worker processes as this test binary.
func selfWorker(args []string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	return cmd
}

// tiny are sizes that run in a second or two, even with -race.
func tiny() Options {
	return Options{
		Jobs: 120, Concurrencies: []int{1, 8}, Processes: []int{2}, ProcessConcurrency: 4,
		ChainTasks: 12, FaninWorkflows: 6, FaninWidth: 3, FaninConcurrency: 8, SubmitTasks: 250, LimitsConcurrency: 8,
		CeilingClients: 8, CeilingDuration: 50 * time.Millisecond, Producers: 4,
		WorkerCommand: selfWorker,
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// namespaceKeys counts the keys of namespace ns on srv.
func namespaceKeys(t *testing.T, srv redistest.Server, ns string) int {
	t.Helper()
	n, err := rediskeys.Count(t.Context(), redistest.Client(t, srv.Options), rediskeys.Namespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// approx reports whether a and b agree to 1e-9 relative.
func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// checkReport checks what every report must hold, whatever the server.
func checkReport(t *testing.T, rep *Report, o Options) {
	t.Helper()
	if rep.CeilingPerS <= 0 || rep.CeilingCalls <= 0 || rep.CeilingClients != o.CeilingClients {
		t.Errorf("ceiling %v/s, %d calls, %d clients", rep.CeilingPerS, rep.CeilingCalls, rep.CeilingClients)
	}
	if len(rep.CeilingRunsPerS) != 2 {
		t.Fatalf("ceiling runs %v, want 2", rep.CeilingRunsPerS)
	}
	if !approx(rep.CeilingPerS, float64(rep.CeilingCalls)/rep.CeilingSeconds) {
		t.Errorf("ceiling %v/s = %d calls in %v s? runs %v", rep.CeilingPerS, rep.CeilingCalls, rep.CeilingSeconds, rep.CeilingRunsPerS)
	}
	if lo, hi := min(rep.CeilingRunsPerS[0], rep.CeilingRunsPerS[1]), max(rep.CeilingRunsPerS[0], rep.CeilingRunsPerS[1]); rep.CeilingPerS < lo || rep.CeilingPerS > hi {
		t.Errorf("ceiling %v/s outside its runs %v", rep.CeilingPerS, rep.CeilingRunsPerS)
	}
	if rep.KeysLeft != 0 {
		t.Errorf("%d keys left in the namespace", rep.KeysLeft)
	}
	if !strings.HasPrefix(rep.Namespace, "bench-") {
		t.Errorf("namespace %q", rep.Namespace)
	}
	checkMachine(t, rep)
	type key struct {
		name        string
		conc, procs int
		variant     string
	}
	want := map[key]int{}
	for _, c := range o.Concurrencies {
		want[key{ScenarioPlain, c, 1, ""}] = o.Jobs
	}
	for _, p := range o.Processes {
		want[key{ScenarioPlain, o.ProcessConcurrency, p, ""}] = o.Jobs
	}
	want[key{ScenarioChain, 1, 1, ""}] = o.ChainTasks
	want[key{ScenarioFanin, o.FaninConcurrency, 1, ""}] = o.FaninWorkflows * (o.FaninWidth + 1)
	want[key{ScenarioSubmit, 1, 1, ""}] = o.SubmitTasks
	for _, v := range LimitVariants {
		want[key{ScenarioLimits, o.LimitsConcurrency, 1, v.Name}] = o.Jobs
	}
	if len(rep.Scenarios) != len(want) {
		t.Errorf("%d rows, want %d", len(rep.Scenarios), len(want))
	}
	for _, s := range rep.Scenarios {
		k := key{s.Name, s.Concurrency, s.Processes, s.Variant}
		n, ok := want[k]
		if !ok {
			t.Errorf("unexpected row %+v", k)
			continue
		}
		delete(want, k)
		if s.Jobs != n {
			t.Errorf("%v: %d jobs, want %d", k, s.Jobs, n)
		}
		if s.JobsPerS <= 0 || s.Seconds <= 0 || s.CommandsPerJob <= 0 || s.RoundTripsPerJob <= 0 {
			t.Errorf("%v: rate %v over %v s, %v commands and %v round trips per job", k, s.JobsPerS, s.Seconds, s.CommandsPerJob, s.RoundTripsPerJob)
		}
		if !approx(s.CeilingRatio, s.JobsPerS/rep.CeilingPerS) {
			t.Errorf("%v: ceiling ratio %v, rate/ceiling %v", k, s.CeilingRatio, s.JobsPerS/rep.CeilingPerS)
		}
		if s.Name != ScenarioSubmit && !approx(s.JobsPerS, float64(s.Jobs)/s.Seconds) {
			t.Errorf("%v: %v jobs/s, %d jobs in %v s", k, s.JobsPerS, s.Jobs, s.Seconds)
		}
		// The server's script time is measured where INFO commandstats
		// has it (not on miniredis).
		if (s.Name == ScenarioPlain || s.Name == ScenarioLimits) && (s.ServerUsPerJob != nil) != (rep.Server == RedisServer) {
			t.Errorf("%v: server time per job %v on %s", k, s.ServerUsPerJob, rep.Server)
		} else if s.ServerUsPerJob != nil && *s.ServerUsPerJob <= 0 {
			t.Errorf("%v: server time per job %v", k, *s.ServerUsPerJob)
		}
		checkCPU(t, rep, s)
		switch s.Name {
		case ScenarioPlain:
			if s.EnqueuePerS <= 0 || !approx(s.EnqueueCeilingRatio, s.EnqueuePerS/rep.CeilingPerS) {
				t.Errorf("%v: enqueue %v/s, ratio %v", k, s.EnqueuePerS, s.EnqueueCeilingRatio)
			}
			// One Enqueue is one script call: at least one round trip and
			// one command (the FCALL or EVALSHA) per job.
			if s.EnqueueRoundTripsPerJob < 1 || s.EnqueueCommandsPerJob < 1 {
				t.Errorf("%v: enqueue %v round trips, %v commands per job", k, s.EnqueueRoundTripsPerJob, s.EnqueueCommandsPerJob)
			}
		case ScenarioChain:
			if s.StepsPerS != s.JobsPerS || s.PromotionP50Ms <= 0 ||
				!(s.PromotionP50Ms <= s.PromotionP90Ms && s.PromotionP90Ms <= s.PromotionP99Ms && s.PromotionP99Ms <= s.PromotionMaxMs) {
				t.Errorf("chain: %v steps/s, promotion p50 %v p90 %v p99 %v max %v", s.StepsPerS, s.PromotionP50Ms, s.PromotionP90Ms, s.PromotionP99Ms, s.PromotionMaxMs)
			}
			// Each sequential step claims and finishes: at least one round
			// trip per task.
			if s.RoundTripsPerJob < 1 {
				t.Errorf("chain: %v round trips per task", s.RoundTripsPerJob)
			}
		case ScenarioFanin:
			if s.TasksPerS != s.JobsPerS || s.Workflows != o.FaninWorkflows || s.SubmitWorkflowsPerS <= 0 {
				t.Errorf("fanin: %+v", s)
			}
		case ScenarioSubmit:
			if s.SubmitMs <= 0 || !approx(s.SubmitMs/1000, s.Seconds) {
				t.Errorf("submit: %v ms over %v s", s.SubmitMs, s.Seconds)
			}
		}
	}
	for k := range want {
		t.Errorf("missing row %+v", k)
	}
}

// checkCPU checks a row's CPU figures: the worker's for every row that runs
// jobs (from the worker processes for a multi-process row), the
// producers' for the rows that enqueue or submit before the worker runs,
// the server's where INFO cpu has it (not on miniredis); none for submit,
// and no process CPU on the embedded server, which runs in this process.
func checkCPU(t *testing.T, rep *Report, s Result) {
	t.Helper()
	k := ScenarioKey{s.Name, s.Concurrency, s.Processes, s.Variant}
	runs := s.Name != ScenarioSubmit
	process := runs && rep.Server != EmbeddedServer
	produces := s.Name == ScenarioPlain || s.Name == ScenarioLimits || s.Name == ScenarioFanin
	for _, f := range []struct {
		name string
		v    *float64
		want bool
	}{
		{"worker_cpu_us_per_job", s.WorkerCPUUsPerJob, process},
		{"producer_cpu_us_per_job", s.ProducerCPUUsPerJob, process && produces},
		{"server_cpu_us_per_job", s.ServerCPUUsPerJob, runs && rep.Server == RedisServer},
	} {
		switch {
		case (f.v != nil) != f.want:
			t.Errorf("%v on %s: %s %v, want one: %v", k, rep.Server, f.name, deref(f.v), f.want)
		case f.v != nil && !(*f.v > 0):
			t.Errorf("%v: %s %v, want > 0", k, f.name, *f.v)
		}
	}
}

// jsonFields are the fields the issue names, by scenario.
var jsonFields = map[string][]string{
	"":             {"name", "concurrency", "processes", "jobs_per_s", "ceiling_ratio", "commands_per_job", "round_trips_per_job"},
	ScenarioChain:  {"steps_per_s", "promotion_p50_ms", "promotion_p99_ms"},
	ScenarioPlain:  {"enqueue_per_s"},
	ScenarioFanin:  {"tasks_per_s"},
	ScenarioSubmit: {"submit_ms"},
}

// checkJSON checks the JSON form of rep for the fields.
func checkJSON(t *testing.T, rep *Report) map[string]any {
	t.Helper()
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	CheckJSONShape(t, m)
	return m
}

// CheckJSONShape checks a decoded report for the fields.
func CheckJSONShape(t *testing.T, m map[string]any) {
	t.Helper()
	if v, ok := m["ceiling_per_s"].(float64); !ok || v <= 0 {
		t.Errorf("ceiling_per_s = %v", m["ceiling_per_s"])
	}
	if _, ok := m["server"].(string); !ok {
		t.Errorf("server = %v", m["server"])
	}
	rows, ok := m["scenarios"].([]any)
	if !ok || len(rows) == 0 {
		t.Fatalf("scenarios = %v", m["scenarios"])
	}
	for _, r := range rows {
		row := r.(map[string]any)
		name, _ := row["name"].(string)
		for _, f := range append(jsonFields[""], jsonFields[name]...) {
			if _, ok := row[f]; !ok {
				t.Errorf("%s row has no %q: %v", name, f, row)
			}
		}
	}
}

func TestRunServers(t *testing.T) {
	for _, srv := range redistest.Servers(t) {
		name := srv.Name
		t.Run(name, func(t *testing.T) {
			o := tiny()
			o.RedisURL = srv.URL
			rep, err := Run(testCtx(t), o)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"redis": RedisServer, "miniredis": LiteServer}[name]; rep.Server != want {
				t.Errorf("server %q, want %q", rep.Server, want)
			}
			checkReport(t, rep, o)
			m := checkJSON(t, rep)
			for _, r := range m["scenarios"].([]any) {
				row := r.(map[string]any)
				if _, ok := row["worker_cpu_us_per_job"].(float64); !ok && row["name"] != ScenarioSubmit {
					t.Errorf("JSON %v %v: worker_cpu_us_per_job %v", row["name"], row["processes"], row["worker_cpu_us_per_job"])
				}
			}
			var table strings.Builder
			if err := rep.WriteTable(&table); err != nil || !strings.Contains(table.String(), "worker cpu µs/job") {
				t.Errorf("table (%v):\n%s", err, table.String())
			}
			if n := namespaceKeys(t, srv, rep.Namespace); n != 0 {
				t.Errorf("%d keys left in namespace %s", n, rep.Namespace)
			}
			if name == "redis" {
				if rep.RedisVersion == "" {
					t.Error("no redis_version")
				}
				for _, s := range rep.Scenarios {
					if s.MemoryPerJobBytes == nil && s.MemoryPerWorkflowBytes == nil {
						t.Errorf("%s: no memory figure", s.Name)
					}
					if s.Name == ScenarioSubmit && (s.ScriptMs == nil || *s.ScriptMs <= 0 || s.ScriptCalls < 1) {
						t.Errorf("submit: script %v ms in %d calls", s.ScriptMs, s.ScriptCalls)
					}
				}
			}
		})
	}
}

// TestRunCluster: a run on the Redis Cluster of WEIR_REDIS_CLUSTER, its
// worker processes too, reports the masters, sums their figures (script
// time is there, as on one Redis) and leaves no key on any of them.
func TestRunCluster(t *testing.T) {
	rdb := redistest.Cluster(t)
	var n atomic.Int64 // ForEachMaster runs f on every master at once
	if err := rdb.ForEachMaster(t.Context(), func(context.Context, *redis.Client) error { n.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	masters := int(n.Load())
	o := tiny()
	o.Cluster = os.Getenv("WEIR_REDIS_CLUSTER")
	o.Partitions = 1
	rep, err := Run(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Server != RedisServer || rep.RedisVersion == "" || rep.Masters != masters || rep.Partitions != 1 {
		t.Errorf("server %q %q, %d masters (want %d), %d partitions", rep.Server, rep.RedisVersion, rep.Masters, masters, rep.Partitions)
	}
	if !strings.Contains(rep.CommandsSource, "summed over the cluster's") {
		t.Errorf("commands source %q", rep.CommandsSource)
	}
	checkReport(t, rep, o)
	checkJSON(t, rep)
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil || !strings.Contains(table.String(), fmt.Sprintf("Redis Cluster of %d masters", masters)) {
		t.Errorf("table (%v):\n%s", err, table.String())
	}
	if n, err := rediskeys.Count(t.Context(), rdb, rediskeys.Namespace(rep.Namespace)); err != nil || n != 0 {
		t.Errorf("%d keys left in namespace %s (%v)", n, rep.Namespace, err)
	}
}

func TestRunEmbedded(t *testing.T) {
	o := tiny()
	o.Processes = []int{}
	o.Jobs, o.SubmitTasks = 40, 100
	o.Scenarios = []string{ScenarioPlain, ScenarioSubmit}
	rep, err := Run(testCtx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Server != EmbeddedServer || rep.RedisVersion != "" {
		t.Errorf("server %q %q, want the embedded one", rep.Server, rep.RedisVersion)
	}
	if len(rep.Scenarios) != len(o.Concurrencies)+1 {
		t.Fatalf("%d rows, want %d", len(rep.Scenarios), len(o.Concurrencies)+1)
	}
	for _, s := range rep.Scenarios {
		if s.MemoryPerJobBytes != nil || s.MemoryPerWorkflowBytes != nil || s.ScriptMs != nil {
			t.Errorf("%s: memory or script time on the embedded server: %+v", s.Name, s)
		}
		// the embedded server runs in this process: its CPU is not the
		// worker's
		if s.WorkerCPUUsPerJob != nil || s.ProducerCPUUsPerJob != nil || s.ServerCPUUsPerJob != nil {
			t.Errorf("%s: CPU figures on the embedded server: %+v", s.Name, s)
		}
	}
	m := checkJSON(t, rep)
	if m["server"] != EmbeddedServer {
		t.Errorf("JSON server %v", m["server"])
	}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "embedded miniredis") || strings.Count(table.String(), "\n     plain") != len(o.Concurrencies) {
		t.Errorf("table:\n%s", table.String())
	}
}

func TestRunBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Scenarios: []string{"plain", "nope"}},
		{Jobs: -1},
		{Concurrencies: []int{0}},
		{Processes: []int{-2}},
		{SubmitTasks: 10_001},
		{RedisURL: "nope://x"},
		{Cluster: "nohostport"},
		{RedisURL: "redis://127.0.0.1:1/0", Cluster: "127.0.0.1:2"},
		{Partitions: -1},
		{Partitions: 1025},
	} {
		if _, err := RunWith(t.Context(), o, Quick()); !errors.Is(err, ErrUsage) {
			t.Errorf("%+v: %v, want ErrUsage", o, err)
		}
	}
}

func TestWorkerArgs(t *testing.T) {
	cfg := WorkerConfig{RedisURL: "redis://127.0.0.1:1/0", Namespace: "bench-x", Queue: "q", Concurrency: 7}
	got, err := ParseWorkerArgs(cfg.Args())
	if err != nil || got != cfg {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	cl := WorkerConfig{Cluster: "127.0.0.1:1,127.0.0.1:2", Partitions: 3, Namespace: "bench-x", Queue: "q", Concurrency: 7}
	if got, err := ParseWorkerArgs(cl.Args()); err != nil || got != cl {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	for _, args := range [][]string{nil, {"--redis", "x"}, append(cfg.Args(), "extra"), {"--bogus"},
		append(cfg.Args(), "--cluster", "127.0.0.1:1"), append(cfg.Args(), "--partitions", "-1"), append(cfg.Args(), "--partitions", "1025")} {
		if _, err := ParseWorkerArgs(args); !errors.Is(err, ErrUsage) {
			t.Errorf("%q: %v, want ErrUsage", args, err)
		}
	}
	// With no flag, the environment: WEIR_REDIS_URL first.
	args := []string{"--namespace", "n", "--queue", "q", "--concurrency", "1"}
	t.Setenv("WEIR_REDIS_URL", "")
	t.Setenv("WEIR_REDIS_CLUSTER", "127.0.0.1:1")
	if got, err := ParseWorkerArgs(args); err != nil || got.Cluster != "127.0.0.1:1" || got.RedisURL != "" {
		t.Errorf("cluster from the environment: %+v, %v", got, err)
	}
	t.Setenv("WEIR_REDIS_URL", "redis://127.0.0.1:1/0")
	if got, err := ParseWorkerArgs(args); err != nil || got.Cluster != "" || got.RedisURL != "redis://127.0.0.1:1/0" {
		t.Errorf("both in the environment: %+v, %v, want the URL", got, err)
	}
}

func TestWorkerProcessNeedsGo(t *testing.T) {
	cfg := WorkerConfig{RedisURL: redistest.Mini(t).URL, Namespace: "bench-t", Queue: "q", Concurrency: 1}
	var out strings.Builder
	err := RunWorkerProcess(testCtx(t), cfg, strings.NewReader("stop\n"), &out)
	if err == nil {
		t.Fatal("no error without go")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var first, last childMsg
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &first) != nil || json.Unmarshal([]byte(lines[1]), &last) != nil ||
		!first.Ready || !last.Final || last.Err == "" {
		t.Errorf("output %q", out.String())
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want float64 }{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {0, 1}} {
		if got := percentile(v, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("percentile of nothing")
	}
}

func TestStatField(t *testing.T) {
	v := "calls=12,usec=340,usec_per_call=28.33,rejected_calls=0,failed_calls=1"
	if statField(v, "calls") != 12 || statField(v, "usec") != 340 || statField(v, "missing") != 0 {
		t.Errorf("statField of %q", v)
	}
	if got := scanPattern(`weir:{a*b?[c]\}:`); got != `weir:{a\*b\?\[c\]\\}:` {
		t.Errorf("scanPattern = %q", got)
	}
}

// TestRunWorkerProcessFails: a worker process that dies before it is ready
// fails the run with its reason, and the namespace is still deleted.
func TestRunWorkerProcessFails(t *testing.T) {
	m := redistest.Mini(t)
	o := tiny()
	o.RedisURL = m.URL
	o.Scenarios, o.Concurrencies, o.Processes = []string{ScenarioPlain}, []int{}, []int{1}
	o.WorkerCommand = func(args []string) *exec.Cmd { return selfWorker(args[:len(args)-2]) } // no --concurrency
	rep, err := Run(testCtx(t), o)
	if err == nil || !strings.Contains(err.Error(), "bench worker needs") {
		t.Fatalf("report %+v, error %v; want the worker's reason", rep, err)
	}
	if keys := m.Mini.Keys(); len(keys) != 0 {
		t.Errorf("keys left: %v", keys)
	}
}
