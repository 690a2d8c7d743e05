package redisstore

import (
	"github.com/weirflow/weir"
	"testing"

	"github.com/weirflow/weir/engine"
)

// TestBytesArg: a one-byte value (a handler's result of no value, an empty
// msgpack map) is sent as the same byte without allocating; longer ones as
// themselves, empty ones as "".
func TestBytesArg(t *testing.T) {
	for b := range 256 {
		v := []byte{byte(b)}
		if got, ok := bytesArg(v).(string); !ok || got != string(v) {
			t.Fatalf("bytesArg(%q) = %#v", v, bytesArg(v))
		}
		if n := testing.AllocsPerRun(10, func() { _ = bytesArg(v) }); n != 0 {
			t.Fatalf("bytesArg(%q): %v allocations", v, n)
		}
	}
	if got := bytesArg(nil); got != "" {
		t.Errorf("bytesArg(nil) = %#v", got)
	}
	if got, ok := bytesArg([]byte("ab")).([]byte); !ok || string(got) != "ab" {
		t.Errorf("bytesArg(ab) = %#v", got)
	}
}

// TestAppendClaimed: the first batch is kept as it is (not copied), later
// ones are appended.
func TestAppendClaimed(t *testing.T) {
	a := []engine.Claimed{{Job: weir.Job{ID: "a"}}}
	got := appendClaimed(nil, a)
	if &got[0] != &a[0] {
		t.Error("first batch copied")
	}
	got = appendClaimed(got, []engine.Claimed{{Job: weir.Job{ID: "b"}}})
	if len(got) != 2 || got[0].Job.ID != "a" || got[1].Job.ID != "b" {
		t.Errorf("appended: %+v", got)
	}
	if got := appendClaimed(nil, nil); got != nil {
		t.Errorf("nothing claimed: %#v", got)
	}
}
