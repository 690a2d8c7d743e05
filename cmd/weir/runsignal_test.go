package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// While a signal task of weir run is open, it prints the weir signal
// command that reaches its embedded server from another process (with
// --json, on stderr); running that command completes the task.
func TestRunPrintsSignalCommand(t *testing.T) {
	t.Parallel()
	doc := "tasks:\n  - name: approve\n    signal: true\n    timeout: 1h\n  - name: deploy\n    after: [approve]\n    run: echo \"approved by $(cat \"$WEIR_DEPS_DIR/approve\")\"\n"
	for _, asJSON := range []bool{false, true} {
		args := []string{"run", writeFile(t, "approval.yaml", doc), "--namespace", "ns1"}
		if asJSON {
			args = append(args, "--json")
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		run := exec.CommandContext(ctx, binary(t), args...)
		run.Env = append(os.Environ(), "WEIR_REDIS_URL=", "WEIR_REDIS_CLUSTER=")
		var stdout, stderr strings.Builder
		hints := io.Writer(&stdout)
		pr, pw := io.Pipe()
		if asJSON {
			run.Stdout, run.Stderr = &stdout, pw
			hints = &stderr
		} else {
			run.Stdout, run.Stderr = pw, &stderr
		}
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- run.Wait(); pw.Close() }()
		var command string
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			_, _ = io.WriteString(hints, sc.Text()+"\n")
			if c, ok := strings.CutPrefix(sc.Text(), "signal approve: "); ok {
				command = c
				break
			}
		}
		drained := make(chan struct{})
		go func() {
			defer close(drained)
			for sc.Scan() {
				_, _ = io.WriteString(hints, sc.Text()+"\n")
			}
		}()
		f := strings.Fields(command)
		if len(f) < 4 || f[0] != "weir" || f[len(f)-2] != "--value" || !strings.Contains(command, " --redis redis://127.0.0.1:") || !strings.Contains(command, " --namespace ns1") {
			t.Fatalf("json %v: printed command %q; want weir signal ID approve --redis redis://127.0.0.1:PORT/0 --namespace ns1 --value JSON", asJSON, command)
		}
		// from another process, as another terminal would
		out, err := exec.CommandContext(ctx, binary(t), append(f[1:len(f)-1], `"ana"`)...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "task approve of workflow ") {
			t.Fatalf("%s: %v\n%s", command, err, out)
		}
		err = <-exited
		<-drained
		if err != nil {
			t.Fatalf("weir run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
		if asJSON {
			r := result{Stdout: stdout.String()}
			if got := recordTask(t, decodeRecord(t, r), "deploy").Result; got != "approved by ana\n" {
				t.Errorf("deploy's result %#v", got)
			}
		} else if !strings.Contains(stdout.String(), `result: "approved by ana"`) {
			t.Errorf("stdout:\n%s", stdout.String())
		}
	}
}
