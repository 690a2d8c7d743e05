package bench

import (
	"fmt"
	"math"
	"strings"
)

// Comparison is one run's figures next to another's (`weir bench
// --compare`): per scenario row and per figure, the old value, the new
// one and new/old.
type Comparison struct {
	Old Side `json:"old"`
	New Side `json:"new"`
	// Warnings say why the ratios may mean little: the runs differ in
	// server, path, machine or sizes, or one ran on a loaded machine.
	Warnings []string `json:"warnings"`
	// Ceiling compares the runs' ceilings (ceiling_per_s).
	Ceiling FigureComparison `json:"ceiling"`
	// Scenarios are the rows found in both runs (matched by name,
	// concurrency, processes and variant), in the order of the new run,
	// then the spread rows found in both (Report.Spread: matched by shape
	// and partition count, the count as the variant "P=<n>").
	Scenarios []ScenarioComparison `json:"scenarios"`
	// OnlyOld and OnlyNew are the rows found in one run only.
	OnlyOld []ScenarioKey `json:"only_old"`
	OnlyNew []ScenarioKey `json:"only_new"`
}

// Side is what a Comparison says of one of its two runs.
type Side struct {
	// Source is where the report came from: a file, or "this run".
	Source       string `json:"source"`
	Server       string `json:"server"`
	RedisVersion string `json:"redis_version,omitempty"`
	// CallPath is empty for a report saved before weir bench recorded it.
	CallPath string  `json:"call_path,omitempty"`
	Machine  Machine `json:"machine"`
}

// ScenarioKey names a row of a Report: rows of two runs match when their
// keys are equal.
type ScenarioKey struct {
	Name        string `json:"name"`
	Concurrency int    `json:"concurrency"`
	Processes   int    `json:"processes"`
	Variant     string `json:"variant,omitempty"`
}

func (k ScenarioKey) String() string {
	s := fmt.Sprintf("%s conc %d procs %d", k.Name, k.Concurrency, k.Processes)
	if k.Variant != "" {
		s += " " + k.Variant
	}
	return s
}

// ScenarioComparison is one row found in both runs.
type ScenarioComparison struct {
	ScenarioKey
	Figures []FigureComparison `json:"figures"`
}

// Directions of a figure: which way is better.
const (
	HigherIsBetter = "higher"
	LowerIsBetter  = "lower"
)

// Changes of a figure from the old run to the new one.
const (
	Better = "better"
	Worse  = "worse"
	// Same is a ratio within ±SameWithin of 1.
	Same = "same"
)

// SameWithin is the distance from 1 within which a ratio reads as Same. It
// is a reading aid, not a test of significance: figures of one run each
// move by more than that on a shared machine.
const SameWithin = 0.02

// FigureComparison is one figure of one row in both runs.
type FigureComparison struct {
	// Figure is the figure's JSON field in Result (ceiling_per_s for the
	// ceiling).
	Figure string `json:"figure"`
	// Better is HigherIsBetter or LowerIsBetter.
	Better string `json:"better"`
	// Old and New are null where a run has no such figure.
	Old *float64 `json:"old"`
	New *float64 `json:"new"`
	// Ratio is New/Old: null when either is missing or Old is not
	// positive (a memory growth can be 0 or negative).
	Ratio *float64 `json:"ratio"`
	// Change is Better, Worse or Same by Ratio; empty without a ratio.
	Change string `json:"change,omitempty"`
}

// figure is one figure of a Result that a comparison shows.
type figure struct {
	field, label, better string
	// get returns the figure and whether the row has it.
	get func(Result) (float64, bool)
}

// always is a figure every row has.
func always(f func(Result) float64) func(Result) (float64, bool) {
	return func(r Result) (float64, bool) { return f(r), true }
}

// nonZero is a figure of some rows only (an omitempty field).
func nonZero(f func(Result) float64) func(Result) (float64, bool) {
	return func(r Result) (float64, bool) { v := f(r); return v, v != 0 }
}

// present is a figure that a server may not give (a nullable field).
func present(f func(Result) *float64) func(Result) (float64, bool) {
	return func(r Result) (float64, bool) {
		if p := f(r); p != nil {
			return *p, true
		}
		return 0, false
	}
}

// figures are the compared figures of a row, in table order. steps_per_s
// (chain) and tasks_per_s (fanin) are left out: they equal jobs_per_s.
var figures = []figure{
	{"jobs_per_s", "jobs/s", HigherIsBetter, always(func(r Result) float64 { return r.JobsPerS })},
	{"ceiling_ratio", "×ceiling", HigherIsBetter, always(func(r Result) float64 { return r.CeilingRatio })},
	{"commands_per_job", "cmds/job", LowerIsBetter, always(func(r Result) float64 { return r.CommandsPerJob })},
	{"round_trips_per_job", "trips/job", LowerIsBetter, always(func(r Result) float64 { return r.RoundTripsPerJob })},
	{"server_us_per_job", "script µs/job", LowerIsBetter, present(func(r Result) *float64 { return r.ServerUsPerJob })},
	{"server_cpu_us_per_job", "server cpu µs/job", LowerIsBetter, present(func(r Result) *float64 { return r.ServerCPUUsPerJob })},
	{"worker_cpu_us_per_job", "worker cpu µs/job", LowerIsBetter, present(func(r Result) *float64 { return r.WorkerCPUUsPerJob })},
	{"enqueue_per_s", "enqueue/s", HigherIsBetter, nonZero(func(r Result) float64 { return r.EnqueuePerS })},
	{"enqueue_ceiling_ratio", "enq ×ceiling", HigherIsBetter, nonZero(func(r Result) float64 { return r.EnqueueCeilingRatio })},
	{"enqueue_commands_per_job", "enq cmds/job", LowerIsBetter, nonZero(func(r Result) float64 { return r.EnqueueCommandsPerJob })},
	{"enqueue_round_trips_per_job", "enq trips/job", LowerIsBetter, nonZero(func(r Result) float64 { return r.EnqueueRoundTripsPerJob })},
	{"producer_cpu_us_per_job", "enq cpu µs/job", LowerIsBetter, present(func(r Result) *float64 { return r.ProducerCPUUsPerJob })},
	{"promotion_p50_ms", "promotion p50 ms", LowerIsBetter, nonZero(func(r Result) float64 { return r.PromotionP50Ms })},
	{"promotion_p90_ms", "promotion p90 ms", LowerIsBetter, nonZero(func(r Result) float64 { return r.PromotionP90Ms })},
	{"promotion_p99_ms", "promotion p99 ms", LowerIsBetter, nonZero(func(r Result) float64 { return r.PromotionP99Ms })},
	{"promotion_max_ms", "promotion max ms", LowerIsBetter, nonZero(func(r Result) float64 { return r.PromotionMaxMs })},
	{"submit_workflows_per_s", "submit workflows/s", HigherIsBetter, nonZero(func(r Result) float64 { return r.SubmitWorkflowsPerS })},
	{"submit_ms", "submit ms", LowerIsBetter, nonZero(func(r Result) float64 { return r.SubmitMs })},
	{"script_ms", "script server ms", LowerIsBetter, present(func(r Result) *float64 { return r.ScriptMs })},
	{"script_calls", "script calls", LowerIsBetter, nonZero(func(r Result) float64 { return float64(r.ScriptCalls) })},
	{"memory_per_job_bytes", "memory B/job", LowerIsBetter, present(func(r Result) *float64 { return r.MemoryPerJobBytes })},
	{"memory_per_workflow_bytes", "memory B/workflow", LowerIsBetter, present(func(r Result) *float64 { return r.MemoryPerWorkflowBytes })},
}

// figureLabels are the table labels of the figures (a spread row's too),
// by JSON field.
var figureLabels = func() map[string]string {
	m := map[string]string{"ceiling_per_s": "ceiling calls/s"}
	for _, f := range figures {
		m[f.field] = f.label
	}
	for _, f := range spreadFigures {
		m[f.field] = f.label
	}
	return m
}()

// Compare compares the new run cur with the old one; oldSource and newSource
// say where each came from (a file, "this run").
func Compare(old, cur *Report, oldSource, newSource string) *Comparison {
	c := &Comparison{
		Old: side(old, oldSource), New: side(cur, newSource),
		Warnings:  []string{},
		Scenarios: []ScenarioComparison{},
		OnlyOld:   []ScenarioKey{},
		OnlyNew:   []ScenarioKey{},
		Ceiling:   compareFigure("ceiling_per_s", HigherIsBetter, old.CeilingPerS, old.CeilingPerS > 0, cur.CeilingPerS, cur.CeilingPerS > 0),
	}
	sizes := matchRows(c, old.Scenarios, cur.Scenarios, keyOf, func(k ScenarioKey, o, n Result) string {
		c.Scenarios = append(c.Scenarios, compareRow(k, o, n))
		if o.Jobs != n.Jobs || o.Workflows != n.Workflows {
			return fmt.Sprintf("%s: %s → %s", k, size(o), size(n))
		}
		return ""
	})
	sizes = append(sizes, matchRows(c, old.Spread, cur.Spread, spreadKey, func(k ScenarioKey, o, n SpreadRow) string {
		c.Scenarios = append(c.Scenarios, compareSpreadRow(k, o, n))
		if o.Units != n.Units || len(o.Masters) != len(n.Masters) {
			return fmt.Sprintf("%s: %s → %s", k, spreadSize(o), spreadSize(n))
		}
		return ""
	})...)
	c.Warnings = warnings(c.Old, c.New, sizes)
	return c
}

// matchRows matches the rows of the old and the new run by key (the i-th
// row of a key in cur matches the i-th in old), calls both for each match
// in cur's order, and adds the rest to c's OnlyOld and OnlyNew. It returns
// what both returned that is not empty: the matches whose sizes differ.
func matchRows[T any](c *Comparison, old, cur []T, key func(T) ScenarioKey, both func(k ScenarioKey, o, n T) string) []string {
	olds := map[ScenarioKey][]int{}
	for i, r := range old {
		k := key(r)
		olds[k] = append(olds[k], i)
	}
	matched := make([]bool, len(old))
	var sizes []string
	for _, n := range cur {
		k := key(n)
		if len(olds[k]) == 0 {
			c.OnlyNew = append(c.OnlyNew, k)
			continue
		}
		i := olds[k][0]
		olds[k] = olds[k][1:]
		matched[i] = true
		if s := both(k, old[i], n); s != "" {
			sizes = append(sizes, s)
		}
	}
	for i, r := range old {
		if !matched[i] {
			c.OnlyOld = append(c.OnlyOld, key(r))
		}
	}
	return sizes
}

func side(r *Report, source string) Side {
	return Side{Source: source, Server: r.Server, RedisVersion: r.RedisVersion, CallPath: r.CallPath, Machine: r.Machine}
}

func keyOf(r Result) ScenarioKey {
	return ScenarioKey{Name: r.Name, Concurrency: r.Concurrency, Processes: r.Processes, Variant: r.Variant}
}

// size is the size of a row, as the sizes warning gives it.
func size(r Result) string {
	if r.Workflows > 0 {
		return fmt.Sprintf("%s jobs in %s workflows", num(float64(r.Jobs)), num(float64(r.Workflows)))
	}
	return num(float64(r.Jobs)) + " jobs"
}

func compareRow(k ScenarioKey, o, n Result) ScenarioComparison {
	row := ScenarioComparison{ScenarioKey: k, Figures: []FigureComparison{}}
	for _, f := range figures {
		ov, ook := f.get(o)
		nv, nok := f.get(n)
		if !ook && !nok {
			continue
		}
		row.Figures = append(row.Figures, compareFigure(f.field, f.better, ov, ook, nv, nok))
	}
	return row
}

// compareFigure compares one figure; oldOK and newOK say whether each run
// has it.
func compareFigure(field, better string, o float64, oldOK bool, n float64, newOK bool) FigureComparison {
	fc := FigureComparison{Figure: field, Better: better}
	if oldOK {
		fc.Old = &o
	}
	if newOK {
		fc.New = &n
	}
	if !oldOK || !newOK || o <= 0 || math.IsInf(o, 0) || math.IsNaN(o) || math.IsNaN(n) {
		return fc
	}
	r := n / o
	fc.Ratio = &r
	fc.Change = change(r, better)
	return fc
}

// change reads a new/old ratio of a figure whose better direction is
// better.
func change(r float64, better string) string {
	switch {
	case math.Abs(r-1) <= SameWithin+1e-9: // 1.02 - 1 is a hair above 0.02
		return Same
	case (r > 1) == (better == HigherIsBetter):
		return Better
	}
	return Worse
}

// warnings says why the ratios of the old and the new (cur) run may mean little; sizes are
// the matched rows whose sizes differ.
func warnings(old, cur Side, sizes []string) []string {
	w := []string{}
	var differ []string
	diff := func(what, o, n string) {
		if o != n {
			differ = append(differ, fmt.Sprintf("%s (%s → %s)", what, orUnknown(o), orUnknown(n)))
		}
	}
	diff("server", serverName(old), serverName(cur))
	if old.CallPath != "" && cur.CallPath != "" {
		diff("path", old.CallPath, cur.CallPath)
	}
	if old.Machine.Cores > 0 && cur.Machine.Cores > 0 {
		diff("CPU model", old.Machine.CPUModel, cur.Machine.CPUModel)
		diff("cores", fmt.Sprint(old.Machine.Cores), fmt.Sprint(cur.Machine.Cores))
	}
	if len(differ) > 0 {
		w = append(w, "the runs differ in "+strings.Join(differ, ", ")+": ratios across servers and machines mean little")
	}
	for _, s := range []struct {
		which string
		side  Side
	}{{"old", old}, {"new", cur}} {
		m := s.side.Machine
		if s.side.CallPath == "" || m.Cores == 0 {
			w = append(w, fmt.Sprintf("the %s run (%s) was saved before weir bench recorded its path and machine: they cannot be checked", s.which, s.side.Source))
			continue
		}
		if m.LoadBefore != nil && m.LoadBefore.One > float64(m.Cores) {
			w = append(w, fmt.Sprintf("the %s run (%s) began on a loaded machine: load %.2f above its %d cores", s.which, s.side.Source, m.LoadBefore.One, m.Cores))
		}
	}
	if len(sizes) > 0 {
		w = append(w, "the runs differ in size (rates and per-job figures move with it): "+strings.Join(sizes, "; "))
	}
	return w
}

func serverName(s Side) string {
	if s.RedisVersion == "" {
		return s.Server
	}
	return s.Server + " " + s.RedisVersion
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
