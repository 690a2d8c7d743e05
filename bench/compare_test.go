package bench

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func fp(v float64) *float64 { return &v }

// pair returns an old and a new report of one machine and server, whose
// figures move in known ways.
func pair() (old, cur *Report) {
	machine := Machine{CPUModel: "AMD EPYC", Cores: 2, OS: "linux", Arch: "amd64", GoVersion: "go1.26.8",
		LoadBefore: &Load{0.5, 0.5, 0.5}, LoadAfter: &Load{1.5, 0.7, 0.5}}
	old = &Report{Server: RedisServer, RedisVersion: "7.0.15", CallPath: CallPathScripts, Machine: machine, CeilingPerS: 10_000,
		Scenarios: []Result{
			{Name: ScenarioPlain, Concurrency: 1, Processes: 1, Jobs: 200, JobsPerS: 100, CeilingRatio: 0.01, CommandsPerJob: 16, RoundTripsPerJob: 1,
				EnqueuePerS: 300, MemoryPerJobBytes: fp(500)},
			{Name: ScenarioPlain, Concurrency: 50, Processes: 1, Jobs: 200, JobsPerS: 1000, CommandsPerJob: 6, RoundTripsPerJob: 0.1},
			{Name: ScenarioPlain, Concurrency: 50, Processes: 2, Jobs: 200, JobsPerS: 1500, CommandsPerJob: 6, RoundTripsPerJob: 0.1},
			{Name: ScenarioChain, Concurrency: 1, Processes: 1, Jobs: 30, Workflows: 1, JobsPerS: 50, CommandsPerJob: 20, RoundTripsPerJob: 1,
				PromotionP50Ms: 0.5, PromotionP99Ms: 2, MemoryPerWorkflowBytes: fp(0)},
		}}
	cur = &Report{Server: RedisServer, RedisVersion: "7.0.15", CallPath: CallPathScripts, Machine: machine, CeilingPerS: 10_100,
		Scenarios: []Result{
			{Name: ScenarioChain, Concurrency: 1, Processes: 1, Jobs: 30, Workflows: 1, JobsPerS: 49.5, CommandsPerJob: 10, RoundTripsPerJob: 1,
				PromotionP50Ms: 1, PromotionP99Ms: 1, MemoryPerWorkflowBytes: fp(100)},
			{Name: ScenarioPlain, Concurrency: 1, Processes: 1, Jobs: 200, JobsPerS: 200, CeilingRatio: 0.02, CommandsPerJob: 8, RoundTripsPerJob: 1.01,
				MemoryPerJobBytes: fp(600)},
			{Name: ScenarioPlain, Concurrency: 50, Processes: 1, Jobs: 200, JobsPerS: 500, CommandsPerJob: 6.3, RoundTripsPerJob: 0.1},
			{Name: ScenarioFanin, Concurrency: 50, Processes: 1, Jobs: 220, Workflows: 20, JobsPerS: 800, CommandsPerJob: 12, RoundTripsPerJob: 0.2},
		}}
	return old, cur
}

// figureOf returns the comparison of one figure of one row.
func figureOf(t *testing.T, c *Comparison, k ScenarioKey, field string) FigureComparison {
	t.Helper()
	for _, s := range c.Scenarios {
		if s.ScenarioKey != k {
			continue
		}
		for _, f := range s.Figures {
			if f.Figure == field {
				return f
			}
		}
		t.Fatalf("%s has no %s: %+v", k, field, s.Figures)
	}
	t.Fatalf("no row %s", k)
	return FigureComparison{}
}

func TestCompareMatching(t *testing.T) {
	old, cur := pair()
	c := Compare(old, cur, "old.json", "this run")
	var got []ScenarioKey
	for _, s := range c.Scenarios {
		got = append(got, s.ScenarioKey)
	}
	want := []ScenarioKey{{ScenarioChain, 1, 1, ""}, {ScenarioPlain, 1, 1, ""}, {ScenarioPlain, 50, 1, ""}} // the new run's order
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d %v, want %v", i, got[i], want[i])
		}
	}
	if len(c.OnlyOld) != 1 || c.OnlyOld[0] != (ScenarioKey{ScenarioPlain, 50, 2, ""}) {
		t.Errorf("only old %v", c.OnlyOld)
	}
	if len(c.OnlyNew) != 1 || c.OnlyNew[0] != (ScenarioKey{ScenarioFanin, 50, 1, ""}) {
		t.Errorf("only new %v", c.OnlyNew)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings for one machine and server: %q", c.Warnings)
	}
	if c.Old.Source != "old.json" || c.New.Source != "this run" {
		t.Errorf("sources %q %q", c.Old.Source, c.New.Source)
	}
}

func TestCompareDuplicateRows(t *testing.T) {
	row := func(rate float64) Result {
		return Result{Name: ScenarioPlain, Concurrency: 10, Processes: 1, JobsPerS: rate}
	}
	old := &Report{Scenarios: []Result{row(100), row(200)}}
	cur := &Report{Scenarios: []Result{row(300), row(400), row(500)}}
	c := Compare(old, cur, "a", "b")
	if len(c.Scenarios) != 2 || len(c.OnlyNew) != 1 || len(c.OnlyOld) != 0 {
		t.Fatalf("%d rows, only new %v, only old %v", len(c.Scenarios), c.OnlyNew, c.OnlyOld)
	}
	for i, want := range []float64{3, 2} { // in order: 300/100, 400/200
		if r := c.Scenarios[i].Figures[0].Ratio; r == nil || *r != want {
			t.Errorf("row %d ratio %v, want %v", i, r, want)
		}
	}
}

func TestCompareFigures(t *testing.T) {
	old, cur := pair()
	c := Compare(old, cur, "old.json", "new.json")
	plain1, plain50, chain := ScenarioKey{ScenarioPlain, 1, 1, ""}, ScenarioKey{ScenarioPlain, 50, 1, ""}, ScenarioKey{ScenarioChain, 1, 1, ""}
	for _, w := range []struct {
		key            ScenarioKey
		field          string
		better         string
		old, new, want float64
		change         string
	}{
		{plain1, "jobs_per_s", HigherIsBetter, 100, 200, 2, Better},
		{plain1, "ceiling_ratio", HigherIsBetter, 0.01, 0.02, 2, Better},
		{plain1, "commands_per_job", LowerIsBetter, 16, 8, 0.5, Better},
		{plain1, "round_trips_per_job", LowerIsBetter, 1, 1.01, 1.01, Same},
		{plain1, "memory_per_job_bytes", LowerIsBetter, 500, 600, 1.2, Worse},
		{plain50, "jobs_per_s", HigherIsBetter, 1000, 500, 0.5, Worse},
		{plain50, "commands_per_job", LowerIsBetter, 6, 6.3, 1.05, Worse},
		{chain, "jobs_per_s", HigherIsBetter, 50, 49.5, 0.99, Same},
		{chain, "promotion_p50_ms", LowerIsBetter, 0.5, 1, 2, Worse},
		{chain, "promotion_p99_ms", LowerIsBetter, 2, 1, 0.5, Better},
	} {
		f := figureOf(t, c, w.key, w.field)
		if f.Better != w.better || f.Old == nil || *f.Old != w.old || f.New == nil || *f.New != w.new ||
			f.Ratio == nil || !approx(*f.Ratio, w.want) || f.Change != w.change {
			t.Errorf("%s %s: %s %v → %v ratio %v %q, want %s %v → %v ratio %v %q", w.key, w.field,
				f.Better, deref(f.Old), deref(f.New), deref(f.Ratio), f.Change, w.better, w.old, w.new, w.want, w.change)
		}
	}
	// In the old run only: no ratio, no change.
	if f := figureOf(t, c, plain1, "enqueue_per_s"); f.Old == nil || *f.Old != 300 || f.New != nil || f.Ratio != nil || f.Change != "" {
		t.Errorf("enqueue_per_s: %+v", f)
	}
	// An old growth of 0 bytes: both values, no ratio.
	if f := figureOf(t, c, chain, "memory_per_workflow_bytes"); f.Old == nil || f.New == nil || f.Ratio != nil || f.Change != "" {
		t.Errorf("memory_per_workflow_bytes from 0: %+v", f)
	}
	// Figures neither run has are left out.
	for _, s := range c.Scenarios {
		for _, f := range s.Figures {
			if f.Figure == "script_ms" || f.Figure == "submit_ms" || (s.Name == ScenarioPlain && f.Figure == "promotion_p50_ms") {
				t.Errorf("%s: %s in neither run, compared: %+v", s.ScenarioKey, f.Figure, f)
			}
		}
	}
	if c.Ceiling.Figure != "ceiling_per_s" || c.Ceiling.Ratio == nil || !approx(*c.Ceiling.Ratio, 1.01) || c.Ceiling.Change != Same {
		t.Errorf("ceiling %+v", c.Ceiling)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestChange(t *testing.T) {
	for _, c := range []struct {
		ratio  float64
		better string
		want   string
	}{
		{1, HigherIsBetter, Same},
		{1.02, HigherIsBetter, Same},
		{0.98, LowerIsBetter, Same},
		{1.03, HigherIsBetter, Better},
		{1.03, LowerIsBetter, Worse},
		{0.97, HigherIsBetter, Worse},
		{0.97, LowerIsBetter, Better},
		{0, HigherIsBetter, Worse},
	} {
		if got := change(c.ratio, c.better); got != c.want {
			t.Errorf("change(%v, %s) = %s, want %s", c.ratio, c.better, got, c.want)
		}
	}
}

func TestCompareWarnings(t *testing.T) {
	has := func(t *testing.T, c *Comparison, parts ...string) {
		t.Helper()
		all := strings.Join(c.Warnings, "\n")
		for _, p := range parts {
			if !strings.Contains(all, p) {
				t.Errorf("no %q in the warnings:\n%s", p, all)
			}
		}
	}
	t.Run("server, path and machine", func(t *testing.T) {
		old, cur := pair()
		cur.RedisVersion, cur.CallPath = "7.2.4", CallPathFunctions
		cur.Machine.CPUModel, cur.Machine.Cores = "Intel Xeon", 8
		c := Compare(old, cur, "a", "b")
		if len(c.Warnings) != 1 {
			t.Errorf("%d warnings, want one: %q", len(c.Warnings), c.Warnings)
		}
		has(t, c, "server (redis 7.0.15 → redis 7.2.4)", "path (scripts → functions)", "CPU model (AMD EPYC → Intel Xeon)", "cores (2 → 8)", "mean little")
	})
	t.Run("embedded against redis", func(t *testing.T) {
		old, cur := pair()
		cur.Server, cur.RedisVersion = EmbeddedServer, ""
		has(t, Compare(old, cur, "a", "b"), "server (redis 7.0.15 → embedded miniredis)")
	})
	t.Run("loaded", func(t *testing.T) {
		old, cur := pair()
		old.Machine.LoadBefore = &Load{2.5, 1, 1} // above 2 cores
		cur.Machine.LoadAfter = &Load{9, 9, 9}    // after the run: the run's own load
		c := Compare(old, cur, "a.json", "b.json")
		if len(c.Warnings) != 1 {
			t.Errorf("warnings %q, want one", c.Warnings)
		}
		has(t, c, "old run (a.json) began on a loaded machine: load 2.50 above its 2 cores")
	})
	t.Run("saved before the machine was recorded", func(t *testing.T) {
		old, cur := pair()
		old.CallPath, old.Machine = "", Machine{}
		c := Compare(old, cur, "a.json", "b.json")
		if len(c.Warnings) != 1 {
			t.Errorf("warnings %q, want one", c.Warnings)
		}
		has(t, c, "old run (a.json) was saved before weir bench recorded its path and machine")
	})
	t.Run("sizes", func(t *testing.T) {
		old, cur := pair()
		cur.Scenarios[1].Jobs = 20_000
		has(t, Compare(old, cur, "a", "b"), "differ in size", "plain conc 1 procs 1: 200 jobs → 20,000 jobs")
	})
}

func TestComparisonTable(t *testing.T) {
	old, cur := pair()
	cur.CallPath = CallPathFunctions
	var b strings.Builder
	if err := Compare(old, cur, "old.json", "this run").WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, re := range []string{
		`(?m)^old: old\.json: redis 7\.0\.15, scripts; AMD EPYC, 2 cores, linux/amd64, go1\.26\.8; load 0\.50 before, 1\.50 after$`,
		`(?m)^new: this run: redis 7\.0\.15, functions;`,
		`(?m)^WARNING: the runs differ in path \(scripts → functions\)`,
		`(?m)^ceiling +- +- +ceiling calls/s +higher +10,000 +10,100 +1\.010× +same$`,
		`(?m)^plain +1 +1 +jobs/s +higher +100 +200 +2\.000× +better$`,
		`(?m)^plain +1 +1 +cmds/job +lower +16\.00 +8\.00 +0\.500× +better$`,
		`(?m)^plain +50 +1 +jobs/s +higher +1,000 +500 +0\.500× +worse$`,
		`(?m)^plain +1 +1 +enqueue/s +higher +300 +n/a +n/a +-$`,
		`(?m)^chain +1 +1 +promotion p50 ms +lower +0\.500 +1\.00 +2\.000× +worse$`,
		`(?m)^only in the old run \(old\.json\): plain conc 50 procs 2$`,
		`(?m)^only in the new run \(this run\): fanin conc 50 procs 1$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no match for %s in:\n%s", re, out)
		}
	}
}

func TestComparisonJSON(t *testing.T) {
	old, cur := pair()
	cur.Compare = Compare(old, cur, "old.json", "this run")
	b, err := json.Marshal(cur)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	c, ok := m["compare"].(map[string]any)
	if !ok {
		t.Fatalf("no compare object: %s", b)
	}
	for _, k := range []string{"old", "new", "warnings", "ceiling", "scenarios", "only_old", "only_new"} {
		if _, ok := c[k]; !ok {
			t.Errorf("compare has no %q", k)
		}
	}
	rows := c["scenarios"].([]any)
	row := rows[1].(map[string]any) // plain 1 1, its name flattened in
	if row["name"] != ScenarioPlain || row["concurrency"] != 1.0 || row["processes"] != 1.0 {
		t.Errorf("row %v", row)
	}
	f := row["figures"].([]any)[0].(map[string]any)
	if f["figure"] != "jobs_per_s" || f["old"] != 100.0 || f["new"] != 200.0 || f["ratio"] != 2.0 || f["better"] != HigherIsBetter || f["change"] != Better {
		t.Errorf("figure %v", f)
	}
	// A figure of one run: null new and ratio, there to be read.
	for _, v := range row["figures"].([]any) {
		f := v.(map[string]any)
		if f["figure"] != "enqueue_per_s" {
			continue
		}
		if nv, ok := f["new"]; !ok || nv != nil {
			t.Errorf("enqueue_per_s new %v (present %v), want null", nv, ok)
		}
		if r, ok := f["ratio"]; !ok || r != nil {
			t.Errorf("enqueue_per_s ratio %v, want null", r)
		}
	}
	// The harness's fields are where they were.
	s0 := m["scenarios"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "concurrency", "processes", "jobs_per_s", "commands_per_job", "round_trips_per_job", "ceiling_ratio"} {
		if _, ok := s0[k]; !ok {
			t.Errorf("scenario row lost %q", k)
		}
	}
	// A report with its comparison reads back.
	back, err := DecodeReport(b)
	if err != nil || back.Compare == nil || len(back.Compare.Scenarios) != 3 {
		t.Errorf("decode: %v, %+v", err, back)
	}
}

// spreadRow is a spread row of three masters with the given shares (the
// commands' shares the same).
func spreadRow(shape string, p, units int, perS, cpu float64, shares ...float64) SpreadRow {
	r := SpreadRow{Shape: shape, Partitions: p, Unit: "job", Units: units, UnitsPerS: perS, CPUUsPerUnit: cpu,
		ScriptUsPerUnit: cpu / 2, ScriptCallsPerUnit: 0.1, RoundTripsPerUnit: 0.2}
	for i, s := range shares {
		r.Masters = append(r.Masters, SpreadMaster{FirstSlot: i * 5461, CPUShare: s, CommandShare: s})
	}
	return r
}

// TestCompareSpread: spread rows match by shape and partition count, each
// figure reads in its direction, the largest share shows how even the
// spread was, and rows of one run only or of other sizes are said.
func TestCompareSpread(t *testing.T) {
	old, cur := pair()
	old.Spread = []SpreadRow{
		spreadRow(ScenarioPlain, 1, 100, 1000, 30, 0, 1, 0),
		spreadRow(ScenarioPlain, 12, 100, 1000, 30, 0.5, 0.25, 0.25),
		spreadRow(ScenarioChain, 3, 20, 50, 400, 0.34, 0.33, 0.33),
	}
	cur.Spread = []SpreadRow{
		spreadRow(ScenarioPlain, 12, 100, 1200, 36, 0.34, 0.33, 0.33),
		spreadRow(ScenarioPlain, 1, 200, 1000, 30, 0, 1, 0),
		spreadRow(ScenarioFanin, 3, 20, 40, 500, 0.34, 0.33, 0.33),
	}
	c := Compare(old, cur, "old.json", "this run")
	p12 := ScenarioKey{Name: ScenarioPlain, Concurrency: SpreadConcurrency, Variant: "P=12"}
	for _, w := range []struct {
		field  string
		ratio  float64
		change string
	}{
		{"units_per_s", 1.2, Better},
		{"cpu_us_per_unit", 1.2, Worse},
		{"script_us_per_unit", 1.2, Worse},
		{"script_calls_per_unit", 1, Same},
		{"largest_cpu_share", 0.68, Better},
		{"largest_command_share", 0.68, Better},
	} {
		f := figureOf(t, c, p12, w.field)
		if f.Ratio == nil || math.Abs(*f.Ratio-w.ratio) > 1e-9 || f.Change != w.change {
			t.Errorf("%s: %+v, want ratio %v %s", w.field, f, w.ratio, w.change)
		}
	}
	var spread []string
	for _, s := range c.Scenarios {
		if s.Variant != "" {
			spread = append(spread, s.ScenarioKey.String())
		}
	}
	if want := []string{"plain conc 50 procs 0 P=12", "plain conc 50 procs 0 P=1"}; !slices.Equal(spread, want) {
		t.Errorf("matched spread rows %q, want %q (in the new run's order)", spread, want)
	}
	chain := ScenarioKey{Name: ScenarioChain, Concurrency: SpreadConcurrency, Variant: "P=3"}
	fanin := ScenarioKey{Name: ScenarioFanin, Concurrency: SpreadConcurrency, Variant: "P=3"}
	if !slices.Contains(c.OnlyOld, chain) || !slices.Contains(c.OnlyNew, fanin) {
		t.Errorf("only old %v, only new %v: want %s and %s", c.OnlyOld, c.OnlyNew, chain, fanin)
	}
	if !slices.ContainsFunc(c.Warnings, func(w string) bool {
		return strings.Contains(w, "plain conc 50 procs 0 P=1: 100 jobs on 3 masters → 200 jobs on 3 masters")
	}) {
		t.Errorf("no sizes warning for plain P=1: %q", c.Warnings)
	}
	var b strings.Builder
	if err := c.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^plain P=12 +50 +0 +largest master cpu share +lower +0\.500 +0\.340 +0\.680× +better$`).MatchString(b.String()) {
		t.Errorf("the table lacks plain P=12's largest share line:\n%s", b.String())
	}
}

// TestCompareCPU: the CPU figures (the worker's, the producers', the
// server's and its script time) compare lower-is-better, and a report
// saved before weir bench measured them still loads and compares: its
// figures are n/a, with no ratio.
func TestCompareCPU(t *testing.T) {
	row := func(worker, producer, server, script *float64) Result {
		return Result{Name: ScenarioPlain, Concurrency: 50, Processes: 1, Jobs: 200, JobsPerS: 1000,
			WorkerCPUUsPerJob: worker, ProducerCPUUsPerJob: producer, ServerCPUUsPerJob: server, ServerUsPerJob: script}
	}
	old := &Report{Server: RedisServer, Scenarios: []Result{row(fp(30), fp(40), fp(50), fp(20))}}
	cur := &Report{Server: RedisServer, Scenarios: []Result{row(fp(15), fp(41), fp(60), fp(20))}}
	c := Compare(old, cur, "a", "b")
	k := ScenarioKey{ScenarioPlain, 50, 1, ""}
	for _, w := range []struct {
		field          string
		old, new, want float64
		change         string
	}{
		{"worker_cpu_us_per_job", 30, 15, 0.5, Better},
		{"producer_cpu_us_per_job", 40, 41, 1.025, Worse},
		{"server_cpu_us_per_job", 50, 60, 1.2, Worse},
		{"server_us_per_job", 20, 20, 1, Same},
	} {
		f := figureOf(t, c, k, w.field)
		if f.Better != LowerIsBetter || deref(f.Old) != w.old || deref(f.New) != w.new || f.Ratio == nil || !approx(*f.Ratio, w.want) || f.Change != w.change {
			t.Errorf("%s: %s %v → %v ratio %v %q, want lower %v → %v ratio %v %q", w.field, f.Better, deref(f.Old), deref(f.New), deref(f.Ratio), f.Change, w.old, w.new, w.want, w.change)
		}
	}

	// A report saved before the CPU figures: they are absent from its JSON.
	saved, err := DecodeReport([]byte(`{"server":"redis","redis_version":"7.0.15","ceiling_per_s":5,"scenarios":[` +
		`{"name":"plain","concurrency":50,"processes":1,"jobs":200,"jobs_per_s":900,"server_us_per_job":21}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := saved.Scenarios[0]; s.WorkerCPUUsPerJob != nil || s.ProducerCPUUsPerJob != nil || s.ServerCPUUsPerJob != nil {
		t.Fatalf("old report read with CPU figures: %+v", s)
	}
	c = Compare(saved, cur, "old.json", "this run")
	f := figureOf(t, c, k, "worker_cpu_us_per_job")
	if f.Old != nil || deref(f.New) != 15.0 || f.Ratio != nil || f.Change != "" {
		t.Errorf("worker cpu against an old report: %+v", f)
	}
	var b strings.Builder
	if err := c.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`(?m)^plain +50 +1 +worker cpu µs/job +lower +n/a +15\.00 +n/a +-$`,
		`(?m)^plain +50 +1 +script µs/job +lower +21\.00 +20\.00 +0\.952× +better$`,
	} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("no match for %s in:\n%s", re, b.String())
		}
	}
}
