package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/weirflow/weir/workflowfile"
)

// weirBin is the weir binary, built on first use by binary (with -race
// when the tests run with it); fuzz workers and tests that do not run the
// binary never build it.
var (
	weirBin    string
	buildFlags []string
	buildOnce  sync.Once
	buildErr   error
	binDir     string
)

// binary returns the path of the weir binary, building it once.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "weir-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		weirBin = filepath.Join(dir, "weir")
		if runtime.GOOS == "windows" {
			weirBin += ".exe"
		}
		build := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", weirBin, ".")...)
		var out bytes.Buffer
		build.Stdout, build.Stderr = &out, &out
		if err := build.Run(); err != nil {
			buildErr = fmt.Errorf("build weir: %v\n%s", err, out.String())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return weirBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// result is what one run of the binary did.
type result struct {
	code           int
	stdout, stderr string
}

// weir runs the binary with args in dir (the repository root when empty),
// with env added to the environment (WEIR_REDIS_URL cleared unless env sets
// it), and returns its exit status and output.
func weir(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary(t), args...)
	cmd.Dir = dir
	if dir == "" {
		cmd.Dir = repoRoot(t)
	}
	cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=")
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("weir %v: %v", args, err)
	}
	return r
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// wantCode fails the test when r did not exit with code.
func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// decodeRecord decodes a --json workflow record strictly.
func decodeRecord(t *testing.T, r result) workflowfile.Record {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	var rec workflowfile.Record
	if err := dec.Decode(&rec); err != nil {
		t.Fatalf("decode the record: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on stdout:\n%s", r.stdout)
	}
	return rec
}

func recordTask(t *testing.T, rec workflowfile.Record, name string) workflowfile.TaskRecord {
	t.Helper()
	for _, tr := range rec.Tasks {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("record has no task %q: %+v", name, rec)
	return workflowfile.TaskRecord{}
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

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// strict decodes a JSON body into T, refusing unknown fields.
func strict[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, b)
	}
	return v
}

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
