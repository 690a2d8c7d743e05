// Package spec makes the machine-readable parts of weir's specification
// available to Go programs: the REST API's OpenAPI document (openapi.yaml)
// and the golden scenario files (testdata/*.txt). They are embedded from
// this directory, so a binary built anywhere carries the same bytes the
// prose of the spec refers to; this directory is their only copy.
//
// The package imports nothing of weir: the engine, its tests, the REST
// handler and the conformance suite depend on it, never the other way.
package spec

import (
	"embed"
	"io/fs"
)

// OpenAPI is the OpenAPI 3 document of weir's REST API, the bytes of
// spec/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI string

//go:embed testdata/*.txt
var scenarioFS embed.FS

// Scenarios returns the golden scenario files, spec/testdata/*.txt, as a
// read-only file system with each file at its root ("chain.txt"). The
// format is defined in spec/testdata/README.md; package engine/scenario
// parses and runs them.
func Scenarios() fs.FS {
	sub, err := fs.Sub(scenarioFS, "testdata")
	if err != nil {
		// fs.Sub fails only on an invalid directory name.
		panic(err)
	}
	return sub
}
