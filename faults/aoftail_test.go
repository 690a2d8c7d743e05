//go:build unix

package faults

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// resp encodes commands as an AOF holds them.
func resp(cmds ...string) string {
	var b strings.Builder
	for _, c := range cmds {
		args := strings.Fields(c)
		b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
		for _, a := range args {
			b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
		}
	}
	return b.String()
}

func TestAOFWholePrefix(t *testing.T) {
	head := resp("SELECT 0", "SET a 1")
	block := resp("MULTI", "INCRBY rem -1", "SETRANGE s 3 c", "EXEC")
	for _, c := range []struct {
		name    string
		data    string
		want    int
		inMulti bool
	}{
		{"whole", head + block, len(head + block), false},
		{"torn top-level command", head + resp("SET b 2")[:9], len(head), false},
		{"torn inside a block", head + block[:len(resp("MULTI", "INCRBY rem -1"))+12], len(head), true},
		{"block without its EXEC", head + resp("MULTI", "INCRBY rem -1"), len(head), true},
		{"torn EXEC", head + block[:len(block)-3], len(head), true},
		{"torn length line", head + "*3\r", len(head), false},
		{"annotation", head + "#TS:1796443963\r\n" + block, len(head + "#TS:1796443963\r\n" + block), false},
		{"empty", "", 0, false},
	} {
		got, inMulti, err := aofWholePrefix([]byte(c.data))
		if err != nil || got != c.want || inMulti != c.inMulti {
			t.Errorf("%s: %d %v %v, want %d %v", c.name, got, inMulti, err, c.want, c.inMulti)
		}
	}
	if _, _, err := aofWholePrefix([]byte(head + "+OK\r\n" + block)); err == nil {
		t.Error("a malformed AOF was taken as torn")
	}
}

func TestRepairAOFTail(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("appendonly.aof.manifest", "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n")
	head := resp("SET a 1")
	block := resp("MULTI", "INCRBY rem -1", "SETRANGE s 3 c", "EXEC")
	write("appendonly.aof.1.incr.aof", head+block[:len(block)-10])
	cut, err := RepairAOFTail(dir)
	if err != nil || !strings.Contains(cut, "without its EXEC") {
		t.Fatalf("repair: %q %v", cut, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "appendonly.aof.1.incr.aof"))
	if string(b) != head {
		t.Fatalf("after the repair the file holds %q, want %q", b, head)
	}
	if cut, err := RepairAOFTail(dir); cut != "" || err != nil {
		t.Fatalf("a sound file was cut: %q %v", cut, err)
	}
	if cut, err := RepairAOFTail(t.TempDir()); cut != "" || err != nil {
		t.Fatalf("no AOF: %q %v", cut, err)
	}
	// a copy of which only whole pages were kept, then repaired
	var long strings.Builder
	for long.Len() < 10000 {
		long.WriteString(block)
	}
	write("appendonly.aof.1.incr.aof", long.String())
	if n, err := TearAOF(dir, 4096); err != nil || n != int64(long.Len()-8192) {
		t.Fatalf("tear: %d %v, want %d", n, err, long.Len()-8192)
	}
	if cut, err := RepairAOFTail(dir); err != nil || cut == "" {
		t.Fatalf("repair of a torn copy: %q %v", cut, err)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "appendonly.aof.1.incr.aof"))
	if len(b)%len(block) != 0 || len(b) > 8192 || len(b) < 8192-len(block) {
		t.Fatalf("after tear and repair %d bytes, want whole blocks (%d each) up to 8192", len(b), len(block))
	}
}
