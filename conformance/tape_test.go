package conformance

import (
	"reflect"
	"testing"
)

func TestParseTape(t *testing.T) {
	got, v, err := parseTape("# what it checks\n0 10 -1\n\n  3\n# more\n")
	if err != nil || v != 1 || !reflect.DeepEqual(got, []int{0, 10, -1, 3}) {
		t.Fatalf("parseTape = %v, version %d, %v; want version 1", got, v, err)
	}
	got, v, err = parseTape("# a newer tape\nv2 0 10\n-1\n")
	if err != nil || v != 2 || !reflect.DeepEqual(got, []int{0, 10, -1}) {
		t.Fatalf("parseTape of a v2 tape = %v, version %d, %v", got, v, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "1 x 2", "v99 1 2", "v2", "v2 v2 1", "1 v2"} {
		if _, _, err := parseTape(bad); err == nil {
			t.Errorf("parseTape(%q) accepted", bad)
		}
	}
	if s := formatTape([]int{0, 10, -1, 3}); s != "v13 0 10 -1 3" {
		t.Errorf("formatTape = %q", s)
	}
	if got, v, err := parseTape(formatTape([]int{4, -2})); err != nil || v != tapeVersion || !reflect.DeepEqual(got, []int{4, -2}) {
		t.Errorf("a formatted tape reads back as %v, version %d, %v", got, v, err)
	}
}
