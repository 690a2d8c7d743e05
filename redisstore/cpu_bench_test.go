package redisstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// BenchmarkScriptSetup measures, on a private redis-server, the server time
// of a call before the transition's own code runs (metric setup-us, INFO
// commandstats usec per call, network excluded): on the scripts path each
// built script's include files followed by "return 1", which Redis runs
// on every call; on the functions path a function of a copy of the
// library whose body is begin(KEYS, ARGV) and "return 1", the library's
// top level having run once, at load. "return1" alone is the floor.
func BenchmarkScriptSetup(b *testing.B) {
	if !realRedis() {
		b.Skip("set WEIR_REDIS_URL to measure on a private redis-server")
	}
	rdb := privateRedis(b)
	probe := strings.ReplaceAll(library.src, library.name, "weirprobe") +
		"\nredis.register_function{function_name = 'weirprobe_setup', callback = function(KEYS, ARGV)\n  begin(KEYS, ARGV)\n  return 1\nend}\n"
	if err := rdb.FunctionLoad(bg, probe).Err(); err != nil {
		b.Fatal(err)
	}
	type variant struct {
		name string
		run  func() error
	}
	keys := []string{"weir:{b:0}:"}
	variants := []variant{
		{"return1", func() error { return rdb.Eval(bg, "return 1", keys).Err() }},
		{"functions", func() error { return rdb.FCall(bg, "weirprobe_setup", keys, "", "0", "1000").Err() }},
	}
	for _, n := range []string{"enqueue", "claim", "finish", "heartbeat", "submit"} {
		src, _, _ := strings.Cut(scripts[n].text().src, "-- ---- scripts/")
		s := redis.NewScript(src + "return 1\n")
		if err := s.Load(bg, rdb).Err(); err != nil {
			b.Fatal(err)
		}
		variants = append(variants, variant{"scripts-" + n, func() error { return s.EvalSha(bg, rdb, keys, "", "0", "1000").Err() }})
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			c0, u0 := redistest.CommandStats(b, rdb).Sum("eval", "evalsha", "fcall")
			for i := 0; i < b.N; i++ {
				if err := v.run(); err != nil {
					b.Fatal(err)
				}
			}
			c1, u1 := redistest.CommandStats(b, rdb).Sum("eval", "evalsha", "fcall")
			if c1 > c0 {
				b.ReportMetric((u1-u0)/float64(c1-c0), "setup-us")
			}
		})
	}
}

// serverCPU returns the redis-server main thread's CPU time (user + sys)
// in µs: unlike the server's command times it does not grow when the
// process waits for a core on a busy machine, and it includes the network
// work of every call.
func serverCPU(tb testing.TB, rdb *redis.Client) float64 {
	info, err := rdb.Info(bg, "cpu").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var s float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user_main_thread" || k == "used_cpu_sys_main_thread") {
			f, _ := strconv.ParseFloat(v, 64)
			s += f
		}
	}
	return s * 1e6
}

// cpuClients is how many clients drive the server at once in
// BenchmarkServerCPU: enough to keep it busy, so that the figures are what
// a unit costs on a loaded server (where a server that idles between calls
// also pays for waking up: measured alone, one client's chain costs about
// 30 µs a step more).
const cpuClients = 16

// BenchmarkServerCPU reports what a unit of work costs the redis-server, on
// a private one, per call path: a chain step (a finish that promotes the
// next task of a 100-task chain and claims it, one call per step; with
// chain-alone, of one chain per client, so that the next task is alone in
// its queue), a fan-in task (workflows of 10 tasks joined by an 11th, claimed and
// finished 10 at a time) and a plain job (enqueued 100 a call, claimed and
// finished 50 a call; plain-job-rated the same on rate-limited queues),
// with cpuClients clients at once. Metrics: cpu-us,
// the server's main-thread CPU per unit (network included); script-us, the
// time inside the transition calls per unit (INFO commandstats); cmds,
// Redis commands per unit (those inside Lua included). With -benchtime,
// also ±15% flat in workflow size: see BenchmarkChainStep.
func BenchmarkServerCPU(b *testing.B) {
	if !realRedis() && callgrindFromEnv() == nil {
		b.Skip("set WEIR_REDIS_URL to measure on a private redis-server (or WEIR_CALLGRIND)")
	}
	type scenario struct {
		name string
		// prepare writes client c's work for about units units (not
		// measured) and returns the queue to run and the claim size.
		prepare func(b *testing.B, s *Store, c, units int) (queue string, max int)
	}
	scenarios := []scenario{
		{"chain-step", func(b *testing.B, s *Store, c, units int) (string, int) {
			id := "c" + strconv.Itoa(c)
			for k := 0; k*99 < units; k++ {
				p := cpuPlan(id, 100, false)
				p.ID = id + "-" + strconv.Itoa(k)
				if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
					b.Fatal(err)
				}
			}
			return "q" + id, 1
		}},
		// chain-step with one chain per client: every promoted task is
		// alone in its queue (the case of weir bench's chain)
		{"chain-alone", func(b *testing.B, s *Store, c, units int) (string, int) {
			id := "a" + strconv.Itoa(c)
			if _, err := s.Submit(bg, engine.SubmitParams{Plan: cpuPlan(id, units+1, false)}); err != nil {
				b.Fatal(err)
			}
			return "q" + id, 1
		}},
		{"fanin-task", func(b *testing.B, s *Store, c, units int) (string, int) {
			id := "f" + strconv.Itoa(c)
			for k := 0; k*11 < units; k++ {
				p := cpuPlan(id, 11, true)
				p.ID = id + "-" + strconv.Itoa(k)
				if _, err := s.Submit(bg, engine.SubmitParams{Plan: p}); err != nil {
					b.Fatal(err)
				}
			}
			return "q" + id, 10
		}},
		{"plain-job", func(b *testing.B, s *Store, c, units int) (string, int) { return "p" + strconv.Itoa(c), 50 }},
		// plain jobs of cpuKeys concurrency keys (job k has key k mod
		// cpuKeys), claimed in the rotation across keys, 50 a claim
		{"keyed-job", func(b *testing.B, s *Store, c, units int) (string, int) { return "k" + strconv.Itoa(c), 50 }},
		// plain-job on a queue with a rate limit that never refuses: what
		// counting the starts adds to a claim (RateLimitQueue)
		{"plain-job-rated", func(b *testing.B, s *Store, c, units int) (string, int) {
			q := "rp" + strconv.Itoa(c)
			if err := s.RateLimitQueue(bg, engine.RateLimitQueueParams{Queue: q, Limit: engine.MaxRateLimit, Period: time.Second}); err != nil {
				b.Fatal(err)
			}
			return q, 50
		}},
	}
	for _, path := range []CallPath{PathFunctions, PathScripts} {
		for _, sc := range scenarios {
			b.Run(path.String()+"/"+sc.name, func(b *testing.B) {
				rdb, s, cg := cpuStore(b, path)
				per := b.N/cpuClients + 1
				queues := make([]string, cpuClients)
				maxes := make([]int, cpuClients)
				for c := range cpuClients {
					queues[c], maxes[c] = sc.prepare(b, s, c, per)
				}
				measureUnits(b, rdb, s, cg, queues, maxes, per, strings.HasPrefix(sc.name, "plain-job") || sc.name == "keyed-job")
			})
		}
	}
}

// callgrindServer is a redis-server run under valgrind --tool=callgrind,
// named by WEIR_CALLGRIND (its address and pid, "127.0.0.1:6398,1234"):
// BenchmarkServerCPU then also reports the server's instructions per unit
// (metric instr), which, unlike times, repeat from run to run whatever
// else the machine does.
type callgrindServer struct {
	addr string
	pid  string
	dir  string // where its callgrind.out files are
}

func callgrindFromEnv() *callgrindServer {
	v := os.Getenv("WEIR_CALLGRIND")
	addr, pid, ok := strings.Cut(v, ",")
	if !ok {
		return nil
	}
	dir := os.Getenv("WEIR_CALLGRIND_DIR")
	if dir == "" {
		dir = "."
	}
	return &callgrindServer{addr: addr, pid: pid, dir: dir}
}

// zero resets the counters; instructions dumps them and returns the total
// since the last zero.
func (c *callgrindServer) zero(tb testing.TB) {
	if out, err := exec.Command("callgrind_control", "-z", c.pid).CombinedOutput(); err != nil {
		tb.Fatalf("callgrind_control -z: %v %s", err, out)
	}
}

func (c *callgrindServer) instructions(tb testing.TB) float64 {
	before, _ := filepath.Glob(filepath.Join(c.dir, "*"))
	if out, err := exec.Command("callgrind_control", "-d", c.pid).CombinedOutput(); err != nil {
		tb.Fatalf("callgrind_control -d: %v %s", err, out)
	}
	after, _ := filepath.Glob(filepath.Join(c.dir, "*"))
	for _, f := range after {
		if slices.Contains(before, f) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "summary: "); ok {
				n, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
				return n
			}
			if v, ok := strings.CutPrefix(line, "totals: "); ok {
				n, _ := strconv.ParseFloat(strings.Fields(v)[0], 64)
				return n
			}
		}
	}
	tb.Fatal("callgrind_control -d wrote no new dump with a total")
	return 0
}

// measureUnits runs cpuClients clients at once, client c working through
// queue queues[c] (claims of maxes[c], each finish carrying the next
// claim; a plain-job client first enqueues its per jobs, 100 a call) until
// it did per units, and reports the server's cost per unit: cpu-us,
// script-us, cmds and, under callgrind, instr.
// cpuKeys is the number of concurrency keys of BenchmarkServerCPU's
// keyed-job scenario.
const cpuKeys = 20

func measureUnits(b *testing.B, rdb *redis.Client, s *Store, cg *callgrindServer, queues []string, maxes []int, per int, plain bool) {
	b.ResetTimer()
	measureClients(b, rdb, cg, len(queues), "", func(c int) int {
		cp := engine.ClaimParams{Queues: []string{queues[c]}, Max: maxes[c], Lease: time.Minute}
		done := 0
		if plain {
			key := ""
			if strings.HasPrefix(queues[c], "k") {
				key = "t"
			}
			if !enqueuePlain(b, s, queues[c], queues[c]+"-", key, per) {
				return 0
			}
		}
		for done < per {
			n, _ := drain(b, s, cp)
			if n == 0 {
				break
			}
			done += n
		}
		return done
	})
}

// enqueuePlain enqueues n plain jobs on queue, 100 a call, job k with ID
// prefix+k and, when key is not empty, concurrency key key+(k mod
// cpuKeys); it reports whether all went in (else it reported the error).
func enqueuePlain(b *testing.B, s *Store, queue, prefix, key string, n int) bool {
	for i := 0; i < n; i += 100 {
		var ps []engine.EnqueueParams
		for k := i; k < min(i+100, n); k++ {
			j := engine.JobSpec{ID: prefix + strconv.Itoa(k), Queue: queue}
			if key != "" {
				j.Key = key + strconv.Itoa(k%cpuKeys)
			}
			ps = append(ps, engine.EnqueueParams{Job: j})
		}
		if _, err := s.EnqueueBatch(bg, ps); err != nil {
			b.Error(err)
			return false
		}
	}
	return true
}

// measureClients runs work(c) for clients c at once and reports the
// server's cost per unit, the sum of what the works return, as meter's
// report does with prefix. It does not reset the benchmark's timer, which
// would clear the metrics reported before.
func measureClients(b *testing.B, rdb *redis.Client, cg *callgrindServer, clients int, prefix string, work func(c int) int) {
	m := startMeter(b, rdb, cg)
	var mu sync.Mutex
	units := 0
	var wg sync.WaitGroup
	b.StartTimer()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := work(c)
			mu.Lock()
			units += done
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	m.reportAs(b, prefix, float64(units))
}

// meter measures what a server spends from startMeter to report.
type meter struct {
	rdb  *redis.Client
	cg   *callgrindServer
	cpu0 float64
}

// startMeter resets the server's command statistics and notes its CPU
// time (and, under callgrind, zeroes its instruction count).
func startMeter(b *testing.B, rdb *redis.Client, cg *callgrindServer) *meter {
	if err := rdb.ConfigResetStat(bg).Err(); err != nil {
		b.Fatal(err)
	}
	m := &meter{rdb: rdb, cg: cg, cpu0: serverCPU(b, rdb)}
	if cg != nil {
		cg.zero(b)
	}
	return m
}

// report reports the server's cost per unit since startMeter: cpu-us,
// script-us, cmds and, under callgrind, instr.
func (m *meter) report(b *testing.B, units float64) { m.reportAs(b, "", units) }

// reportAs is report with prefix before each metric's name.
func (m *meter) reportAs(b *testing.B, prefix string, units float64) {
	if m.cg != nil {
		b.ReportMetric(m.cg.instructions(b)/units, prefix+"instr")
	}
	cpu := serverCPU(b, m.rdb) - m.cpu0
	stats := redistest.CommandStats(b, m.rdb)
	_, usec := stats.Sum(redistest.ScriptCommands...)
	b.ReportMetric(cpu/units, prefix+"cpu-us")
	b.ReportMetric(usec/units, prefix+"script-us")
	b.ReportMetric(float64(stats.Measured().Calls())/units, prefix+"cmds")
}

// cpuPlan is a chain of n tasks, or with fanin n-1 roots joined by a last
// task, all in queue "q<id>".
func cpuPlan(id string, n int, fanin bool) engine.Plan {
	p := engine.Plan{ID: id}
	for i := 0; i < n; i++ {
		ts := engine.TaskSpec{Name: "t" + strconv.Itoa(i), Queue: "q" + id}
		switch {
		case fanin && i == n-1:
			for d := 0; d < n-1; d++ {
				ts.After = append(ts.After, "t"+strconv.Itoa(d))
			}
		case !fanin && i > 0:
			ts.After = []string{"t" + strconv.Itoa(i-1)}
		}
		p.Tasks = append(p.Tasks, ts)
	}
	return p
}

// cpuStore returns the server a CPU benchmark measures (the callgrind one
// of WEIR_CALLGRIND, flushed, else a private redis-server) and a store on
// it with path, its library loaded.
func cpuStore(b *testing.B, path CallPath) (*redis.Client, *Store, *callgrindServer) {
	rdb, cg := cpuServer(b, true)
	return rdb, cpuOpen(b, rdb, path), cg
}

// cpuServer returns the server a CPU benchmark measures: the callgrind one
// of WEIR_CALLGRIND (flushed first and last when flush), else a private
// redis-server.
func cpuServer(b *testing.B, flush bool) (*redis.Client, *callgrindServer) {
	cg := callgrindFromEnv()
	if cg == nil {
		return privateRedis(b), nil
	}
	// no read timeout: a server under callgrind runs some fifty times
	// slower, and 16 clients' calls queue on it; a call that timed out
	// and ran again would count its work twice
	rdb := redis.NewClient(&redis.Options{Addr: cg.addr, ReadTimeout: -1})
	b.Cleanup(func() {
		if flush {
			rdb.FlushAll(bg)
		}
		rdb.Close()
	})
	if flush {
		if err := rdb.FlushAll(bg).Err(); err != nil {
			b.Fatal(err)
		}
	}
	return rdb, cg
}

// cpuOpen opens the store of namespace "cpu" on rdb with path and loads
// its library.
func cpuOpen(b *testing.B, rdb *redis.Client, path CallPath) *Store {
	// WEIR_PARTITIONS=N measures on a namespace of N partitions
	// (spec/partitions.md): the same units, routed, split and rotated
	parts := 0
	if v := os.Getenv("WEIR_PARTITIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("WEIR_PARTITIONS %q: %v", v, err)
		}
		parts = n
	}
	s, err := New(rdb, Options{Namespace: "cpu", Path: path, Config: engine.Config{Partitions: parts}})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Load(bg); err != nil {
		b.Fatal(err)
	}
	// WEIR_EVENTS=off measures the scripts with the namespace's event
	// stream off (spec/events.md)
	if os.Getenv("WEIR_EVENTS") == "off" {
		if err := s.SetEventsOff(bg, true); err != nil {
			b.Fatal(err)
		}
	}
	return s
}
