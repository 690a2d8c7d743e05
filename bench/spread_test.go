package bench

import (
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// threeMasters is a cluster as `redis-cli --cluster create` makes it, but
// for b, which also took slots 0-99 from a.
var threeMasters = []redis.ClusterSlot{
	{Start: 10923, End: 16383, Nodes: []redis.ClusterNode{{ID: "idc", Addr: "10.0.0.3:6379"}}},
	{Start: 100, End: 5460, Nodes: []redis.ClusterNode{{ID: "ida", Addr: "10.0.0.1:6379"}, {ID: "replica", Addr: "10.0.0.9:6379"}}},
	{Start: 0, End: 99, Nodes: []redis.ClusterNode{{ID: "idb", Addr: "10.0.0.2:6379"}}},
	{Start: 5461, End: 10922, Nodes: []redis.ClusterNode{{ID: "idb", Addr: "10.0.0.2:6379"}}},
}

var threeAddrs = map[string]string{"ida": "a:1", "idb": "b:2", "idc": "c:3"}

func TestMastersOf(t *testing.T) {
	ms, err := mastersOf(threeMasters, threeAddrs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.addr)
	}
	// b's first slot is 0, then a's 100, then c's.
	if !slices.Equal(got, []string{"b:2", "a:1", "c:3"}) || ms[0].firstSlot != 0 || ms[1].firstSlot != 100 || len(ms[0].ranges) != 2 {
		t.Fatalf("masters %+v", ms)
	}
	if !ms[0].serves(7000) || ms[0].serves(100) || !ms[1].serves(100) || !ms[2].serves(16383) {
		t.Errorf("serves wrong: %+v", ms)
	}
	if _, err := mastersOf(threeMasters, map[string]string{"ida": "a:1", "idb": "b:2"}); err == nil || !strings.Contains(err.Error(), "idc") {
		t.Errorf("unknown master: %v", err)
	}
}

func TestPartitionsPerMaster(t *testing.T) {
	ms, err := mastersOf(threeMasters, threeAddrs)
	if err != nil {
		t.Fatal(err)
	}
	// b: 0-99 and 5461-10922; a: 100-5460; c: 10923-16383.
	got, err := partitionsPerMaster([]int{0, 50, 99, 100, 5460, 5461, 16383}, ms)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int{4, 2, 1}) {
		t.Errorf("per master %v, want [4 2 1]", got)
	}
	if _, err := partitionsPerMaster([]int{5, 16384}, ms); err == nil || !strings.Contains(err.Error(), "slot 16384 of partition 1") {
		t.Errorf("unserved slot: %v", err)
	}
}

func TestCPUMicros(t *testing.T) {
	us, err := cpuMicros(map[string]string{"used_cpu_user": "1.234567", "used_cpu_sys": "0.500001", "used_cpu_sys_children": "9.0"})
	if err != nil || us != 1_734_568 {
		t.Errorf("cpu %d, %v; want 1734568", us, err)
	}
	if _, err := cpuMicros(map[string]string{"used_cpu_user": "1.0"}); err == nil || !strings.Contains(err.Error(), "used_cpu_sys") {
		t.Errorf("missing used_cpu_sys: %v", err)
	}
}

func TestSpreadMasters(t *testing.T) {
	ms := []master{{addr: "a:1", firstSlot: 0}, {addr: "b:2", firstSlot: 5461}, {addr: "c:3", firstSlot: 10923}}
	before := map[string]masterCounters{
		"a:1": {cpuUs: 1000, scripts: cmdStats{calls: 100, scriptCall: 10, scriptUsec: 100}},
		"b:2": {cpuUs: 5000, scripts: cmdStats{calls: 200, scriptCall: 20, scriptUsec: 200}},
		"c:3": {cpuUs: 0, scripts: cmdStats{calls: 7}},
	}
	after := map[string]masterCounters{
		"a:1": {cpuUs: 1500, scripts: cmdStats{calls: 130, scriptCall: 15, scriptUsec: 150}},
		"b:2": {cpuUs: 6500, scripts: cmdStats{calls: 290, scriptCall: 40, scriptUsec: 600}},
		"c:3": {cpuUs: 0, scripts: cmdStats{calls: 7}},
	}
	got, err := spreadMasters(ms, []int{4, 4, 4}, before, after)
	if err != nil {
		t.Fatal(err)
	}
	want := []SpreadMaster{
		{Addr: "a:1", FirstSlot: 0, Partitions: 4, CPUUs: 500, CPUShare: 0.25, Commands: 30, CommandShare: 0.25},
		{Addr: "b:2", FirstSlot: 5461, Partitions: 4, CPUUs: 1500, CPUShare: 0.75, Commands: 90, CommandShare: 0.75},
		{Addr: "c:3", FirstSlot: 10923, Partitions: 4, CPUUs: 0, CPUShare: 0},
	}
	if !slices.Equal(got, want) {
		t.Errorf("masters\n%+v, want\n%+v", got, want)
	}
	if d := scriptDelta(before, after); d.scriptCall != 25 || d.scriptUsec != 450 {
		t.Errorf("script delta %+v, want 25 calls, 450 µs", d)
	}
	delete(after, "c:3")
	if _, err := spreadMasters(ms, []int{4, 4, 4}, before, after); err == nil || !strings.Contains(err.Error(), "c:3") {
		t.Errorf("master missing after: %v", err)
	}
	// No CPU at all: shares 0, not NaN.
	idle := map[string]masterCounters{"a:1": {}, "b:2": {}, "c:3": {}}
	got, err = spreadMasters(ms, []int{1, 0, 0}, idle, idle)
	if err != nil || got[0].CPUShare != 0 || math.IsNaN(got[1].CPUShare) || got[0].CommandShare != 0 || math.IsNaN(got[1].CommandShare) {
		t.Errorf("idle: %+v, %v", got, err)
	}
}

func TestFillSpreadRatios(t *testing.T) {
	rows := []SpreadRow{
		{Shape: ScenarioPlain, Partitions: 3, UnitsPerS: 3000, CPUUsPerUnit: 60},
		{Shape: ScenarioPlain, Partitions: 1, UnitsPerS: 2000, CPUUsPerUnit: 40},
		{Shape: ScenarioChain, Partitions: 1, UnitsPerS: 500, CPUUsPerUnit: 0},
		{Shape: ScenarioChain, Partitions: 12, UnitsPerS: 250, CPUUsPerUnit: 90},
		{Shape: ScenarioFanin, Partitions: 3, UnitsPerS: 100, CPUUsPerUnit: 10},
	}
	fillSpreadRatios(rows)
	check := func(i int, rate, cpu *float64) {
		t.Helper()
		eq := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || math.Abs(*a-*b) < 1e-9) }
		if !eq(rows[i].RateRatio, rate) || !eq(rows[i].CPURatio, cpu) {
			t.Errorf("row %d: rate %v cpu %v, want %v %v", i, optRatio(rows[i].RateRatio), optRatio(rows[i].CPURatio), optRatio(rate), optRatio(cpu))
		}
	}
	f := func(v float64) *float64 { return &v }
	check(0, f(1.5), f(1.5))
	check(1, f(1), f(1))
	check(2, f(1), nil) // no CPU at P=1: no CPU ratio
	check(3, f(0.5), nil)
	check(4, nil, nil) // no fanin row at P=1
}

// spreadReport is a report of a spread of two rows on three masters.
func spreadReport() *Report {
	ms := func(parts [3]int, shares [3]float64) []SpreadMaster {
		return []SpreadMaster{
			{Addr: "127.0.0.1:7101", FirstSlot: 0, Partitions: parts[0], CPUUs: 100, CPUShare: shares[0], CommandShare: 1 - shares[0]},
			{Addr: "127.0.0.1:7102", FirstSlot: 5461, Partitions: parts[1], CPUUs: 100, CPUShare: shares[1], CommandShare: 0},
			{Addr: "127.0.0.1:7103", FirstSlot: 10923, Partitions: parts[2], CPUUs: 100, CPUShare: shares[2], CommandShare: shares[0]},
		}
	}
	rows := []SpreadRow{
		{Shape: ScenarioPlain, Partitions: 1, Unit: "job", Units: 3000, Ended: 3000, Seconds: 1.5, UnitsPerS: 2000, CPUUsPerUnit: 40,
			ScriptUsPerUnit: 30, ScriptCallsPerUnit: 0.1, RoundTripsPerUnit: 0.12, Masters: ms([3]int{1, 0, 0}, [3]float64{0.9, 0.04, 0.06})},
		{Shape: ScenarioPlain, Partitions: 12, Unit: "job", Units: 3000, Ended: 3000, Seconds: 1, UnitsPerS: 3000, CPUUsPerUnit: 50,
			ScriptUsPerUnit: 35, ScriptCallsPerUnit: 0.3, RoundTripsPerUnit: 0.4, Masters: ms([3]int{4, 4, 4}, [3]float64{0.333, 0.334, 0.333})},
	}
	fillSpreadRatios(rows)
	return &Report{Server: RedisServer, RedisVersion: "7.0.15", Masters: 3, Spread: rows, GoVersion: "go1.26.8", CPUs: 2}
}

func TestSpreadTable(t *testing.T) {
	var b strings.Builder
	if err := spreadReport().WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, re := range []string{
		`(?m)^weir bench --spread on redis 7\.0\.15 .*a Redis Cluster of 3 masters$`,
		`(?m)^masters, by first slot .*: 127\.0\.0\.1:7101 \(slot 0\), 127\.0\.0\.1:7102 \(slot 5461\), 127\.0\.0\.1:7103 \(slot 10923\)$`,
		`(?m)^ +plain +1 +job +3000 +3000 +1\.50 +2,000 +1\.00 +40\.0 +1\.00 +30\.0 +0\.10 +0\.12 +1/0/0 +90/4/6 +10/0/90$`,
		`(?m)^ +plain +12 +job +3000 +3000 +1\.00 +3,000 +1\.50 +50\.0 +1\.25 +35\.0 +0\.30 +0\.40 +4/4/4 +33/33/33 +67/0/33$`,
		`(?m)^wall time .*\(0 keys left\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no match for %s in:\n%s", re, out)
		}
	}
	if strings.Contains(out, "ceiling:") {
		t.Errorf("a spread's table has a ceiling line:\n%s", out)
	}
}

func TestSpreadJSON(t *testing.T) {
	b, err := json.Marshal(spreadReport())
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Spread []map[string]any `json:"spread"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"shape", "partitions", "unit", "units", "ended", "units_per_s", "rate_ratio", "cpu_us_per_unit", "cpu_ratio",
		"script_us_per_unit", "script_calls_per_unit", "round_trips_per_unit", "masters", "keys_left"} {
		if _, ok := raw.Spread[1][f]; !ok {
			t.Errorf("no %q in a spread row: %v", f, raw.Spread[1])
		}
	}
	rep, err := DecodeReport(b)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Spread[1]
	if len(rep.Spread) != 2 || r.RateRatio == nil || *r.RateRatio != 1.5 || r.Masters[2].Partitions != 4 || r.Masters[1].CPUShare != 0.334 {
		t.Errorf("decoded %+v", rep.Spread)
	}
	// A report without a spread has no "spread" field.
	b, _ = json.Marshal(&Report{Server: RedisServer})
	if strings.Contains(string(b), `"spread"`) {
		t.Errorf("spread in %s", b)
	}
}

func TestSpreadOptions(t *testing.T) {
	ok := Options{Cluster: "127.0.0.1:7101", Spread: []int{1, 3, 12}}
	o, err := ok.withDefaults(Quick())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Scenarios, SpreadScenarios) || o.SpreadJobs != Quick().SpreadJobs || o.SpreadChains < 1 || o.SpreadFanins < 1 {
		t.Errorf("defaults: %+v", o)
	}
	for _, c := range []struct {
		mod  func(*Options)
		want string
	}{
		{func(o *Options) { o.Cluster = ""; o.RedisURL = "redis://127.0.0.1:6392/0" }, "give the cluster"},
		{func(o *Options) { o.Spread = []int{0} }, "partition count 0 outside [1, 1024]"},
		{func(o *Options) { o.Spread = []int{1, 1025} }, "partition count 1025 outside"},
		{func(o *Options) { o.Spread = []int{3, 1, 3} }, "partition count 3 given twice"},
		{func(o *Options) { o.Partitions = 4 }, "partitions 4 does not apply"},
		{func(o *Options) { o.Scenarios = []string{ScenarioChain, ScenarioSubmit} }, `not "submit"`},
		{func(o *Options) { o.SpreadJobs = -2 }, "spread jobs must be at least 1"},
	} {
		o := ok
		c.mod(&o)
		_, err := o.withDefaults(Quick())
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v", c.want, err)
		}
	}
}
