package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// SpreadRow is one run of a spread (Options.Spread): one shape at one
// partition count, on a namespace of its own. Its per-unit figures cover
// the processing only (from the worker's start, every unit already
// enqueued or submitted, to the end of the last unit).
type SpreadRow struct {
	// Shape is ScenarioPlain, ScenarioChain or ScenarioFanin.
	Shape string `json:"shape"`
	// Partitions is the namespace's partition count P.
	Partitions int `json:"partitions"`
	// Unit is what Units counts: "job" (plain) or "workflow".
	Unit  string `json:"unit"`
	Units int    `json:"units"`
	// Ended is the units that ended (succeeded jobs, completed workflows)
	// by the end of the run: Units unless the run failed.
	Ended int `json:"ended"`
	// Seconds is the measured interval; UnitsPerS is Units over it.
	Seconds   float64 `json:"seconds"`
	UnitsPerS float64 `json:"units_per_s"`
	// RateRatio is UnitsPerS over that of the same shape's P = 1 row of
	// the run; null when the run has none.
	RateRatio *float64 `json:"rate_ratio,omitempty"`
	// CPUUsPerUnit is the server CPU per unit: the growth of INFO cpu
	// used_cpu_user + used_cpu_sys summed over the masters, in µs, over
	// Units. CPURatio is it over the same shape's P = 1 row's (null
	// without one).
	CPUUsPerUnit float64  `json:"cpu_us_per_unit"`
	CPURatio     *float64 `json:"cpu_ratio,omitempty"`
	// ScriptUsPerUnit and ScriptCallsPerUnit are the growth of INFO
	// commandstats usec and calls of FCALL, FCALL_RO, EVALSHA and EVAL,
	// summed over the masters, over Units.
	ScriptUsPerUnit    float64 `json:"script_us_per_unit"`
	ScriptCallsPerUnit float64 `json:"script_calls_per_unit"`
	// RoundTripsPerUnit is the client's round trips (a go-redis hook)
	// over Units.
	RoundTripsPerUnit float64 `json:"round_trips_per_unit"`
	// Masters are the cluster's masters, sorted by first slot.
	Masters []SpreadMaster `json:"masters"`
	// Namespace is the run's namespace, deleted after it; KeysLeft is the
	// keys of it found after the deletion (0).
	Namespace string `json:"namespace"`
	KeysLeft  int    `json:"keys_left"`
}

// SpreadMaster is one master's part of a SpreadRow.
type SpreadMaster struct {
	Addr      string `json:"addr"`
	FirstSlot int    `json:"first_slot"`
	// Partitions is how many of the namespace's partitions have their
	// slot on this master.
	Partitions int `json:"partitions"`
	// CPUUs is the master's growth of used_cpu_user + used_cpu_sys in µs;
	// CPUShare is it over the sum of all masters' (0 when that is 0).
	CPUUs    int64   `json:"cpu_us"`
	CPUShare float64 `json:"cpu_share"`
	// Commands is the master's growth of commandstats calls (every
	// command but INFO, those run inside scripts included): the work it
	// did, counted, where CPUUs also holds what the machine's load makes
	// a command cost. CommandShare is it over all masters' sum.
	Commands     int64   `json:"commands"`
	CommandShare float64 `json:"command_share"`
}

// spreadMasters builds the Masters of a row: for each master of ms, its
// partition count (parts, in the order of ms), its CPU growth and its
// commands from before to after (counters by address), each with its
// share of the masters' sum. A
// master missing from before or after is an error (the cluster changed).
func spreadMasters(ms []master, parts []int, before, after map[string]masterCounters) ([]SpreadMaster, error) {
	out := make([]SpreadMaster, len(ms))
	var total, cmds int64
	for i, m := range ms {
		a, okA := before[m.addr]
		b, okB := after[m.addr]
		if !okA || !okB {
			return nil, fmt.Errorf("master %s: no INFO before or after the run: the cluster changed", m.addr)
		}
		out[i] = SpreadMaster{Addr: m.addr, FirstSlot: m.firstSlot, Partitions: parts[i], CPUUs: b.cpuUs - a.cpuUs,
			Commands: b.scripts.calls - a.scripts.calls}
		total += out[i].CPUUs
		cmds += out[i].Commands
	}
	for i := range out {
		out[i].CPUShare = ratio(float64(out[i].CPUUs), float64(total))
		out[i].CommandShare = ratio(float64(out[i].Commands), float64(cmds))
	}
	return out, nil
}

// scriptDelta is the growth of the script counters summed over the
// masters from before to after.
func scriptDelta(before, after map[string]masterCounters) cmdStats {
	var d cmdStats
	for addr, b := range after {
		a := before[addr]
		d.scriptCall += b.scripts.scriptCall - a.scripts.scriptCall
		d.scriptUsec += b.scripts.scriptUsec - a.scripts.scriptUsec
	}
	return d
}

// fillSpreadRatios sets each row's RateRatio and CPURatio from the first
// P = 1 row of its shape; rows of a shape without one get none.
func fillSpreadRatios(rows []SpreadRow) {
	base := map[string]*SpreadRow{}
	for i := range rows {
		if r := &rows[i]; r.Partitions == 1 && base[r.Shape] == nil {
			base[r.Shape] = r
		}
	}
	for i := range rows {
		r := &rows[i]
		b := base[r.Shape]
		r.RateRatio, r.CPURatio = nil, nil
		if b == nil {
			continue
		}
		if b.UnitsPerS > 0 {
			v := r.UnitsPerS / b.UnitsPerS
			r.RateRatio = &v
		}
		if b.CPUUsPerUnit > 0 {
			v := r.CPUUsPerUnit / b.CPUUsPerUnit
			r.CPURatio = &v
		}
	}
}

// writeSpreadTable writes the spread rows as a table, after a line naming
// the masters in the order of the per-master columns.
func writeSpreadTable(w io.Writer, rows []SpreadRow) {
	if len(rows) == 0 {
		return
	}
	names := make([]string, len(rows[0].Masters))
	for i, m := range rows[0].Masters {
		names[i] = fmt.Sprintf("%s (slot %d)", m.Addr, m.FirstSlot)
	}
	fmt.Fprintf(w, "masters, by first slot (the order of partitions/master, cpu %%/master and cmds %%/master): %s\n", strings.Join(names, ", "))
	fmt.Fprintf(w, "cpu = INFO cpu used_cpu_user+used_cpu_sys; script = commandstats of FCALL, FCALL_RO, EVALSHA, EVAL; both summed over the masters; ×P=1 = over the same shape's P=1 row; cmds = commandstats calls (those inside scripts included)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shape\tP\tunit\tunits\tended\ts\tunits/s\t×P=1\tcpu µs/unit\t×P=1\tscript µs/unit\tscripts/unit\ttrips/unit\tpartitions/master\tcpu %/master\tcmds %/master\t")
	for _, r := range rows {
		parts := make([]string, len(r.Masters))
		shares := make([]string, len(r.Masters))
		cmds := make([]string, len(r.Masters))
		for i, m := range r.Masters {
			parts[i] = strconv.Itoa(m.Partitions)
			shares[i] = fmt.Sprintf("%.0f", m.CPUShare*100)
			cmds[i] = fmt.Sprintf("%.0f", m.CommandShare*100)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%.2f\t%s\t%s\t%.1f\t%s\t%.1f\t%.2f\t%.2f\t%s\t%s\t%s\t\n",
			r.Shape, r.Partitions, r.Unit, r.Units, r.Ended, r.Seconds, num(r.UnitsPerS), optRatio(r.RateRatio),
			r.CPUUsPerUnit, optRatio(r.CPURatio), r.ScriptUsPerUnit, r.ScriptCallsPerUnit, r.RoundTripsPerUnit,
			strings.Join(parts, "/"), strings.Join(shares, "/"), strings.Join(cmds, "/"))
	}
	_ = tw.Flush()
}

// optRatio formats a ratio to P = 1, "-" when there is none.
func optRatio(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}
