package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// weir events: a submit's events, in text and JSON, after a cursor and
// for one workflow; off stops them, on starts them again; --follow prints
// one as it comes.
func TestEventsCommand(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	ns := []string{"--namespace", "ev"}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, ns...)...)
	}
	r := cli("submit", "examples/approval.yaml")
	r.WantCode(t, 0)
	id := strings.TrimSpace(r.Stdout)
	r = cli("events")
	r.WantCode(t, 0)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], " workflow_submitted "+id) || !strings.Contains(lines[1], " queued "+id+"/build") {
		t.Fatalf("events:\n%s", r.Stdout)
	}
	r = cli("events", "--json", "--workflow", id)
	r.WantCode(t, 0)
	var evs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		evs = append(evs, e)
	}
	if len(evs) != 2 || evs[1]["type"] != "queued" || evs[1]["task"] != "build" || evs[1]["workflow"] != id {
		t.Fatalf("json events: %v", evs)
	}
	r = cli("events", "--after", evs[0]["id"].(string))
	if r.WantCode(t, 0); strings.Count(r.Stdout, "\n") != 1 || !strings.Contains(r.Stdout, "queued") {
		t.Errorf("after the first: %q", r.Stdout)
	}
	if r = cli("events", "--workflow", "other"); r.Code != 0 || r.Stdout != "" {
		t.Errorf("another workflow: %d %q", r.Code, r.Stdout)
	}
	if r = cli("events", "--after", "nope"); r.Code != 2 {
		t.Errorf("bad cursor: %d %q", r.Code, r.Stderr)
	}
	if r = cli("events", "maybe"); r.Code != 2 {
		t.Errorf("bad argument: %d %q", r.Code, r.Stderr)
	}

	cli("events", "off").WantCode(t, 0)
	cli("submit", "examples/approval.yaml").WantCode(t, 0)
	if r = cli("events", "--after", evs[1]["id"].(string)); r.Stdout != "" {
		t.Errorf("events while off: %q", r.Stdout)
	}
	cli("events", "on").WantCode(t, 0)

	f := exec.Command(binary(t), append([]string{"events", "--follow", "--after", evs[1]["id"].(string)}, ns...)...)
	f.Dir = repoRoot(t)
	f.Env = append(os.Environ(), env...)
	out, err := f.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Process.Kill()
		f.Wait()
	})
	cli("submit", "examples/approval.yaml").WantCode(t, 0)
	got := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		got <- s.Text()
	}()
	select {
	case l := <-got:
		if !strings.Contains(l, " workflow_submitted ") {
			t.Errorf("followed %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("--follow printed nothing")
	}
}

// weir events writes event times as records write times: UTC, exactly
// three fraction digits, in JSON and in text, also when the milliseconds
// are whole seconds (Go's default would write "…:15Z").
func TestEventsCommandTimes(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	m.SetTime(time.Date(2026, 12, 2, 18, 7, 15, 0, time.UTC))
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, "--namespace", "evt")...)
	}
	cli("submit", "examples/approval.yaml").WantCode(t, 0)
	const want = "2026-12-02T18:07:15.000Z"
	r := cli("events", "--json")
	r.WantCode(t, 0)
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var e struct{ Time string }
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Time != want {
			t.Errorf("--json: %q: time %q (%v), want %q", l, e.Time, err, want)
		}
	}
	r = cli("events")
	r.WantCode(t, 0)
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if f := strings.Fields(l); len(f) < 2 || f[1] != want {
			t.Errorf("text: %q: want the time %q second", l, want)
		}
	}
}
