package workflowfile

import (
	"errors"
	"github.com/weirflow/weir"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file over MaxFileSize, and an endless one, are refused naming the file
// and the limit, without reading more than the limit; one of the limit is
// read whole.
func TestReadBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sparse := func(name string, size int64) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, size); err != nil { // sparse: no blocks written
			t.Fatal(err)
		}
		return path
	}
	// (Each read of 16 MiB takes seconds under the race detector: the
	// cases read as few as they can.)
	over := sparse("over.yaml", MaxFileSize+1)
	huge := sparse("huge.yaml", 200<<20)
	wantTooBig := func(what string, err error, name string) {
		t.Helper()
		var fe *Error
		if !errors.As(err, &fe) || fe.File != name || !strings.Contains(fe.Problem, "larger than 16777216 bytes (16 MiB)") ||
			!strings.HasPrefix(err.Error(), name+": ") {
			t.Errorf("%s %s: %v, want an *Error naming it and the limit", what, name, err)
		}
	}
	for _, path := range []string{over, huge} {
		_, err := ReadFile(path)
		wantTooBig("ReadFile", err, path)
		_, err = Load(path, weir.Limits{})
		wantTooBig("Load", err, path)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err = Load("/dev/zero", weir.Limits{})
		wantTooBig("Load", err, "/dev/zero")
	}
	// A stream: no more than the limit and a byte is read.
	endless := &countingReader{}
	_, err := Read("stdin", endless)
	wantTooBig("Read", err, "stdin")
	if endless.n > MaxFileSize+1 {
		t.Errorf("Read read %d bytes of an endless stream, more than the limit and one", endless.n)
	}
	// The limit itself is read.
	if b, err := ReadFile(sparse("limit.yaml", MaxFileSize)); err != nil || len(b) != MaxFileSize {
		t.Errorf("a file of the limit: %d bytes, %v", len(b), err)
	}
	// A file that cannot be read is an *Error as before.
	var fe *Error
	if _, err := ReadFile(filepath.Join(dir, "nope")); !errors.As(err, &fe) || !strings.Contains(fe.Problem, "cannot read the file") {
		t.Errorf("a missing file: %v", err)
	}
}

// countingReader is an endless stream that counts what is read (its bytes
// are whatever the reader's buffer held).
type countingReader struct{ n int }

func (r *countingReader) Read(p []byte) (int, error) {
	r.n += len(p)
	return len(p), nil
}
