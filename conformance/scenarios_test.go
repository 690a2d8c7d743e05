package conformance

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestScenarioCopyIsCurrent: the embedded copy of the golden scenarios is
// spec/testdata/*.txt (run `go generate ./conformance` after changing
// those).
func TestScenarioCopyIsCurrent(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "spec", "testdata", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios in spec/testdata (%v)", err)
	}
	want := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Base(p)] = string(b)
	}
	got := map[string]string{}
	copies, _ := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	for _, p := range copies {
		b, err := scenarioFS.ReadFile("testdata/scenarios/" + filepath.Base(p))
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.Base(p)] = string(b)
	}
	if !reflect.DeepEqual(got, want) {
		for n := range want {
			if got[n] != want[n] {
				t.Errorf("%s differs or is missing in the copy", n)
			}
		}
		for n := range got {
			if _, ok := want[n]; !ok {
				t.Errorf("%s is in the copy only", n)
			}
		}
		t.Fatal("testdata/scenarios is not a copy of spec/testdata/*.txt: run go generate ./conformance")
	}
	sc, err := embeddedScenarios()
	if err != nil || len(sc) != len(want) {
		t.Fatalf("embedded scenarios: %d parsed (%v), want %d", len(sc), err, len(want))
	}
}
