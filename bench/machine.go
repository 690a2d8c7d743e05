package bench

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// Machine is the machine a run ran on, so that two saved runs can be told
// apart: ratios between runs on different machines, or on a loaded one,
// mean little.
type Machine struct {
	// CPUModel is the first "model name" of /proc/cpuinfo (on CPUs that
	// have none, the first "Hardware", "Processor" or "cpu" line); empty
	// where there is no /proc/cpuinfo.
	CPUModel string `json:"cpu_model,omitempty"`
	// Cores is runtime.NumCPU: the logical CPUs this process may use.
	Cores     int    `json:"cores"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	GoVersion string `json:"go_version"`
	// LoadBefore and LoadAfter are /proc/loadavg before and after the run;
	// nil where there is none (not Linux).
	LoadBefore *Load `json:"load_before,omitempty"`
	LoadAfter  *Load `json:"load_after,omitempty"`
}

// Load is the system load average over 1, 5 and 15 minutes.
type Load struct {
	One     float64 `json:"1m"`
	Five    float64 `json:"5m"`
	Fifteen float64 `json:"15m"`
}

// procFiles are where the machine's figures are read from.
const (
	cpuinfoPath = "/proc/cpuinfo"
	loadavgPath = "/proc/loadavg"
)

// readProc reads a /proc file: os.ReadFile, or a test's samples.
type readProc func(path string) ([]byte, error)

// thisMachine returns the machine this process runs on, its load now as
// LoadBefore. Figures the system does not give are left empty.
func thisMachine(read readProc) Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}
	if b, err := read(cpuinfoPath); err == nil {
		m.CPUModel = parseCPUModel(string(b))
	}
	m.LoadBefore = currentLoad(read)
	return m
}

// currentLoad returns /proc/loadavg, or nil where it cannot be read.
func currentLoad(read readProc) *Load {
	b, err := read(loadavgPath)
	if err != nil {
		return nil
	}
	l, err := parseLoadavg(string(b))
	if err != nil {
		return nil
	}
	return &l
}

// parseCPUModel returns the CPU model of a /proc/cpuinfo text: the first
// "model name" (x86, and arm64 on recent kernels), else the first
// "Hardware", "Processor" (older arm) or "cpu" (powerpc) value; empty when
// there is none.
func parseCPUModel(cpuinfo string) string {
	found := map[string]string{}
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Join(strings.Fields(v), " ")
		if v == "" {
			continue
		}
		if _, seen := found[k]; !seen {
			found[k] = v
		}
	}
	for _, k := range []string{"model name", "Hardware", "Processor", "cpu"} {
		if v := found[k]; v != "" {
			return v
		}
	}
	return ""
}

// parseLoadavg reads the three load averages of a /proc/loadavg text
// ("0.52 0.58 0.59 1/467 12345").
func parseLoadavg(s string) (Load, error) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return Load{}, fmt.Errorf("loadavg %q: want three load averages", s)
	}
	var v [3]float64
	for i := range v {
		n, err := strconv.ParseFloat(f[i], 64)
		if err != nil || n < 0 {
			return Load{}, fmt.Errorf("loadavg %q: %q is not a load average", s, f[i])
		}
		v[i] = n
	}
	return Load{One: v[0], Five: v[1], Fifteen: v[2]}, nil
}
