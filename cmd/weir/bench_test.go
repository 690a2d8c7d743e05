package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/weirflow/weir/bench"
)

// TestBenchQuickJSON runs `weir bench --quick --json` as a user would: on
// the embedded server, and on WEIR_REDIS_URL's server when set. The
// multi-process run starts `weir bench worker` children of the binary.
func TestBenchQuickJSON(t *testing.T) {
	envs := map[string][]string{"embedded": nil}
	if u := os.Getenv("WEIR_REDIS_URL"); u != "" {
		envs["redis"] = []string{"WEIR_REDIS_URL=" + u}
	}
	for name, env := range envs {
		t.Run(name, func(t *testing.T) {
			r := weir(t, "", env, "bench", "--quick", "--json", "--jobs", "40")
			r.wantCode(t, exitOK)
			var rep bench.Report
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&rep); err != nil {
				t.Fatalf("decode: %v\n%s", err, r.stdout)
			}
			var raw map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"server", "ceiling_per_s", "scenarios", "namespace", "keys_left"} {
				if _, ok := raw[f]; !ok {
					t.Errorf("no %q in the report", f)
				}
			}
			want := map[string]string{"embedded": bench.EmbeddedServer, "redis": bench.RedisServer}[name]
			if rep.Server != want || (name == "redis") != (rep.RedisVersion != "") {
				t.Errorf("server %q version %q, want %q", rep.Server, rep.RedisVersion, want)
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
	r.wantCode(t, exitOK)
	for _, want := range []string{"embedded miniredis", "ceiling:", "promotion", "0 keys left"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in the table:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "plain") {
		t.Errorf("plain ran with --scenarios chain:\n%s", r.stdout)
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
		r.wantCode(t, exitUsage)
	}
}
