package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// weir signal: the approval example waits for its signal; a signal before
// the task is open, a second different one and a bad --value fail with
// their reasons; a worker process then runs deploy with the value.
func TestSignalCommand(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	ns := []string{"--namespace", "sig"}
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", env, append(args, ns...)...)
	}
	r := cli("submit", "examples/approval.yaml")
	r.WantCode(t, 0)
	id := strings.TrimSpace(r.Stdout)
	r = cli("signal", id, "approve", "--value", `"ana"`)
	if r.Code != 1 || !strings.Contains(r.Stderr, "not open yet") {
		t.Fatalf("signal before open: %d %q", r.Code, r.Stderr)
	}
	if r = cli("signal", id, "approve", "--value", "{bad"); r.Code != 2 || !strings.Contains(r.Stderr, "not one JSON value") {
		t.Errorf("bad value: %d %q", r.Code, r.Stderr)
	}
	if r = cli("signal", id, "approve", "--value", "1", "--fail", "x"); r.Code != 2 {
		t.Errorf("--value and --fail: %d %q", r.Code, r.Stderr)
	}

	w := exec.Command(binary(t), append([]string{"worker", "--queues", "default"}, ns...)...)
	w.Dir = repoRoot(t)
	w.Env = append(os.Environ(), env...)
	var wout bytes.Buffer
	w.Stdout, w.Stderr = &wout, &wout
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Process.Kill()
		w.Wait()
	})
	// the build runs; the approve task opens (polling the record: the
	// worker is another process)
	for deadline := time.Now().Add(30 * time.Second); ; {
		rec := decodeRecord(t, cli("status", id, "--json"))
		if recordTask(t, rec, "approve").State == "open" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("approve never opened: %+v\n%s", rec, wout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	r = cli("signal", id, "approve", "--value", `"ana"`)
	r.WantCode(t, 0)
	if !strings.Contains(r.Stdout, "task approve of workflow "+id+" completed; workflow running") {
		t.Errorf("signal: %q", r.Stdout)
	}
	r = cli("signal", id, "approve", "--value", `"ana"`)
	if r.Code != 0 || !strings.Contains(r.Stdout, "already") {
		t.Errorf("the same signal again: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r = cli("signal", id, "approve", "--fail", "no"); r.Code != 1 || !strings.Contains(r.Stderr, "has ended otherwise") {
		t.Errorf("another signal: %d %q", r.Code, r.Stderr)
	}
	r = cli("wait", id, "--json")
	r.WantCode(t, 0)
	if got := recordTask(t, decodeRecord(t, r), "deploy").Result; got != "deploying v42, approved by ana\n" {
		t.Errorf("deploy's result %q\n%s", got, wout.String())
	}
}
