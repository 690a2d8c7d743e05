package lua

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// prelude returns script name's spliced definitions (what Redis runs at the
// top level of every call before the script's own code), as buildScript
// splices them or, with hoisted, rewritten by hoist, followed by
// "return 1".
func prelude(tb testing.TB, name string, hoisted bool) string {
	tb.Helper()
	b, err := luaFS.ReadFile("scripts/" + name + ".lua")
	if err != nil {
		tb.Fatal(err)
	}
	var incs []string
	var body strings.Builder
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if inc, ok := strings.CutPrefix(strings.TrimSpace(line), "--!include "); ok {
			incs = append(incs, strings.TrimSpace(inc))
			continue
		}
		body.WriteString(line)
	}
	var chunks []chunk
	for _, inc := range incs {
		cs, err := includeChunks(inc)
		if err != nil {
			tb.Fatal(err)
		}
		chunks = append(chunks, cs...)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "-- prelude of %s\n", name)
	used := needed(chunks, luaNames(body.String()))
	if !hoisted {
		for _, c := range used {
			out.WriteString(c.text)
		}
	} else {
		defs, err := hoist(used)
		if err != nil {
			tb.Fatal(err)
		}
		out.WriteString(defs)
	}
	out.WriteString("return 1\n")
	return out.String()
}

// evalshaUsec returns INFO commandstats' usec_per_call of evalsha.
func evalshaUsec(tb testing.TB, rdb *redis.Client) (calls int64, usec float64) {
	info, err := rdb.Info(bg, "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				usec, _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return calls, usec
}

// BenchmarkScriptSetup measures, on a private redis-server, the server time
// of one call of each hot-path script's spliced definitions followed by
// "return 1": the per-call setup that every call of the script pays before
// its own code runs (metric setup-us; "return 1" alone is the floor). The
// "-hoisted" variants are the same definitions rewritten by hoist (not
// used by buildScript: tests of lua/ look for the declaration forms in
// the built sources), to show what the order of the locals costs.
func BenchmarkScriptSetup(b *testing.B) {
	if !realRedis() {
		b.Skip("set WEIR_REDIS_URL to measure on a private redis-server")
	}
	rdb := privateRedis(b)
	srcs := map[string]string{"return1": "return 1"}
	names := []string{"return1"}
	for _, n := range []string{"enqueue", "claim", "finish", "heartbeat", "submit"} {
		srcs[n] = prelude(b, n, false)
		srcs[n+"-hoisted"] = prelude(b, n, true)
		names = append(names, n, n+"-hoisted")
	}
	for _, n := range names {
		b.Run(n, func(b *testing.B) {
			s := redis.NewScript(srcs[n])
			keys := []string{"weir:{b:0}:", "weir:{b:0}:seq", "weir:{b:0}:queues", "weir:{b:0}:wf", "weir:{b:0}:expiry"}
			if err := s.Load(bg, rdb).Err(); err != nil {
				b.Fatal(err)
			}
			c0, u0 := evalshaUsec(b, rdb)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.EvalSha(bg, rdb, keys, "", "0", "1000").Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			c1, u1 := evalshaUsec(b, rdb)
			if c1 > c0 {
				b.ReportMetric((u1-u0)/float64(c1-c0), "setup-us")
			}
		})
	}
}

// hoist returns the text of the chosen chunks with every name they declare
// hoisted into one "local" statement at the top, ordered so that the names
// most captured by the chunks' functions get the highest stack slots, and
// each declaration turned into an assignment ("local function f(" becomes
// "f = function(", "local a, b = x" becomes "a, b = x"; a bare forward
// declaration is dropped). Same values, same order of evaluation: only the
// slots differ. Why: Redis runs the whole body on every call, and Lua 5.1
// creates each closure's upvalue for a local of the main chunk by walking
// the list of the chunk's captured locals from the highest slot down to it
// (luaF_findupval), so a helper captured by many functions (hget, fmt, C,
// ...) and declared early costs a walk past every captured local above it,
// for every function that captures it. Ordering by capture count puts the
// common targets at the head of the list.
func hoist(chunks []chunk) (string, error) {
	captured := map[string]int{}
	order := map[string]int{}
	var names []string
	for _, c := range chunks {
		for _, d := range c.defs {
			if _, ok := order[d]; !ok {
				order[d] = len(names)
				names = append(names, d)
			}
		}
	}
	for _, c := range chunks {
		if !strings.Contains(c.text, "function") {
			continue
		}
		own := map[string]bool{}
		for _, d := range c.defs {
			own[d] = true
		}
		for u := range c.uses {
			if _, ok := order[u]; ok && !own[u] {
				captured[u]++
			}
		}
	}
	sorted := append([]string(nil), names...)
	sort.SliceStable(sorted, func(a, b int) bool { return captured[sorted[a]] < captured[sorted[b]] })
	var out strings.Builder
	for i := 0; i < len(sorted); i += 50 {
		out.WriteString("local " + strings.Join(sorted[i:min(i+50, len(sorted))], ", ") + "\n")
	}
	for _, c := range chunks {
		t, err := assignForm(c)
		if err != nil {
			return "", err
		}
		out.WriteString(t)
	}
	return out.String(), nil
}

var bareLocal = regexp.MustCompile(`^local\s+[A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*\s*(?:--.*)?$`)

// assignForm rewrites the statement line of c (its first line at column 0
// that is not a comment) from a declaration to an assignment.
func assignForm(c chunk) (string, error) {
	lines := strings.SplitAfter(c.text, "\n")
	for i, line := range lines {
		t := strings.TrimRight(line, "\r\n")
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		switch {
		case defFunc.MatchString(t):
			m := defFunc.FindStringSubmatch(t)
			lines[i] = m[1] + " = function" + strings.TrimPrefix(line, m[0])
		case bareLocal.MatchString(t):
			lines[i] = "\n"
		case defLocal.MatchString(t):
			lines[i] = strings.TrimLeft(strings.TrimPrefix(line, "local"), " \t")
		case defAssign.MatchString(t):
		default:
			return "", fmt.Errorf("include %s: cannot hoist %q", c.file, t)
		}
		return strings.Join(lines, ""), nil
	}
	return "", fmt.Errorf("include %s: chunk without a statement", c.file)
}

// serverCPU returns the redis-server main thread's CPU time (user + sys)
// in µs: unlike the server's command times it does not grow when the
// process waits for a core on a busy machine.
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

// BenchmarkServerCPU reports the redis-server CPU time per chain step (a
// finish that promotes the next task of a 100-task chain and claims it),
// per plain job (finish and claim in batches of 50) and per fan-in task
// (10 tasks joined by one, finish and claim in batches of 10), metric
// cpu-us, on a private redis-server. It includes the server's network
// work; compare runs of one machine state.
func BenchmarkServerCPU(b *testing.B) {
	if !realRedis() {
		b.Skip("set WEIR_REDIS_URL to measure on a private redis-server")
	}
	chain := func(id string, n int, fanin bool) engine.Plan {
		p := engine.Plan{ID: id}
		for i := 0; i < n; i++ {
			ts := engine.TaskSpec{Name: "t" + strconv.Itoa(i), Queue: "q"}
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
	// run finishes and claims (max k) until the queue is empty; returns the
	// jobs finished.
	run := func(b *testing.B, e *benchEnv, k int) int {
		done, _ := drain(b, e.store, engine.ClaimParams{Queues: []string{"q"}, Max: k, Lease: time.Minute})
		return done
	}
	for _, sc := range []struct {
		name   string
		n, k   int
		fanin  bool
		plain  bool
		perRun int
	}{
		{name: "chain-step", n: 100, k: 1},
		{name: "fanin-task", n: 11, k: 10, fanin: true},
		{name: "plain-job", k: 50, plain: true},
	} {
		b.Run(sc.name, func(b *testing.B) {
			e := openBenchEnv(b, privateRedis(b), true)
			var cpu float64
			var cmds int64
			units := 0
			for i := 0; units < b.N; i++ {
				if sc.plain {
					e.enqueueN(b, "j"+strconv.Itoa(i)+"-", 1000)
				} else if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: chain("w"+strconv.Itoa(i), sc.n, sc.fanin)}); err != nil {
					b.Fatal(err)
				}
				n0, c0 := e.calls(b), serverCPU(b, e.rdb)
				units += run(b, e, sc.k)
				cpu += serverCPU(b, e.rdb) - c0
				cmds += e.calls(b) - n0 - 1 // the INFO cpu in between
			}
			b.ReportMetric(cpu/float64(units), "cpu-us")
			b.ReportMetric(float64(cmds)/float64(units), "cmds")
		})
	}
}
