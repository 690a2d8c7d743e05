package bench

import "fmt"

// spreadFigure is one figure of a spread row that a comparison shows.
type spreadFigure struct {
	field, label, better string
	get                  func(SpreadRow) float64
}

// spreadFigures are the compared figures of a spread row (Report.Spread),
// in table order. The two largest shares say how even the spread was:
// a third each is the best three masters can do.
var spreadFigures = []spreadFigure{
	{"units_per_s", "units/s", HigherIsBetter, func(r SpreadRow) float64 { return r.UnitsPerS }},
	{"cpu_us_per_unit", "cpu µs/unit", LowerIsBetter, func(r SpreadRow) float64 { return r.CPUUsPerUnit }},
	{"script_us_per_unit", "script µs/unit", LowerIsBetter, func(r SpreadRow) float64 { return r.ScriptUsPerUnit }},
	{"script_calls_per_unit", "script calls/unit", LowerIsBetter, func(r SpreadRow) float64 { return r.ScriptCallsPerUnit }},
	{"round_trips_per_unit", "trips/unit", LowerIsBetter, func(r SpreadRow) float64 { return r.RoundTripsPerUnit }},
	{"largest_cpu_share", "largest master cpu share", LowerIsBetter, func(r SpreadRow) float64 {
		return largestShare(r, func(m SpreadMaster) float64 { return m.CPUShare })
	}},
	{"largest_command_share", "largest master cmds share", LowerIsBetter, func(r SpreadRow) float64 {
		return largestShare(r, func(m SpreadMaster) float64 { return m.CommandShare })
	}},
}

// largestShare is the largest share of a row's masters (0 without any).
func largestShare(r SpreadRow, share func(SpreadMaster) float64) float64 {
	var v float64
	for _, m := range r.Masters {
		v = max(v, share(m))
	}
	return v
}

// spreadKey names a spread row: its shape, at the worker's concurrency,
// in this process, with the partition count as the variant.
func spreadKey(r SpreadRow) ScenarioKey {
	return ScenarioKey{Name: r.Shape, Concurrency: SpreadConcurrency, Variant: fmt.Sprintf("P=%d", r.Partitions)}
}

// compareSpreadRow compares the figures of a spread row found in both
// runs.
func compareSpreadRow(k ScenarioKey, o, n SpreadRow) ScenarioComparison {
	row := ScenarioComparison{ScenarioKey: k, Figures: []FigureComparison{}}
	for _, f := range spreadFigures {
		row.Figures = append(row.Figures, compareFigure(f.field, f.better, f.get(o), true, f.get(n), true))
	}
	return row
}

// spreadSize is the size of a spread row, as the sizes warning gives it.
func spreadSize(r SpreadRow) string {
	return fmt.Sprintf("%s %ss on %d masters", num(float64(r.Units)), r.Unit, len(r.Masters))
}
