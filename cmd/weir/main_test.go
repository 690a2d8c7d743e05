package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/clitest"
	"github.com/weirflow/weir/workflowfile"
)

// weirBinary is the weir binary, built on first use (with -race when the
// tests run with it); fuzz workers and tests that do not run the binary
// never build it.
var weirBinary = clitest.New("weir")

// binary returns the path of the weir binary, building it once.
func binary(t testing.TB) string { return weirBinary.Path(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	weirBinary.Cleanup()
	os.Exit(code)
}

// result is what one run of the binary did.
type result = clitest.Result

// weir runs the binary with args in dir (the repository root when empty),
// with env added to the environment (WEIR_REDIS_URL, WEIR_REDIS_CLUSTER,
// WEIR_PARTITIONS and WEIR_ALLOW_UNSAFE_SERVER cleared unless env sets
// them), and returns its exit status and output.
func weir(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	if dir == "" {
		dir = repoRoot(t)
	}
	return weirBinary.Run(t, dir, env, args...)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// decodeRecord decodes a --json workflow record strictly.
func decodeRecord(t *testing.T, r result) workflowfile.Record {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	dec.DisallowUnknownFields()
	var rec workflowfile.Record
	if err := dec.Decode(&rec); err != nil {
		t.Fatalf("decode the record: %v\nstdout:\n%s\nstderr:\n%s", err, r.Stdout, r.Stderr)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on stdout:\n%s", r.Stdout)
	}
	return rec
}

func recordTask(t *testing.T, rec workflowfile.Record, name string) workflowfile.TaskRecord {
	return clitest.RecordTask(t, rec, name)
}

// writeFile writes a workflow file named name in a new temporary directory
// and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func wantTask(t *testing.T, tr workflowfile.TaskRecord, state string, attempts int) {
	t.Helper()
	if tr.State != state || tr.Attempts != attempts {
		t.Errorf("task %s: state %s after %d attempts, want %s after %d (error %v)", tr.Name, tr.State, tr.Attempts, state, attempts, deref(tr.Error))
	}
}

func deref(s *string) string { return clitest.Deref(s) }

// strict decodes a JSON body into T, refusing unknown fields.
func strict[T any](t *testing.T, b []byte) T { return clitest.Strict[T](t, b) }

// TestBinaryLinksNoTesting: the weir binary links neither package testing
// nor rapid (the conformance suite, which needs both, is the command
// weir-conformance).
func TestBinaryLinksNoTesting(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "testing" || strings.HasPrefix(pkg, "pgregory.net/rapid") {
			t.Errorf("the weir binary links %s", pkg)
		}
	}
}
