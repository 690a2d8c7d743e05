package main

import (
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/clitest"
	"github.com/weirflow/weir/workflowfile"
)

// weir ls --name (a prefix) and --label k=v (every one) filter; ls and
// status print a workflow's name and labels, --json too; a bad --label is
// a usage error naming it, and a file's bad name is refused.
func TestLsNameAndLabels(t *testing.T) {
	t.Parallel()
	forServers(t, func(t *testing.T, e *listEnv) {
		e.cli(t, "queue", "pause", "default").WantCode(t, 0)
		for _, f := range []string{
			"id: w1\nname: nightly-report\nlabels: {team: data, env: prod}\n",
			"id: w2\nname: nightly-backup\nlabels: {team: ops}\n",
			"id: w3\n",
		} {
			e.cli(t, "submit", writeFile(t, "w.yaml", f+"tasks:\n  - name: a\n    run: echo a\n")).WantCode(t, 0)
		}
		r := e.cli(t, "ls", "--name", "nightly", "--label", "team=data")
		r.WantCode(t, 0)
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID  NAME") || !strings.HasPrefix(lines[1], "w1  nightly-report  running") || !strings.HasSuffix(lines[1], "env=prod,team=data") {
			t.Fatalf("ls --name nightly --label team=data:\n%s", r.Stdout)
		}
		r = e.cli(t, "ls", "--name", "nightly", "--json")
		r.WantCode(t, 0)
		recs := clitest.Strict[[]workflowfile.Record](t, []byte(r.Stdout))
		if len(recs) != 2 || recs[0].Name == nil || recs[1].Name == nil || !strings.HasPrefix(*recs[0].Name, "nightly") || !strings.HasPrefix(*recs[1].Name, "nightly") {
			t.Fatalf("ls --name nightly --json:\n%s", r.Stdout)
		}
		r = e.cli(t, "ls", "--prefix", "w", "--name", "nightly-b")
		r.WantCode(t, 0)
		if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "w2  nightly-backup") {
			t.Fatalf("ls --prefix w --name nightly-b:\n%s", r.Stdout)
		}
		r = e.cli(t, "ls", "--prefix", "w3")
		r.WantCode(t, 0)
		if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "w3  -") {
			t.Fatalf("ls --prefix w3:\n%s", r.Stdout)
		}
		r = e.cli(t, "status", "w1")
		r.WantCode(t, 0)
		if !strings.Contains(r.Stdout, "\n  name nightly-report\n  labels env=prod,team=data\n") {
			t.Fatalf("status w1:\n%s", r.Stdout)
		}
		for _, args := range [][]string{
			{"ls", "--label", "team"}, {"ls", "--label", "bad key=v"}, {"ls", "--name", strings.Repeat("n", 129)},
			{"ls", "--label", "a=1", "--label", "a=2"}, {"ls", "--prefix", "w/a"},
		} {
			r := e.cli(t, args...)
			if r.Code != exitUsage || r.Stdout != "" || !strings.Contains(r.Stderr, args[1]) {
				t.Errorf("%q: status %d, stderr %q, want %d naming %s", args, r.Code, r.Stderr, exitUsage, args[1])
			}
		}
		r = e.cli(t, "submit", writeFile(t, "bad.yaml", "labels: {'bad key': v}\ntasks:\n  - name: a\n    run: echo a\n"))
		if r.Code == 0 || !strings.Contains(r.Stderr, `label key "bad key" must match`) {
			t.Errorf("a bad label in a file: status %d, stderr %q", r.Code, r.Stderr)
		}
	})
}
