package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunPipelineExample(t *testing.T) {
	t.Parallel()
	r := weir(t, "", nil, "run", "examples/pipeline.yaml")
	r.WantCode(t, 0)
	for _, want := range []string{"workflow ", " completed", "report", `result: "3 lines, 24 words`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	// Not a terminal: progress is one line per change, with no control
	// characters.
	if strings.ContainsAny(r.Stdout, "\r\x1b") {
		t.Errorf("progress on a pipe has control characters:\n%q", r.Stdout)
	}
	if !regexp.MustCompile(`(?m)^\s+\d+\.\ds\s+report\s+running \(attempt 1\)$`).MatchString(r.Stdout) &&
		!regexp.MustCompile(`(?m)^\s+\d+\.\ds\s+report\s+completed \(attempt 1\)$`).MatchString(r.Stdout) {
		t.Errorf("no progress line for report:\n%s", r.Stdout)
	}
}

func TestRunPipelineJSON(t *testing.T) {
	t.Parallel()
	r := weir(t, "", nil, "run", "--json", "examples/pipeline.yaml")
	r.WantCode(t, 0)
	rec := decodeRecord(t, r)
	if rec.State != "completed" || rec.ID == "" || rec.CreatedAt == nil || rec.EndedAt == nil || rec.EndedAt.Before(rec.CreatedAt.Time) {
		t.Fatalf("record: %+v", rec)
	}
	names := []string{}
	for _, tr := range rec.Tasks {
		names = append(names, tr.Name)
		wantTask(t, tr, "completed", 1)
		if tr.Queue != "default" || tr.Error != nil || tr.Undo != nil {
			t.Errorf("task %+v", tr)
		}
	}
	if got := strings.Join(names, ","); got != "fetch,words,lines,shout,report" {
		t.Errorf("tasks in order %s", got)
	}
	if got := recordTask(t, rec, "words").Result; got != "24\n" {
		t.Errorf("words result %#v, want \"24\\n\"", got)
	}
	if got := recordTask(t, rec, "shout").Result; got != "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG\n" {
		t.Errorf("shout result %#v", got)
	}
	rep, _ := recordTask(t, rec, "report").Result.(string)
	if !strings.HasPrefix(rep, "3 lines, 24 words\nfirst line, shouted: THE QUICK BROWN FOX") || !strings.Contains(rep, "input of report (attempt 1)") {
		t.Errorf("report result %q", rep)
	}
	if after := recordTask(t, rec, "report").After; strings.Join(after, ",") != "words,lines,shout" {
		t.Errorf("report after %v", after)
	}
	if after := recordTask(t, rec, "fetch").After; after == nil || len(after) != 0 {
		t.Errorf("fetch after %#v, want []", after)
	}
}

// The command sees every variable and the input file the spec lists, and
// runs in the file's directory.
func TestRunEnvironmentAndInput(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "env.yaml", `id: env-1
tasks:
  - name: first
    run: printf 'one "quoted"\n'
  - name: second
    after: [first]
    run: |
      echo "id=$WEIR_WORKFLOW_ID task=$WEIR_TASK attempt=$WEIR_ATTEMPT undo=$WEIR_UNDO"
      pwd
      cat "$WEIR_INPUT"
      cat "$WEIR_DEPS_DIR/first"
`)
	r := weir(t, "", nil, "run", "--json", p)
	r.WantCode(t, 0)
	rec := decodeRecord(t, r)
	if rec.ID != "env-1" {
		t.Errorf("id %q", rec.ID)
	}
	out, _ := recordTask(t, rec, "second").Result.(string)
	lines := strings.SplitN(out, "\n", 4)
	if len(lines) < 4 {
		t.Fatalf("second's output %q", out)
	}
	if lines[0] != "id=env-1 task=second attempt=1 undo=0" {
		t.Errorf("variables: %q", lines[0])
	}
	dir, _ := filepath.EvalSymlinks(filepath.Dir(p))
	if got, _ := filepath.EvalSymlinks(lines[1]); got != dir {
		t.Errorf("working directory %q, want %q", lines[1], dir)
	}
	want := `{"workflow":"env-1","task":"second","attempt":1,"undo":false,"deps":{"first":{"state":"completed","result":"one \"quoted\"\n","error":null}}}` + "\n" + "one \"quoted\"\n"
	if lines[2]+"\n"+lines[3] != want {
		t.Errorf("input and deps file:\n%s\nwant\n%s", lines[2]+"\n"+lines[3], want)
	}
}

func TestRunRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "flaky.yaml", `tasks:
  - name: flaky
    retries: 3
    backoff: 1ms
    run: |
      echo "attempt $WEIR_ATTEMPT" >> attempts.log
      if [ "$WEIR_ATTEMPT" -lt 3 ]; then echo "not yet" >&2; exit 1; fi
      echo done
`)
	r := weir(t, "", nil, "run", "--json", p)
	r.WantCode(t, 0)
	rec := decodeRecord(t, r)
	tr := recordTask(t, rec, "flaky")
	wantTask(t, tr, "completed", 3)
	if tr.Result != "done\n" || tr.Error != nil {
		t.Errorf("flaky: %+v", tr)
	}
	log, err := os.ReadFile(filepath.Join(filepath.Dir(p), "attempts.log"))
	if err != nil || string(log) != "attempt 1\nattempt 2\nattempt 3\n" {
		t.Errorf("attempts.log %q, %v", log, err)
	}
}

func TestRunFailsAfterRetries(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "fail.yaml", `tasks:
  - name: ok
    run: echo fine
  - name: bad
    retries: 2
    backoff: 1ms
    run: |
      echo "lots of noise" >&2
      echo "disk full on attempt $WEIR_ATTEMPT" >&2
      exit 4
  - name: later
    after: [bad]
    run: echo never
`)
	r := weir(t, "", nil, "run", "--json", p)
	r.WantCode(t, 1)
	rec := decodeRecord(t, r)
	if rec.State != "failed" {
		t.Errorf("state %s, want failed", rec.State)
	}
	bad := recordTask(t, rec, "bad")
	wantTask(t, bad, "failed", 3)
	if got := deref(bad.Error); got != "exit status 4: lots of noise\ndisk full on attempt 3" {
		t.Errorf("bad's error %q", got)
	}
	if bad.Result != nil {
		t.Errorf("bad's result %#v, want null", bad.Result)
	}
	wantTask(t, recordTask(t, rec, "later"), "cancelled", 0)
	wantTask(t, recordTask(t, rec, "ok"), "completed", 1)

	// Without --json: a summary, the same status.
	r = weir(t, "", nil, "run", p)
	r.WantCode(t, 1)
	if !strings.Contains(r.Stdout, " failed") || !strings.Contains(r.Stdout, "exit status 4") {
		t.Errorf("summary:\n%s", r.Stdout)
	}
}

func TestRunAlwaysAfterFailure(t *testing.T) {
	t.Parallel()
	r := weir(t, "", nil, "run", "--json", "examples/retry.yaml")
	r.WantCode(t, 0) // broken's failure is absorbed by its Always dependent
	rec := decodeRecord(t, r)
	if rec.State != "completed" {
		t.Errorf("state %s", rec.State)
	}
	wantTask(t, recordTask(t, rec, "flaky"), "completed", 3)
	broken := recordTask(t, rec, "broken")
	wantTask(t, broken, "failed", 2)
	if got := deref(broken.Error); got != "exit status 7: still broken on attempt 2" {
		t.Errorf("broken's error %q", got)
	}
	cleanup := recordTask(t, rec, "cleanup")
	wantTask(t, cleanup, "completed", 1)
	if !cleanup.Always || cleanup.Result != "cleanup saw broken failed\n" {
		t.Errorf("cleanup %+v", cleanup)
	}
}

func TestRunSagaUndoesInReverse(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "saga.log")
	r := weir(t, "", []string{"SAGA_LOG=" + logPath}, "run", "--json", "examples/saga.yaml")
	r.WantCode(t, 1)
	rec := decodeRecord(t, r)
	if rec.State != "compensated" || deref(rec.Reason) != "failure" {
		t.Errorf("state %s reason %s, want compensated failure", rec.State, deref(rec.Reason))
	}
	for _, name := range []string{"flight", "hotel", "car"} {
		tr := recordTask(t, rec, name)
		wantTask(t, tr, "completed", 1)
		if tr.Undo == nil || deref(tr.Undo.State) != "completed" || tr.Undo.Attempts != 1 || tr.Undo.Error != nil {
			t.Errorf("%s's undo %+v", name, tr.Undo)
		}
	}
	pay := recordTask(t, rec, "pay")
	wantTask(t, pay, "failed", 1)
	if deref(pay.Error) != "exit status 3: card declined" || pay.Undo != nil {
		t.Errorf("pay %+v", pay)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	want := "book flight\nbook hotel\nbook car\npay\ncancel car CA-3\ncancel hotel HO-2\ncancel flight FL-1\n"
	if string(log) != want {
		t.Errorf("saga.log:\n%s\nwant:\n%s", log, want)
	}
}

// A saga written as a batch with a catch and a finally but no then: the
// failed step is not absorbed by the group's callbacks, so the workflow
// compensates and `weir run` exits 1 (issue: it ended completed, exit 0,
// and the undos never ran).
func TestRunBatchCatchFinallyCompensates(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "booking.yaml", `batch:
  name: booking
  steps:
    - {name: flight, run: echo FL-1, undo: {run: echo undo flight}}
    - {name: hotel, run: echo HO-2, undo: {run: echo undo hotel}}
    - {name: pay, run: echo declined >&2; exit 1}
  catch: {run: echo caught $WEIR_GROUP_FIRST_FAILURE}
  finally: {run: echo done}
`)
	r := weir(t, "", nil, "run", "--json", p)
	r.WantCode(t, 1)
	rec := decodeRecord(t, r)
	if rec.State != "compensated" || deref(rec.Reason) != "failure" {
		t.Errorf("state %s reason %s, want compensated failure", rec.State, deref(rec.Reason))
	}
	for _, name := range []string{"flight", "hotel"} {
		tr := recordTask(t, rec, name)
		if tr.Undo == nil || deref(tr.Undo.State) != "completed" {
			t.Errorf("%s's undo %+v, want completed", name, tr.Undo)
		}
	}
	wantTask(t, recordTask(t, rec, "booking.catch"), "completed", 1)
	wantTask(t, recordTask(t, rec, "booking.finally"), "completed", 1)
}

// examples/batch.yaml: a step fails, the catch and the finally run, and
// the workflow fails, as the example says.
func TestRunBatchExample(t *testing.T) {
	t.Parallel()
	r := weir(t, "", nil, "run", "--json", "examples/batch.yaml")
	r.WantCode(t, 1)
	rec := decodeRecord(t, r)
	if rec.State != "failed" {
		t.Errorf("state %s, want failed", rec.State)
	}
	wantTask(t, recordTask(t, rec, "emails.then"), "cancelled", 0)
	wantTask(t, recordTask(t, rec, "emails.catch"), "completed", 1)
	wantTask(t, recordTask(t, rec, "emails.finally"), "completed", 1)
}

func TestRunFailFast(t *testing.T) {
	t.Parallel()
	r := weir(t, "", nil, "run", "--json", "--concurrency", "1", "examples/failfast.yaml")
	r.WantCode(t, 1)
	rec := decodeRecord(t, r)
	if rec.State != "failed" || !rec.FailFast {
		t.Errorf("state %s fail_fast %v", rec.State, rec.FailFast)
	}
	wantTask(t, recordTask(t, rec, "boom"), "failed", 1)
	for _, name := range []string{"next", "after-next"} {
		tr := recordTask(t, rec, name)
		wantTask(t, tr, "cancelled", 0)
		if deref(tr.Error) != "fail_fast" {
			t.Errorf("%s's error %q", name, deref(tr.Error))
		}
	}
	fin := recordTask(t, rec, "finally")
	wantTask(t, fin, "completed", 1)
	if fin.Result != "finally ran\n" {
		t.Errorf("finally's result %#v", fin.Result)
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	// The command starts a child that would keep standard output open for
	// a minute: the kill must reach it, or the run would wait for it.
	p := writeFile(t, "slow.json", `{"tasks": [
  {"name": "slow", "timeout": "300ms", "run": "sleep 60 & sleep 60; echo late"},
  {"name": "after", "after": ["slow"], "always": true, "run": "echo after"}
]}`)
	r := weir(t, "", nil, "run", "--json", p)
	r.WantCode(t, 0)
	rec := decodeRecord(t, r)
	slow := recordTask(t, rec, "slow")
	wantTask(t, slow, "failed", 1)
	if deref(slow.Error) != "timeout after 300ms" {
		t.Errorf("slow's error %q", deref(slow.Error))
	}
	wantTask(t, recordTask(t, rec, "after"), "completed", 1)
	if rec.EndedAt.Sub(rec.CreatedAt.Time).Seconds() > 30 {
		t.Errorf("the run took %v: the process group was not killed", rec.EndedAt.Sub(rec.CreatedAt.Time))
	}
}

func TestRunResultOverLimit(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "big.yaml", `tasks:
  - name: big
    run: head -c 70000 /dev/zero | tr '\0' x
`)
	r := weir(t, "", nil, "run", "--json", p)
	r.WantCode(t, 1)
	big := recordTask(t, decodeRecord(t, r), "big")
	wantTask(t, big, "failed", 1)
	if !strings.Contains(deref(big.Error), "standard output is over the result limit of 65536 bytes") {
		t.Errorf("big's error %q", deref(big.Error))
	}
}

func TestRunBadFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, content string
		want                []string // substrings of stderr, besides the file's name
	}{
		{"unknown task field", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    colour: red\n",
			[]string{`task "a": field colour: line 4: unknown field`}},
		{"unknown workflow field", "a.yaml", "fail_fats: true\ntasks:\n  - name: a\n    run: echo\n",
			[]string{`field fail_fats: line 1: unknown field`}},
		{"unknown undo field", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    undo:\n      run: x\n      qeue: q\n",
			[]string{`task "a": field undo.qeue: line 6: unknown field`}},
		{"wrong type", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    retries: many\n",
			[]string{`task "a": field retries: line 4: ` + "`many`" + ` is not an integer`}},
		{"after a later task", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    after: [b]\n  - name: b\n    run: echo\n",
			[]string{`task "a": field after: "b" is not a task listed before this one`}},
		{"after itself", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    after: [a]\n",
			[]string{`task "a": field after: a task cannot run after itself`}},
		{"after twice", "a.yaml", "tasks:\n  - name: a\n    run: echo\n  - name: b\n    run: echo\n    after: [a, a]\n",
			[]string{`task "b": field after: "a" is listed twice`}},
		{"bad name", "a.yaml", "tasks:\n  - name: a b\n    run: echo\n",
			[]string{`tasks[0]: field name: task name "a b" must match`}},
		{"missing name", "a.yaml", "tasks:\n  - name: a\n    run: echo\n  - run: echo\n",
			[]string{`tasks[1]: field name: required`}},
		{"duplicate name", "a.yaml", "tasks:\n  - name: a\n    run: echo\n  - name: a\n    run: echo\n",
			[]string{`task "a": field name: duplicate task name`}},
		{"missing run", "a.yaml", "tasks:\n  - name: a\n",
			[]string{`task "a": field run: required`}},
		{"missing undo run", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    undo:\n      queue: q\n",
			[]string{`task "a": field undo.run: required`}},
		{"bad queue", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    queue: my queue\n",
			[]string{`task "a": field queue: queue name "my queue" must match`}},
		{"bad duration", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    timeout: soon\n",
			[]string{`task "a": field timeout: "soon" is not a duration`}},
		{"negative backoff", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    backoff: -1s\n",
			[]string{`task "a": field backoff: "-1s" is negative`}},
		{"backoff over the cap", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    backoff: 2h\n",
			[]string{`task "a": field backoff: "2h" is over the limit of 1h0m0s`}},
		{"negative retries", "a.yaml", "tasks:\n  - name: a\n    run: echo\n    retries: -1\n",
			[]string{`task "a": field retries: -1 is outside [0, 999]`}},
		{"bad id", "a.yaml", "id: no/slash\ntasks:\n  - name: a\n    run: echo\n",
			[]string{`field id: workflow ID "no/slash" must match`}},
		{"no tasks", "a.yaml", "id: x\n",
			[]string{`field tasks: a workflow needs at least one task`}},
		{"empty", "a.yaml", "",
			[]string{`the file is empty`}},
		{"two documents", "a.yaml", "tasks:\n  - name: a\n    run: echo\n---\ntasks: []\n",
			[]string{`more than one document`}},
		{"syntax", "a.yaml", "tasks: [\n",
			[]string{`invalid YAML: line`}},
		{"json unknown field", "a.json", `{"tasks": [{"name": "a", "run": "echo", "colour": 1}]}`,
			[]string{`task "a": field colour: invalid JSON: unknown field`}},
		{"json wrong type", "a.json", `{"tasks": [{"name": "a", "run": "echo"}, {"name": "b", "run": "echo", "always": "yes"}]}`,
			[]string{`task "b": field always: invalid JSON: a JSON string is not true or false`}},
		{"json after", "a.json", `{"tasks": [{"name": "a", "run": "echo", "after": ["z"]}]}`,
			[]string{`task "a": field after: "z" is not a task listed before this one`}},
		{"json trailing", "a.json", `{"tasks": [{"name": "a", "run": "echo"}]} {}`,
			[]string{`more than one JSON value`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := writeFile(t, c.file, c.content)
			r := weir(t, "", nil, "run", p)
			r.WantCode(t, 2)
			if r.Stdout != "" {
				t.Errorf("stdout %q, want nothing", r.Stdout)
			}
			if !strings.HasPrefix(r.Stderr, "weir: "+p+": ") {
				t.Errorf("stderr does not start with the file's name:\n%s", r.Stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
				}
			}
			if strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
				t.Errorf("stderr is more than one line:\n%s", r.Stderr)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "run takes 1 argument(s), got 0"},
		{[]string{"run", "a.yaml", "b.yaml"}, "run takes 1 argument(s), got 2"},
		{[]string{"frob"}, `unknown command "frob"`},
		{[]string{"run", "--concurrency", "x", "examples/pipeline.yaml"}, `invalid argument "x" for "--concurrency"`},
		{[]string{"run", "--concurrency", "0", "examples/pipeline.yaml"}, "--concurrency must be at least 1"},
		{[]string{"run", "--nope", "examples/pipeline.yaml"}, "unknown flag: --nope"},
		{[]string{"run", "no-such-file.yaml"}, "no-such-file.yaml: cannot read the file"},
		{[]string{"run", "--redis", "http://x", "examples/pipeline.yaml"}, `redis URL "http://x"`},
		{[]string{"run", "--namespace", "a b", "examples/pipeline.yaml"}, `--namespace "a b" must match`},
		{[]string{"status", "x"}, "no Redis: give --redis URL or set WEIR_REDIS_URL"},
	} {
		r := weir(t, "", nil, c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("weir %v: status %d, stderr %q; want 2 and %q", c.args, r.Code, r.Stderr, c.want)
		}
	}
}

// An interrupt ends `weir run` at once with status 1, killing the running
// command.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := writeFile(t, "sleep.yaml", "tasks:\n  - name: nap\n    run: echo $$ > "+filepath.Join(dir, "pid")+"; exec sleep 600\n")
	cmd := exec.Command(binary(t), "run", p)
	cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=", "WEIR_REDIS_CLUSTER=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "nap") && strings.Contains(sc.Text(), "running (attempt 1)") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	// Wait for the command to have started (it writes its PID first).
	var pid int
	for pid == 0 {
		if b, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil && strings.HasSuffix(string(b), "\n") {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
				t.Fatal(err)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "weir: interrupted: workflow ") {
		t.Fatalf("after SIGINT: %v, stderr %q", err, stderr.String())
	}
	// The command was killed: signalling its process group fails.
	if err := syscall.Kill(-pid, 0); err == nil && !zombie(pid) {
		t.Errorf("process group %d still alive after weir ended", pid)
	}
}

// zombie reports whether pid is a dead process not yet reaped (in a
// container whose init does not reap, a killed orphan stays one).
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // gone
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

func TestRunDeadline(t *testing.T) {
	t.Parallel()
	start := time.Now()
	r := weir(t, "", nil, "run", "--json", "examples/deadline.yaml")
	r.WantCode(t, 1)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %v: the deadline of 2s did not stop the 30s build", took)
	}
	rec := decodeRecord(t, r)
	if rec.State != "cancelled" || !rec.DeadlineHit || rec.Deadline == nil {
		t.Errorf("state %s deadline_hit %v deadline %v", rec.State, rec.DeadlineHit, rec.Deadline)
	}
	pub := recordTask(t, rec, "publish")
	wantTask(t, pub, "cancelled", 0)
	if deref(pub.Error) != "deadline" {
		t.Errorf("publish's error %q", deref(pub.Error))
	}
	if b := recordTask(t, rec, "build"); b.State != "cancelled" {
		t.Errorf("build %s", b.State)
	}
}

// A shell task adds tasks to its workflow through WEIR_ADD_TASKS; gated,
// the report waits for them and reads their results.
func TestRunDynamicExample(t *testing.T) {
	t.Parallel()
	r := weir(t, "", nil, "run", "--json", "examples/dynamic.yaml")
	r.WantCode(t, 0)
	rec := decodeRecord(t, r)
	if rec.State != "completed" || len(rec.Tasks) != 6 {
		t.Fatalf("record: %+v", rec)
	}
	if got := recordTask(t, rec, "report").Result; got != "4 parts: ALPHA BETA GAMMA DELTA\n" {
		t.Errorf("report result %#v", got)
	}
	if after := recordTask(t, rec, "report").After; strings.Join(after, ",") != "split,shout-1,shout-2,shout-3,shout-4" {
		t.Errorf("report after %v", after)
	}
	for _, tr := range rec.Tasks {
		added := strings.HasPrefix(tr.Name, "shout-")
		if added != (tr.AddedBy != nil && *tr.AddedBy == "split") {
			t.Errorf("task %s added_by %v", tr.Name, tr.AddedBy)
		}
	}
}

// A file of tasks to add that does not parse fails the attempt for good.
func TestRunAddTasksBadFile(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "bad-add.yaml", `tasks:
  - name: a
    retries: 2
    run: |
      echo "id: x" > "$WEIR_ADD_TASKS"
`)
	r := weir(t, "", nil, "run", "--json", p)
	rec := decodeRecord(t, r)
	a := recordTask(t, rec, "a")
	if rec.State != "failed" || a.Attempts != 1 || a.Error == nil || !strings.Contains(*a.Error, "WEIR_ADD_TASKS") {
		t.Fatalf("record %+v, task a %+v", rec, a)
	}
}

// A group's counts (WEIR_GROUP_*) are of its callback's dependencies but
// the group's own callbacks: tasks a step added with gate_dependents are
// among them and count, their failure included; tasks added without it
// are not (spec/workflow-file.md, How a command runs; spec/states.md,
// Chain and batch).
func TestRunGroupCountsAddedTasks(t *testing.T) {
	t.Parallel()
	const report = `{run: 'printf "%s/%s/%s/%s/%s" "$WEIR_GROUP_TOTAL" "$WEIR_GROUP_COMPLETED" "$WEIR_GROUP_FAILED" "$WEIR_GROUP_CANCELLED" "$WEIR_GROUP_FIRST_FAILURE"'}`
	file := func(gate string) string {
		return `batch:
  name: g
  steps:
    - name: a
      run: |
        printf '` + gate + `tasks:\n  - {name: x, run: "true"}\n  - {name: y, run: "exit 3"}\n' > "$WEIR_ADD_TASKS"
    - {name: b, run: "true"}
  then: ` + report + `
  catch: ` + report + `
  finally: ` + report + `
`
	}
	for _, c := range []struct {
		name, gate           string
		then, catch, finally string
		catchAfter           string
	}{
		{"gated", `gate_dependents: true\n`, "", "4/3/1/0/y", "4/3/1/0/y", "a,b,x,y"},
		{"not gated", "", "2/2/0/0/", "", "2/2/0/0/", "a,b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := weir(t, "", nil, "run", "--json", writeFile(t, "group.yaml", file(c.gate)))
			rec := decodeRecord(t, r)
			if rec.State != "failed" || len(rec.Tasks) != 7 {
				t.Fatalf("workflow %s with %d tasks, want failed with 7 (y failed)", rec.State, len(rec.Tasks))
			}
			for task, want := range map[string]string{"g.then": c.then, "g.catch": c.catch, "g.finally": c.finally} {
				tr := recordTask(t, rec, task)
				got, _ := tr.Result.(string)
				if want == "" {
					if tr.State != "cancelled" {
						t.Errorf("%s is %s (printed %q), want cancelled", task, tr.State, got)
					}
				} else if got != want {
					t.Errorf("%s printed %q (%s), want %q", task, got, tr.State, want)
				}
			}
			if after := strings.Join(recordTask(t, rec, "g.catch").After, ","); after != c.catchAfter {
				t.Errorf("g.catch after %s, want %s", after, c.catchAfter)
			}
		})
	}
}
