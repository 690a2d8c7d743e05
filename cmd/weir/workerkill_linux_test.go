package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/weirflow/weir/internal/proctest"
)

// kill -9 of a weir worker takes its running command and the command's
// child with it; the task runs again on another worker once the lease
// (--lease 1s) runs out, with nothing of the first attempt left running.
func TestKilledWorkerTakesItsCommands(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	ns := "orphans"
	env := []string{"WEIR_REDIS_URL=redis://" + m.Addr()}
	dir := t.TempDir()
	file := filepath.Join(dir, "nap.yaml")
	doc := `id: nap
tasks:
  - name: nap
    run: |
      if [ "$WEIR_ATTEMPT" = 1 ]; then
        echo $$ > sh.tmp && mv sh.tmp sh.pid
        sleep 120 &
        echo $! > child.tmp && mv child.tmp child.pid
        wait
      fi
      echo "attempt $WEIR_ATTEMPT"
`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	weir(t, "", env, "submit", file, "--namespace", ns).WantCode(t, 0)
	first := startWeirWorker(t, env, "--namespace", ns, "--lease", "1s")
	sh := proctest.WaitPidFile(t, filepath.Join(dir, "sh.pid"))
	child := proctest.WaitPidFile(t, filepath.Join(dir, "child.pid"))
	t.Cleanup(func() { sh.Kill(); child.Kill() })

	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = first.wait()
	for _, p := range proctest.GoneWithin(30*time.Second, sh, child) {
		t.Errorf("the command's %s (pid %d) still runs 30 s after its worker was killed", p.What, p.Pid)
	}

	// the default lease for the second attempt: a lease of 1 s can run
	// out under load before the attempt's first heartbeat, and a second
	// expiry may fail the task (seen at load 26 on 2 cores)
	startWeirWorker(t, env, "--namespace", ns)
	r := weir(t, "", env, "wait", "nap", "--json", "--namespace", ns)
	r.WantCode(t, 0)
	tr := recordTask(t, decodeRecord(t, r), "nap")
	if tr.State != "completed" || tr.Result != "attempt 2\n" {
		t.Errorf("nap: %s, result %#v (error %v); want it run again to completion", tr.State, tr.Result, deref(tr.Error))
	}
}
