package redisstore

import (
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"strings"
	"testing"
	"time"
)

// applySpecSplit is applySpec as it was before it split the spec without
// allocating (strings.Split): the oracle of FuzzApplySpec.
func applySpecSplit(j *weir.Job, id, spec string) error {
	j.ID = id
	f := strings.Split(spec, "|")
	wf, rest, isTask := strings.Cut(id, "/")
	var q string
	xs := ""
	if isTask {
		if len(f) != 8 {
			return fmt.Errorf("%w: job %q has the task spec %q", weir.ErrProtocol, id, spec)
		}
		task, _, undo := strings.Cut(rest, "/")
		j.Workflow, j.Task, j.Undo = wf, task, undo
		flags, key, _ := strings.Cut(f[6], ":")
		if !undo {
			j.Key = key
		}
		if _, after, ok := strings.Cut(flags, "X"); ok {
			xs = after
		}
		q, f = f[1], f[2:6]
		if undo {
			q = spec[strings.LastIndexByte(spec, '|')+1:]
		}
	} else {
		if n := len(f); n > 5 && f[n-1] != "" && (f[n-1][0] == 'u' || f[n-1][0] == 'U') {
			f = f[:n-1] // a unique job's key
		}
		if n := len(f); n > 5 && strings.HasPrefix(f[n-1], "K") {
			j.Key, f = f[n-1][1:], f[:n-1] // its concurrency key
		}
		if len(f) != 5 && len(f) != 6 {
			return fmt.Errorf("%w: job %q has the spec %q", weir.ErrProtocol, id, spec)
		}
		if len(f) == 6 {
			xs = f[5]
		}
		q, f = f[0], f[1:5]
	}
	j.MaxExpiries = weir.DefaultMaxExpiries
	if xs != "" {
		x, err := strconv.Atoi(xs)
		if err != nil || x < 0 {
			return fmt.Errorf("%w: job %q has the spec %q", weir.ErrProtocol, id, spec)
		}
		j.MaxExpiries = x
	}
	var n [4]int64
	for i, s := range f {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: job %q has the spec %q", weir.ErrProtocol, id, spec)
		}
		n[i] = v
	}
	j.Queue = q
	j.Priority, j.MaxAttempts = int(n[0]), int(n[1])
	j.Backoff, j.Timeout = time.Duration(n[2])*time.Millisecond, time.Duration(n[3])*time.Millisecond
	return nil
}

// specSeeds are specs of every shape: plain jobs with and without max
// expiries, concurrency and unique keys, tasks and undo jobs, and broken
// ones (too few and too many fields, bad numbers).
var specSeeds = []struct{ id, spec string }{
	{"j1", "q|0|3|1000|0"},
	{"j1", "q|5|3|1000|250|2"},
	{"j1", "q|0|3|1000|0|Ktenant"},
	{"j1", "q|0|3|1000|0|2|Ktenant|uabc"},
	{"j1", "q|0|3|1000|0|Uabc"},
	{"j1", "q|0|3|1000|0|2|Ktenant|uabc|extra"},
	{"j1", "q|0|3|1000"},
	{"j1", "q|x|3|1000|0"},
	{"j1", "q|0|3|1000|0|-1"},
	{"w/b", "b|q|0|1|1000|0|A|"},
	{"w/b", "b|q|0|1|1000|0|SX3:key|"},
	{"w/b/undo", "b|q|0|1|1000|0|U|uq"},
	{"w/b", "b|q|0|1|1000|0|A|u|extra"},
	{"w/b", "b|q|0|1|1000|0|A"},
	{"w/b", "b|q|0|1|1000|0|X|"},
	{"j1", ""},
	{"j1", "|||||||||"},
}

// FuzzApplySpec: applySpec reads every spec as the strings.Split version
// did, errors included.
func FuzzApplySpec(f *testing.F) {
	for _, s := range specSeeds {
		f.Add(s.id, s.spec)
	}
	f.Fuzz(func(t *testing.T, id, spec string) {
		var got, want weir.Job
		gerr, werr := applySpec(&got, id, spec), applySpecSplit(&want, id, spec)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Fatalf("applySpec(%q, %q) = %+v, %v; before: %+v, %v", id, spec, got, gerr, want, werr)
		}
	})
}

// TestApplySpecAllocates: reading a claimed job's spec allocates nothing
// (a claim reads one per job).
func TestApplySpecAllocates(t *testing.T) {
	for _, s := range []struct{ id, spec string }{{"j1", "q|0|3|1000|0|2|Ktenant|uabc"}, {"w/b", "b|q|0|1|1000|0|SX3:key|"}} {
		var j weir.Job
		if n := testing.AllocsPerRun(100, func() { _ = applySpec(&j, s.id, s.spec) }); n != 0 {
			t.Errorf("applySpec(%q, %q): %v allocations", s.id, s.spec, n)
		}
	}
}

// TestClaimedLease: a claimed job's Job.Lease is its Claimed's lease.
func TestClaimedLease(t *testing.T) {
	one := "\nq|0|3|1000|0\n1700000000000\n1\ntok\n1700000060000\n0\np\n0"
	r := newReader([]string{"2", "j1" + one, "p", "j2" + one, "p"})
	cs := r.claimed()
	if err := r.done(); err != nil || len(cs) != 2 {
		t.Fatalf("%d claimed, %v", len(cs), err)
	}
	for _, c := range cs {
		if c.Job.Lease == nil || *c.Job.Lease != c.Lease || c.Lease.Token != "tok" || !c.Lease.Deadline.Equal(time.UnixMilli(1700000060000)) {
			t.Errorf("%s: lease %+v, job's %+v", c.Job.ID, c.Lease, c.Job.Lease)
		}
	}
}
