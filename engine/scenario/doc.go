// Package scenario reads and runs weir's golden scenario files: the
// executable examples of the spec, kept in spec/testdata/*.txt. The format is
// defined in spec/testdata/README.md.
//
// A scenario is a list of operations on a store, each with the reply it must
// give, and expectations about the state after it. Parse reads a file; Run
// replays it against a Target and returns the first difference between what
// the file says and what the target did, as a *Mismatch that names the file
// and line. A Target is a store and the clock it reads, which the runner
// sets to each step's time. The reference target is the model
// (NewModelTarget: an engine.Namespace behind memstore); the conformance
// suite replays the same files against every store.
//
// Rewrite replays a scenario taking the target's replies where they
// differ from the file's '>' lines, and returns the file rewritten with
// them: `go test ./engine/scenario -run TestGolden -rewrite` rewrites the
// files of spec/testdata from the Model's replies (review the diff).
//
// Each command has a file of its own (submit.go, claim.go, finish.go ...,
// expect.go) holding its parsing, its run and the rendering of its reply;
// parse.go, lex.go and run.go hold what the commands share.
//
// The package does not import testing: callers turn the returned errors into
// test failures, CLI output or reports.
//
// Stability: internal to weir's conformance suite and weir-conformance;
// its API may change in any release (the file format is defined in
// spec/testdata/README.md).
package scenario
