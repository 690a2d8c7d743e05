package spec_test

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/weirflow/weir/spec"
)

// The embedded files: the OpenAPI document's version line and one golden
// scenario's opening comment (package engine/scenario parses them).
func Example() {
	first, _, _ := strings.Cut(spec.OpenAPI, "\n")
	fmt.Println(first)

	b, err := fs.ReadFile(spec.Scenarios(), "chain.txt")
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.HasPrefix(string(b), "#"))
	// Output:
	// openapi: 3.0.3
	// true
}
