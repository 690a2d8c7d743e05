// Package clitest builds weir's commands for their tests and runs them as
// a user does, outside go test's process (flags unparsed, package testing
// not initialised), and holds the small helpers those tests and the REST
// API's share: a strict JSON decoder and a GET with a bearer token.
package clitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/weirflow/weir/workflowfile"
)

// Binary is a command of this module built on first use, with -race when
// the tests run with it. A test package holds one in a variable and calls
// Cleanup from its TestMain.
type Binary struct {
	name string
	pkg  string // the command's package directory, relative to the test's
	once sync.Once
	dir  string
	path string
	err  error
}

// New returns the binary called name, built from the test's working
// directory (the command's package) on the first Path.
func New(name string) *Binary { return &Binary{name: name, pkg: "."} }

// NewFrom returns the binary called name, built from the package in
// directory pkg (relative to the test's working directory, such as
// "../cmd/weir") on the first Path: for the tests of another package
// that run a command.
func NewFrom(name, pkg string) *Binary { return &Binary{name: name, pkg: pkg} }

// Path builds the binary once and returns its path; a failed build fails
// the test.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", b.name+"-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.dir = dir
		b.path = filepath.Join(dir, b.name)
		if runtime.GOOS == "windows" {
			b.path += ".exe"
		}
		args := []string{"build"}
		if raceEnabled {
			args = append(args, "-race")
		}
		build := exec.Command("go", append(args, "-o", b.path, b.pkg)...)
		var out bytes.Buffer
		build.Stdout, build.Stderr = &out, &out
		if err := build.Run(); err != nil {
			b.err = fmt.Errorf("build %s: %v\n%s", b.name, err, out.String())
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Cleanup removes the built binary, if any.
func (b *Binary) Cleanup() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// Result is what one run of a binary did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs the binary with args in dir, with env added to the environment
// (WEIR_REDIS_URL, WEIR_REDIS_CLUSTER, WEIR_PARTITIONS and
// WEIR_ALLOW_UNSAFE_SERVER cleared unless env sets them), and returns its
// exit status and output. A binary that could not be started fails the test.
func (b *Binary) Run(t *testing.T, dir string, env []string, args ...string) Result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), b.Path(t), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "WEIR_REDIS_URL=", "WEIR_REDIS_CLUSTER=", "WEIR_PARTITIONS=", "WEIR_ALLOW_UNSAFE_SERVER="), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("%s %v: %v", b.name, args, err)
	}
	return r
}

// WantCode fails the test when r did not exit with code.
func (r Result) WantCode(t *testing.T, code int) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, code, r.Stdout, r.Stderr)
	}
}

// Strict decodes one JSON value into T, refusing unknown fields; anything
// else fails the test.
func Strict[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, b)
	}
	return v
}

// Get sends one request without a body (Authorization: Bearer token unless
// token is empty) on a connection of its own and returns the status and
// body.
func Get(t *testing.T, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// RecordTask returns the task called name of a workflow record, failing
// the test when it has none.
func RecordTask(t *testing.T, rec workflowfile.Record, name string) workflowfile.TaskRecord {
	t.Helper()
	for _, tr := range rec.Tasks {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("record has no task %q: %+v", name, rec)
	return workflowfile.TaskRecord{}
}

// Deref is *s, or "<nil>" for nil, for messages.
func Deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
