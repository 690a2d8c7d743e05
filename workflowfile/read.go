package workflowfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileSize is the most bytes a workflow file or a job document may
// have when read from a file or a stream (Load, ReadFile, Read): far more
// than any plan within the store's limits needs, and little enough to
// read whole. The REST API bounds a request body by its own --max-body.
const MaxFileSize = 16 << 20

// ReadFile reads the file at path whole, at most MaxFileSize bytes: a
// larger file (or an endless one, such as /dev/zero) is refused with an
// *Error naming it and the limit, after reading no more than the limit
// and one byte. A file that cannot be read is an *Error too.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, readError(path, err)
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxFileSize {
		return nil, tooBig(path)
	}
	return Read(path, f)
}

// Read reads r whole, at most MaxFileSize bytes, as ReadFile does a file;
// name names it in errors ("stdin").
func Read(name string, r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, readError(name, err)
	}
	if len(b) > MaxFileSize {
		return nil, tooBig(name)
	}
	return b, nil
}

func tooBig(name string) error {
	return &Error{File: name, Problem: fmt.Sprintf("larger than %d bytes (16 MiB), the limit of a workflow file or job document", MaxFileSize)}
}

func readError(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &Error{File: name, Problem: "cannot read the file: " + err.Error()}
}
