package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Proc is a process seen running, with its start time, so that its PID
// used again by another process does not pass for it.
type Proc struct {
	What string // what the test calls it, for messages
	Pid  int
	// Group is its process group's ID when it was seen.
	Group int

	start string
}

// stat returns the fields of /proc/PID/stat after the command's name (the
// state first), false when the process is gone or a zombie (a killed
// orphan stays one under an init that does not reap).
func stat(pid int) ([]string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 || f[0] == "Z" {
		return nil, false
	}
	return f, true
}

// Find returns the process pid when it runs.
func Find(pid int, what string) (Proc, bool) {
	f, ok := stat(pid)
	if !ok {
		return Proc{}, false
	}
	g, _ := strconv.Atoi(f[2])
	return Proc{What: what, Pid: pid, Group: g, start: f[19]}, true
}

// WaitPidFile waits up to 30 s for the file at path to hold a PID (write
// it elsewhere and rename it, so that it is never seen half written) and
// returns that process, which must still run.
func WaitPidFile(t testing.TB, path string) Proc {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %q is no PID", path, b)
			}
			p, ok := Find(pid, filepath.Base(path))
			if !ok {
				t.Fatalf("%s: process %d ended before the test saw it", path, pid)
			}
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30 s", path)
		}
	}
}

// Alive reports whether the process still runs.
func (p Proc) Alive() bool {
	f, ok := stat(p.Pid)
	return ok && f[19] == p.start
}

// Kill kills the process if it still runs (a test's cleanup).
func (p Proc) Kill() {
	if p.Alive() {
		if pr, err := os.FindProcess(p.Pid); err == nil {
			_ = pr.Kill()
		}
	}
}

// GoneWithin polls until every one of ps has ended, up to limit, and
// returns those still running then.
func GoneWithin(limit time.Duration, ps ...Proc) []Proc {
	deadline := time.Now().Add(limit)
	for {
		var alive []Proc
		for _, p := range ps {
			if p.Alive() {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// GroupMembers returns the running processes of process group g, with
// their command lines as What.
func GroupMembers(g int) ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var ps []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Find(pid, ""); ok && p.Group == g {
			p.What = cmdline(pid)
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// WithEnv returns the running processes whose environment holds kv
// ("NAME=value"), with their command lines as What: the descendants of a
// process started with a variable no other process has, whatever became
// of their parents.
func WithEnv(kv string) ([]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var ps []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || !slices.Contains(strings.Split(string(env), "\x00"), kv) {
			continue
		}
		if p, ok := Find(pid, cmdline(pid)); ok {
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// cmdline is the command line of pid, its arguments separated by spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}
