package spec_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weirflow/weir/spec"
)

// TestScenarioIndex checks spec/testdata/README.md indexes every embedded
// scenario file, and only those, and that the embedded files are the
// directory's *.txt files.
func TestScenarioIndex(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("testdata", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	indexed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9_]+\\.txt)` \\|").FindAllStringSubmatch(string(readme), -1) {
		indexed[m[1]] = true
	}
	names, err := fs.Glob(spec.Scenarios(), "*.txt")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded scenarios (%v)", err)
	}
	onDisk, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if len(onDisk) != len(names) {
		t.Errorf("%d scenario files embedded, %d in testdata", len(names), len(onDisk))
	}
	for _, n := range names {
		if !indexed[n] {
			t.Errorf("%s is not in the index of spec/testdata/README.md", n)
		}
		delete(indexed, n)
	}
	for name := range indexed {
		t.Errorf("spec/testdata/README.md indexes %s, which does not exist", name)
	}
}

// TestOpenAPI checks the embedded document is an OpenAPI 3 document.
func TestOpenAPI(t *testing.T) {
	if !strings.HasPrefix(spec.OpenAPI, "openapi: 3") {
		t.Fatalf("spec.OpenAPI starts %.40q", spec.OpenAPI)
	}
}
