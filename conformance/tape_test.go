package conformance

import (
	"reflect"
	"testing"
)

func TestParseTape(t *testing.T) {
	got, err := parseTape("# what it checks\n0 10 -1\n\n  3\n# more\n")
	if err != nil || !reflect.DeepEqual(got, []int{0, 10, -1, 3}) {
		t.Fatalf("parseTape = %v, %v", got, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "1 x 2"} {
		if _, err := parseTape(bad); err == nil {
			t.Errorf("parseTape(%q) accepted", bad)
		}
	}
	if s := formatTape([]int{0, 10, -1, 3}); s != "0 10 -1 3" {
		t.Errorf("formatTape = %q", s)
	}
}
