package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/bench"
)

// TestBenchQuickJSON runs `weir bench --quick --json` as a user would: on
// the embedded server, on WEIR_REDIS_URL's server when set and on the
// Redis Cluster of WEIR_REDIS_CLUSTER when set. The multi-process run
// starts `weir bench worker` children of the binary.
func TestBenchQuickJSON(t *testing.T) {
	envs := map[string][]string{"embedded": nil}
	if u := os.Getenv("WEIR_REDIS_URL"); u != "" {
		envs["redis"] = []string{"WEIR_REDIS_URL=" + u}
	}
	if c := os.Getenv("WEIR_REDIS_CLUSTER"); c != "" {
		envs["cluster"] = []string{"WEIR_REDIS_CLUSTER=" + c}
	}
	for name, env := range envs {
		t.Run(name, func(t *testing.T) {
			r := weir(t, "", env, "bench", "--quick", "--json", "--jobs", "40")
			r.WantCode(t, exitOK)
			var rep bench.Report
			dec := json.NewDecoder(strings.NewReader(r.Stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rep); err != nil {
				t.Fatalf("decode: %v\n%s", err, r.Stdout)
			}
			var raw map[string]any
			if err := json.Unmarshal([]byte(r.Stdout), &raw); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"server", "ceiling_per_s", "scenarios", "namespace", "keys_left", "machine", "call_path"} {
				if _, ok := raw[f]; !ok {
					t.Errorf("no %q in the report", f)
				}
			}
			want := map[string]string{"embedded": bench.EmbeddedServer, "redis": bench.RedisServer, "cluster": bench.RedisServer}[name]
			if rep.Server != want || (name != "embedded") != (rep.RedisVersion != "") || (name == "cluster") != (rep.Masters > 0) {
				t.Errorf("server %q version %q, %d masters, want %q", rep.Server, rep.RedisVersion, rep.Masters, want)
			}
			if m := rep.Machine; m.Cores < 1 || m.OS == "" || m.GoVersion == "" || (rep.CallPath != bench.CallPathScripts && rep.CallPath != bench.CallPathFunctions) {
				t.Errorf("machine %+v, call path %q", m, rep.CallPath)
			}
			if rep.KeysLeft != 0 || rep.CeilingPerS <= 0 {
				t.Errorf("keys left %d, ceiling %v", rep.KeysLeft, rep.CeilingPerS)
			}
			q := bench.Quick()
			seen := map[string]int{}
			multi := false
			for _, s := range rep.Scenarios {
				seen[s.Name]++
				if s.JobsPerS <= 0 || s.CommandsPerJob <= 0 || s.RoundTripsPerJob <= 0 {
					t.Errorf("%s: %+v", s.Name, s)
				}
				if s.Name == bench.ScenarioPlain && s.Processes > 1 {
					multi = true
				}
			}
			if seen[bench.ScenarioPlain] != len(q.Concurrencies)+len(q.Processes) || !multi {
				t.Errorf("plain rows %d (multi-process %v), want %d", seen[bench.ScenarioPlain], multi, len(q.Concurrencies)+len(q.Processes))
			}
			for _, s := range []string{bench.ScenarioChain, bench.ScenarioFanin, bench.ScenarioSubmit} {
				if seen[s] != 1 {
					t.Errorf("%d %s rows", seen[s], s)
				}
			}
		})
	}
}

// TestBenchTable runs a one-scenario bench and reads its table.
func TestBenchTable(t *testing.T) {
	r := weir(t, "", nil, "bench", "--quick", "--scenarios", "chain")
	r.WantCode(t, exitOK)
	for _, want := range []string{"embedded miniredis", "ceiling:", "promotion", "0 keys left"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("no %q in the table:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "plain") {
		t.Errorf("plain ran with --scenarios chain:\n%s", r.Stdout)
	}
}

func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--scenarios", "plain,nope"},
		{"bench", "--namespace", "mine"},
		{"bench", "--concurrency", "1,x"},
		{"bench", "--jobs", "-3"},
		{"bench", "extra"},
		{"bench", "worker", "--queue", "q"},
	} {
		r := weir(t, "", nil, args...)
		r.WantCode(t, exitUsage)
	}
}

// savedReport writes a report as `weir bench --json` saves it and returns
// its path.
func savedReport(t *testing.T, dir, name string, rep *bench.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// reportPair is an old and a new saved report: plain at concurrency 10 went
// from 1,000 to 2,500 jobs/s and from 9 to 6 commands per job; the chain
// row is in the old one only, the fan-in row in the new one only.
func reportPair(t *testing.T) (oldPath, newPath string) {
	dir := t.TempDir()
	machine := bench.Machine{CPUModel: "AMD EPYC", Cores: 2, OS: "linux", Arch: "amd64", GoVersion: "go1.26.8", LoadBefore: &bench.Load{One: 0.4}}
	old := &bench.Report{Server: bench.RedisServer, RedisVersion: "7.0.15", CallPath: bench.CallPathScripts, Machine: machine, CeilingPerS: 40_000,
		Scenarios: []bench.Result{
			{Name: bench.ScenarioPlain, Concurrency: 10, Processes: 1, Jobs: 20_000, JobsPerS: 1_000, CommandsPerJob: 9, RoundTripsPerJob: 0.3},
			{Name: bench.ScenarioChain, Concurrency: 1, Processes: 1, Jobs: 1_000, JobsPerS: 2_000, PromotionP50Ms: 0.5},
		}}
	cur := *old
	cur.RedisVersion, cur.CallPath = "7.2.4", bench.CallPathFunctions
	cur.Scenarios = []bench.Result{
		{Name: bench.ScenarioPlain, Concurrency: 10, Processes: 1, Jobs: 20_000, JobsPerS: 2_500, CommandsPerJob: 6, RoundTripsPerJob: 0.3},
		{Name: bench.ScenarioFanin, Concurrency: 50, Processes: 1, Jobs: 11_000, Workflows: 1_000, JobsPerS: 5_000},
	}
	return savedReport(t, dir, "old.json", old), savedReport(t, dir, "new.json", &cur)
}

// TestBenchCompareSaved compares two saved reports with --against: no
// Redis, no run.
func TestBenchCompareSaved(t *testing.T) {
	oldPath, newPath := reportPair(t)
	r := weir(t, "", []string{"WEIR_REDIS_URL=redis://127.0.0.1:1/0"}, "bench", "--compare", oldPath, "--against", newPath)
	r.WantCode(t, exitOK)
	for _, re := range []string{
		`(?m)^old: ` + regexp.QuoteMeta(oldPath) + `: redis 7\.0\.15, scripts; AMD EPYC, 2 cores`,
		`(?m)^new: ` + regexp.QuoteMeta(newPath) + `: redis 7\.2\.4, functions;`,
		`(?m)^WARNING: the runs differ in server \(redis 7\.0\.15 → redis 7\.2\.4\), path \(scripts → functions\)`,
		`(?m)^plain +10 +1 +jobs/s +higher +1,000 +2,500 +2\.500× +better$`,
		`(?m)^plain +10 +1 +cmds/job +lower +9\.00 +6\.00 +0\.667× +better$`,
		`(?m)^plain +10 +1 +trips/job +lower +0\.300 +0\.300 +1\.000× +same$`,
		`(?m)^only in the old run \(.*old\.json\): chain conc 1 procs 1$`,
		`(?m)^only in the new run \(.*new\.json\): fanin conc 50 procs 1$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.Stdout) {
			t.Errorf("no match for %s in:\n%s", re, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "weir bench on") {
		t.Errorf("--against ran a benchmark:\n%s", r.Stdout)
	}

	// --json: the new report, with its comparison.
	r = weir(t, "", nil, "bench", "--compare", oldPath, "--against", newPath, "--json")
	r.WantCode(t, exitOK)
	var rep bench.Report
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("decode: %v\n%s", err, r.Stdout)
	}
	c := rep.Compare
	if rep.RedisVersion != "7.2.4" || c == nil || len(c.Scenarios) != 1 || len(c.OnlyOld) != 1 || len(c.OnlyNew) != 1 || len(c.Warnings) != 1 {
		t.Fatalf("report %s, compare %+v", rep.RedisVersion, c)
	}
	f := c.Scenarios[0].Figures[0]
	if f.Figure != "jobs_per_s" || f.Ratio == nil || *f.Ratio != 2.5 || f.Change != bench.Better || c.Old.Source != oldPath {
		t.Errorf("figure %+v, old %+v", f, c.Old)
	}
}

// TestBenchCompareRun runs a quick bench on the embedded server and
// compares it with a saved run of a Redis.
func TestBenchCompareRun(t *testing.T) {
	oldPath, _ := reportPair(t)
	r := weir(t, "", nil, "bench", "--quick", "--scenarios", "chain", "--compare", oldPath)
	r.WantCode(t, exitOK)
	for _, re := range []string{
		`(?m)^weir bench on embedded miniredis`, // the run's own table first
		`(?m)^new: this run: embedded miniredis, scripts; .*, \d+ cores, .*; load \S+ before, \S+ after$`,
		`(?m)^WARNING: the runs differ in server \(redis 7\.0\.15 → embedded miniredis\)`,
		`(?m)^WARNING: the runs differ in size .*chain conc 1 procs 1: 1,000 jobs → 30 jobs`,
		`(?m)^chain +1 +1 +jobs/s +higher +2,000 +\S+ +\d+\.\d{3}× +(better|worse|same)$`,
		`(?m)^chain +1 +1 +promotion p50 ms +lower +0\.500 `,
		`(?m)^only in the old run \(.*\): plain conc 10 procs 1$`,
	} {
		if !regexp.MustCompile(re).MatchString(r.Stdout) {
			t.Errorf("no match for %s in:\n%s", re, r.Stdout)
		}
	}
}

func TestBenchCompareBadInput(t *testing.T) {
	oldPath, newPath := reportPair(t)
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "table.txt")
	if err := os.WriteFile(notJSON, []byte("weir bench on redis 7.0.15\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "bullmq.json")
	if err := os.WriteFile(other, []byte(`{"lib":"bullmq","suite":"plain","jobs_per_s":9000}`), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--compare", missing}, "--compare: read saved report: open " + missing + ": no such file or directory"},
		{[]string{"--compare", notJSON}, "--compare: " + notJSON + ": not JSON"},
		{[]string{"--compare", other, "--against", newPath}, "--compare: " + other + `: not a weir bench report: no "server"`},
		{[]string{"--compare", oldPath, "--against", missing}, "--against: read saved report"},
		{[]string{"--compare", oldPath, "--against", notJSON}, "--against: " + notJSON + ": not JSON"},
		{[]string{"--against", newPath}, "--against NEW.json needs --compare OLD.json"},
		{[]string{"--compare", oldPath, "--against", newPath, "--quick"}, "--quick does not apply"},
		{[]string{"--compare", oldPath, "--against", newPath, "--redis", "redis://127.0.0.1:1/0"}, "--redis does not apply"},
	} {
		r := weir(t, "", nil, append([]string{"bench"}, c.args...)...)
		r.WantCode(t, exitUsage)
		if !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, r.Stderr, c.want)
		}
		if r.Stdout != "" {
			t.Errorf("%v: stdout %q", c.args, r.Stdout)
		}
	}
}

// TestBenchSpreadCluster runs `weir bench --quick --spread 1,3 --json` on
// the Redis Cluster of WEIR_REDIS_CLUSTER and checks its rows: one per
// shape and partition count, every unit ended, each master's partitions
// and CPU shares adding up, nothing left behind.
func TestBenchSpreadCluster(t *testing.T) {
	cl := os.Getenv("WEIR_REDIS_CLUSTER")
	if cl == "" {
		t.Skip("WEIR_REDIS_CLUSTER not set")
	}
	r := weir(t, "", []string{"WEIR_REDIS_CLUSTER=" + cl}, "bench", "--quick", "--json", "--spread", "1,3")
	r.WantCode(t, exitOK)
	rep, err := bench.DecodeReport([]byte(r.Stdout))
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, r.Stdout)
	}
	if rep.Masters < 1 || rep.KeysLeft != 0 || len(rep.Scenarios) != 0 || rep.CeilingPerS != 0 {
		t.Errorf("%d masters, %d keys left, %d scenarios, ceiling %v", rep.Masters, rep.KeysLeft, len(rep.Scenarios), rep.CeilingPerS)
	}
	q := bench.Quick()
	units := map[string]int{bench.ScenarioPlain: q.SpreadJobs, bench.ScenarioChain: q.SpreadChains, bench.ScenarioFanin: q.SpreadFanins}
	seen := map[string]bool{}
	namespaces := map[string]bool{}
	for _, row := range rep.Spread {
		key := fmt.Sprintf("%s P=%d", row.Shape, row.Partitions)
		if seen[key] {
			t.Errorf("%s twice", key)
		}
		seen[key] = true
		namespaces[row.Namespace] = true
		if row.Units != units[row.Shape] || row.Ended != row.Units || row.KeysLeft != 0 {
			t.Errorf("%s: %d units, %d ended, %d keys left", key, row.Units, row.Ended, row.KeysLeft)
		}
		if row.UnitsPerS <= 0 || row.CPUUsPerUnit <= 0 || row.ScriptCallsPerUnit <= 0 || row.RoundTripsPerUnit <= 0 || row.RateRatio == nil || row.CPURatio == nil {
			t.Errorf("%s: %+v", key, row)
		}
		if row.Partitions == 1 && (*row.RateRatio != 1 || *row.CPURatio != 1) {
			t.Errorf("%s: ratios %v %v to itself", key, *row.RateRatio, *row.CPURatio)
		}
		if len(row.Masters) != rep.Masters {
			t.Errorf("%s: %d masters, the report %d", key, len(row.Masters), rep.Masters)
		}
		share, cmds, parts := 0.0, 0.0, 0
		for i, m := range row.Masters {
			share += m.CPUShare
			cmds += m.CommandShare
			parts += m.Partitions
			if i > 0 && m.FirstSlot <= row.Masters[i-1].FirstSlot {
				t.Errorf("%s: masters not by first slot: %+v", key, row.Masters)
			}
		}
		if share < 0.99 || share > 1.01 || cmds < 0.99 || cmds > 1.01 || parts != row.Partitions {
			t.Errorf("%s: shares sum to %v (cpu), %v (commands), partitions to %d: %+v", key, share, cmds, parts, row.Masters)
		}
		if row.Partitions == 1 && row.Masters[slices.IndexFunc(row.Masters, func(m bench.SpreadMaster) bool { return m.Partitions == 1 })].CommandShare < 0.9 {
			t.Errorf("%s: the master of the one partition did less than 90%% of the commands: %+v", key, row.Masters)
		}
	}
	for _, p := range []int{1, 3} {
		for _, s := range bench.SpreadScenarios {
			if !seen[fmt.Sprintf("%s P=%d", s, p)] {
				t.Errorf("no %s row at P=%d", s, p)
			}
		}
	}
	if len(rep.Spread) != 6 || len(namespaces) != 6 {
		t.Errorf("%d rows in %d namespaces, want 6 in 6", len(rep.Spread), len(namespaces))
	}

	// The saved report compared with itself: every row matched by shape
	// and partition count, every figure the same.
	saved := filepath.Join(t.TempDir(), "spread.json")
	if err := os.WriteFile(saved, []byte(r.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	r = weir(t, "", nil, "bench", "--compare", saved, "--against", saved, "--json")
	r.WantCode(t, exitOK)
	cmp, err := bench.DecodeReport([]byte(r.Stdout))
	if err != nil || cmp.Compare == nil {
		t.Fatalf("decode the comparison: %v\n%s", err, r.Stdout)
	}
	if c := cmp.Compare; len(c.Scenarios) != 6 || len(c.OnlyOld)+len(c.OnlyNew) != 0 {
		t.Errorf("the spread compared with itself: %d rows matched, only old %v, only new %v", len(c.Scenarios), c.OnlyOld, c.OnlyNew)
	}
	for _, row := range cmp.Compare.Scenarios {
		if !seen[row.Name+" "+row.Variant] || len(row.Figures) == 0 {
			t.Errorf("compared row %s %s (%d figures) is not a row of the run", row.Name, row.Variant, len(row.Figures))
		}
		for _, f := range row.Figures {
			if f.Ratio == nil || *f.Ratio != 1 || f.Change != bench.Same {
				t.Errorf("%s %s %s compared with itself: %+v", row.Name, row.Variant, f.Figure, f)
			}
		}
	}
	r = weir(t, "", nil, "bench", "--compare", saved, "--against", saved)
	r.WantCode(t, exitOK)
	for _, want := range []string{"plain P=1", "fanin P=3", "cpu µs/unit", "largest master cpu share"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the comparison's table lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "ceiling") {
		t.Errorf("the comparison of two spreads shows a ceiling:\n%s", r.Stdout)
	}
}

// TestBenchSpreadUsage: a bad --spread is a usage error that says what is
// wrong, before anything connects (the cluster address is closed).
func TestBenchSpreadUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--spread", "1,x"}, `--spread: "x" is not a number`},
		{[]string{"--spread", ","}, "--spread: give at least one partition count"},
		{[]string{"--spread", "0,3"}, "partition count 0 outside [1, 1024]"},
		{[]string{"--spread", "1,1025"}, "partition count 1025 outside [1, 1024]"},
		{[]string{"--spread", "3,3"}, "partition count 3 given twice"},
		{[]string{"--spread", "1,3", "--scenarios", "plain,submit"}, `not "submit"`},
		{[]string{"--spread", "1,3", "--partitions", "4"}, "--partitions does not apply"},
		{[]string{"--spread", "1,3", "--concurrency", "10"}, "--concurrency does not apply"},
		{[]string{"--spread", "1,3", "--jobs", "-1"}, "spread jobs must be at least 1"},
		{[]string{"--spread", "1,3", "--workflows", "-2"}, "spread chains must be at least 1"},
		{[]string{"--workflows", "10"}, "--workflows sizes the runs of --spread"},
	} {
		r := weir(t, "", nil, append([]string{"bench", "--cluster", "127.0.0.1:1"}, c.args...)...)
		r.WantCode(t, exitUsage)
		if !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, r.Stderr, c.want)
		}
	}
	// Without a cluster: a single server or the embedded one is refused.
	for _, env := range [][]string{nil, {"WEIR_REDIS_URL=redis://127.0.0.1:1/0"}} {
		r := weir(t, "", env, "bench", "--spread", "1,3")
		r.WantCode(t, exitUsage)
		if !strings.Contains(r.Stderr, "give the cluster (--cluster)") {
			t.Errorf("%v: stderr %q", env, r.Stderr)
		}
	}
}
