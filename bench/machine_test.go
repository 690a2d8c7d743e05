package bench

import (
	"errors"
	"os"
	"runtime"
	"testing"
)

// Samples of /proc/cpuinfo, cut to their first CPU and what follows.
const (
	cpuinfoX86 = `processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 25
model		: 1
model name	: AMD EPYC 7B13   64-Core Processor
stepping	: 0
cpu MHz		: 2449.998

processor	: 1
model name	: AMD EPYC 7B13 64-Core Processor
`
	cpuinfoArmOld = `Processor	: ARMv7 Processor rev 4 (v7l)
processor	: 0
BogoMIPS	: 38.40
Hardware	: BCM2835
`
	cpuinfoArmNoModel = `processor	: 0
BogoMIPS	: 50.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid
CPU implementer	: 0x41
CPU part	: 0xd0c
`
	cpuinfoPower = `processor	: 0
cpu		: POWER9 (architected), altivec supported
clock		: 2200.000000MHz
`
)

func TestParseCPUModel(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"x86, spaces folded, first CPU", cpuinfoX86, "AMD EPYC 7B13 64-Core Processor"},
		{"old arm: Hardware before Processor", cpuinfoArmOld, "BCM2835"},
		{"arm64 without a model name", cpuinfoArmNoModel, ""},
		{"powerpc", cpuinfoPower, "POWER9 (architected), altivec supported"},
		{"empty", "", ""},
		{"empty model name", "model name\t:\ncpu\t: X\n", "X"},
	} {
		if got := parseCPUModel(c.in); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestParseLoadavg(t *testing.T) {
	l, err := parseLoadavg("0.52 1.58 12.09 1/467 12345\n")
	if err != nil || l != (Load{0.52, 1.58, 12.09}) {
		t.Errorf("%+v, %v", l, err)
	}
	for _, bad := range []string{"", "0.5 0.6", "0.5 x 0.7 1/2 3", "-1 0 0 1/2 3"} {
		if l, err := parseLoadavg(bad); err == nil {
			t.Errorf("%q: %+v, want an error", bad, l)
		}
	}
}

func TestThisMachine(t *testing.T) {
	files := map[string]string{cpuinfoPath: cpuinfoX86, loadavgPath: "3.00 2.00 1.00 2/100 42\n"}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	m := thisMachine(read)
	want := Machine{CPUModel: "AMD EPYC 7B13 64-Core Processor", Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		GoVersion: runtime.Version(), LoadBefore: &Load{3, 2, 1}}
	if m.LoadBefore == nil || *m.LoadBefore != *want.LoadBefore || m.LoadAfter != nil {
		t.Fatalf("load %+v / %+v, want %+v / nil", m.LoadBefore, m.LoadAfter, want.LoadBefore)
	}
	m.LoadBefore = want.LoadBefore
	if m != want {
		t.Errorf("%+v, want %+v", m, want)
	}

	// No /proc (not Linux): empty, no error.
	none := func(string) ([]byte, error) { return nil, errors.New("no /proc") }
	m = thisMachine(none)
	if m.CPUModel != "" || m.LoadBefore != nil || m.Cores != runtime.NumCPU() || currentLoad(none) != nil {
		t.Errorf("without /proc: %+v", m)
	}
	// A loadavg that cannot be read is no load, not a zero one.
	files[loadavgPath] = "garbage"
	if l := currentLoad(read); l != nil {
		t.Errorf("garbage loadavg: %+v", *l)
	}
}

// checkMachine checks the machine and path of a report of this process.
func checkMachine(t *testing.T, rep *Report) {
	t.Helper()
	m := rep.Machine
	if m.Cores != runtime.NumCPU() || m.OS != runtime.GOOS || m.Arch != runtime.GOARCH || m.GoVersion != runtime.Version() {
		t.Errorf("machine %+v", m)
	}
	if _, err := os.Stat(loadavgPath); err == nil && (m.LoadBefore == nil || m.LoadAfter == nil) {
		t.Errorf("load before %v, after %v, with a %s", m.LoadBefore, m.LoadAfter, loadavgPath)
	}
	if rep.CallPath != CallPathScripts && rep.CallPath != CallPathFunctions {
		t.Errorf("call path %q", rep.CallPath)
	}
}
