package redisstore

import (
	"strings"
	"testing"
)

// TestFrameStateIsEmptied: as a function, a call's frame starts empty
// whatever the last call left (begin empties the table CALL in place
// instead of making a new one), read_clock and qstate read the seq hash and
// a queue's state in RESP3 (HGETALL's map) with the same values HSET wrote,
// and leave the call in RESP2 (an absent field reads false, not nil).
func TestFrameStateIsEmptied(t *testing.T) {
	if !realRedis() {
		t.Skip("functions: set WEIR_REDIS_URL")
	}
	rdb := privateRedis(t)
	probe := strings.ReplaceAll(library.src, library.name, "weirframe") + `
redis.register_function{function_name = 'weirframe_set', callback = function(KEYS, ARGV)
  begin(KEYS, ARGV)
  read_clock()
  bag('probe')[1] = 1
  qstate('q1')
  return 1
end}
redis.register_function{function_name = 'weirframe_get', callback = function(KEYS, ARGV)
  begin(KEYS, ARGV)
  local n = 0
  for _ in pairs(CALL) do n = n + 1 end
  read_clock()
  local absent = redis.call('HGET', KEYS[1] .. 'seq3', 'absent') == false
  local s = qstate('q1')
  return {n, SEQ.now or '', SEQ.lease or '', SEQ.gc or '', absent and 1 or 0, s.w or '', s.lt or '', s.p and 1 or 0,
    redis.call('HGET', KEYS[1] .. 'q:q1:s', 'absent') == false and 1 or 0}
end}
`
	if err := rdb.FunctionLoad(bg, probe).Err(); err != nil {
		t.Fatal(err)
	}
	p := "weir:{frame:0}:"
	if err := rdb.HSet(bg, p+"seq3", "now", "1733520000123", "lease", "7", "gc", "none").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(bg, p+"q:q1:s", "w", "0", "lt", "5").Err(); err != nil {
		t.Fatal(err)
	}
	keys := []string{p}
	if err := rdb.FCall(bg, "weirframe_set", keys, "", "0", "1000").Err(); err != nil {
		t.Fatal(err)
	}
	got, err := rdb.FCall(bg, "weirframe_get", keys, "", "0", "1000").Slice()
	if err != nil {
		t.Fatal(err)
	}
	want := []any{int64(0), "1733520000123", "7", "none", int64(1), "0", "5", int64(0), int64(1)}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %v, want %v (at %d)", got, want, i)
			break
		}
	}
}
