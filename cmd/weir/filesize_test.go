package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/weirflow/weir/workflowfile"
)

// weir submit, run, enqueue and schedule add refuse a file over 16 MiB
// (and an endless one, /dev/zero), and enqueue a standard input over it,
// with status 2 and an error naming the file and the limit, having read
// no more than the limit.
func TestFileOverTheLimit(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, workflowfile.MaxFileSize+1); err != nil { // sparse
		t.Fatal(err)
	}
	files := []string{big}
	if _, err := os.Stat("/dev/zero"); err == nil {
		files = append(files, "/dev/zero")
	}
	const limit = "larger than 16777216 bytes (16 MiB), the limit of a workflow file or job document"
	for _, f := range files {
		for _, args := range [][]string{
			{"submit", "--redis", url, f},
			{"run", f},
			{"enqueue", "--redis", url, f},
			{"schedule", "add", "s", "--redis", url, "--every", "1m", "--workflow", f},
		} {
			r := weir(t, dir, nil, args...)
			if r.Code != exitUsage || !strings.Contains(r.Stderr, f+": "+limit) {
				t.Errorf("weir %s: status %d, stderr %q; want 2 and %q", strings.Join(args, " "), r.Code, r.Stderr, f+": "+limit)
			}
		}
	}

	in, err := os.Open(big)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd := exec.CommandContext(t.Context(), binary(t), "enqueue", "--redis", url, "-")
	cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=")
	cmd.Stdin = in
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err = cmd.Run()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(errb.String(), "stdin: "+limit) {
		t.Errorf("weir enqueue - of %d bytes: %v, stderr %q; want 2 and %q", workflowfile.MaxFileSize+1, err, errb.String(), "stdin: "+limit)
	}
}
