//go:build unix

package faults

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A torn AOF tail and redis-server 7.0's loader.
//
// A script's writes reach the AOF as one MULTI ... EXEC block. A kill (or
// a machine crash, or the rollback tests' copy of a file being written)
// can leave the file ending inside a command of such a block. redis-server
// 7.0.15 (aof-load-truncated yes, the default) then does not apply the
// block, but truncates the file after the block's last whole command, not
// before its MULTI, and appends its new writes after it. At the next load
// that MULTI swallows the next block's MULTI, and its EXEC applies the
// torn block's first commands too (the log says "MULTI calls can not be
// nested"): a part of a transition that never happened, on top of the
// same transition run again when its client resent it. For weir that is a
// workflow's rem counted down twice, tasks popped from a ready set while
// their state bytes (written last, by finalize) still say queued. Valkey
// fixed the loader in 2026 (valkey-io/valkey#4342); redis-check-aof --fix
// already cuts such a tail before its MULTI.
//
// RepairAOFTail does what a fixed loader does, before the server starts:
// it cuts the last file of the AOF back to the end of its last whole
// top-level command or EXEC, so that a torn block goes entirely.

// RepairAOFTail cuts the last file of the multi-part AOF in dir (Redis 7's
// appenddirname) back to the end of the last transition it holds whole,
// when it ends in a torn command or a MULTI block without its EXEC. It
// returns a description of the cut, "" when the file was sound (or there
// is no AOF), and an error when the file is malformed other than by a torn
// end (redis-server refuses to load it; it is left as it is).
func RepairAOFTail(dir string) (string, error) {
	manifests, err := filepath.Glob(filepath.Join(dir, "*.manifest"))
	if err != nil || len(manifests) == 0 {
		return "", err
	}
	last, err := lastAOFFile(manifests[0])
	if err != nil || last == "" {
		return "", err
	}
	path := filepath.Join(dir, last)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	good, inMulti, err := aofWholePrefix(b)
	if err != nil {
		return "", fmt.Errorf("faults: %s: %w", last, err)
	}
	if good == len(b) {
		return "", nil
	}
	if err := os.Truncate(path, int64(good)); err != nil {
		return "", err
	}
	where := "a torn command"
	if inMulti {
		where = "a MULTI block without its EXEC"
	}
	return fmt.Sprintf("%s: cut %d bytes at offset %d (%s)", last, len(b)-good, good, where), nil
}

// lastAOFFile returns the name of the last file a multi-part AOF manifest
// lists when it is an INCR file (the one redis-server appends to and may
// truncate), else "".
func lastAOFFile(manifest string) (string, error) {
	f, err := os.Open(manifest)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	var name, typ string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "file <name> seq <n> type <b|h|i>"
		fs := strings.Fields(sc.Text())
		for i := 0; i+1 < len(fs); i += 2 {
			switch fs[i] {
			case "file":
				name = fs[i+1]
			case "type":
				typ = fs[i+1]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if typ != "i" {
		return "", nil
	}
	return name, nil
}

// errShort is a command cut off by the end of the data.
var errShort = errors.New("short")

// aofWholePrefix returns the length of the longest prefix of AOF data b
// that ends after a whole top-level command, a whole EXEC or an annotation
// line ("#..."), and whether b ends inside a MULTI block; an error when b
// is malformed before its end.
func aofWholePrefix(b []byte) (good int, inMulti bool, err error) {
	pos := 0
	for pos < len(b) {
		if b[pos] == '#' {
			nl := bytes.IndexByte(b[pos:], '\n')
			if nl < 0 {
				return good, inMulti, nil
			}
			pos += nl + 1
			if !inMulti {
				good = pos
			}
			continue
		}
		next, name, err := aofCommand(b, pos)
		if errors.Is(err, errShort) {
			return good, inMulti, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("malformed AOF at offset %d: %w", pos, err)
		}
		pos = next
		switch strings.ToUpper(name) {
		case "MULTI":
			inMulti = true
		case "EXEC":
			inMulti = false
			good = pos
		default:
			if !inMulti {
				good = pos
			}
		}
	}
	return good, inMulti, nil
}

// aofCommand reads the RESP command at b[pos:] ("*<n>\r\n" then n bulk
// strings) and returns the offset after it and its first argument.
func aofCommand(b []byte, pos int) (next int, name string, err error) {
	n, pos, err := respLen(b, pos, '*')
	if err != nil {
		return 0, "", err
	}
	for i := 0; i < n; i++ {
		var l int
		if l, pos, err = respLen(b, pos, '$'); err != nil {
			return 0, "", err
		}
		if pos+l+2 > len(b) {
			return 0, "", errShort
		}
		if b[pos+l] != '\r' || b[pos+l+1] != '\n' {
			return 0, "", fmt.Errorf("bulk string of %d bytes not ended by CRLF", l)
		}
		if i == 0 {
			name = string(b[pos : pos+l])
		}
		pos += l + 2
	}
	return pos, name, nil
}

// respLen reads "<kind><decimal>\r\n" at b[pos:].
func respLen(b []byte, pos int, kind byte) (int, int, error) {
	if pos >= len(b) {
		return 0, 0, errShort
	}
	if b[pos] != kind {
		return 0, 0, fmt.Errorf("want %q, found %q", kind, b[pos])
	}
	nl := bytes.IndexByte(b[pos:], '\n')
	if nl < 0 {
		return 0, 0, errShort
	}
	line := b[pos+1 : pos+nl]
	if len(line) == 0 || line[len(line)-1] != '\r' {
		return 0, 0, fmt.Errorf("length line %q not ended by CRLF", line)
	}
	n, err := strconv.Atoi(string(line[:len(line)-1]))
	if err != nil || n < 0 {
		return 0, 0, fmt.Errorf("length %q", line[:len(line)-1])
	}
	return n, pos + nl + 1, nil
}

// TearAOF cuts the last INCR file of the AOF directory dir (a copy from
// CopyAOF) down to a multiple of page bytes, as a machine crash leaves a
// file of which only whole pages reached the disk: usually inside a
// command, often inside a script's block. Returns the bytes cut.
func TearAOF(dir string, page int64) (int64, error) {
	manifests, err := filepath.Glob(filepath.Join(dir, "*.manifest"))
	if err != nil || len(manifests) == 0 {
		return 0, err
	}
	last, err := lastAOFFile(manifests[0])
	if err != nil || last == "" {
		return 0, err
	}
	path := filepath.Join(dir, last)
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	keep := fi.Size() / page * page
	return fi.Size() - keep, os.Truncate(path, keep)
}
