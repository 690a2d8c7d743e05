package conformance

import (
	"context"
	"testing"
)

// TB is what the suite gives a NewStore constructor and what its checks
// report to: the part of testing.TB that both of the suite's runners
// provide (Run, under go test, hands over a *testing.T; RunReport its own
// runner). It is also a rapid.TB.
type TB interface {
	Helper()
	Name() string
	Log(args ...any)
	Logf(format string, args ...any)
	Error(args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Fail()
	FailNow()
	Failed() bool
	Skip(args ...any)
	Skipf(format string, args ...any)
	SkipNow()
	Cleanup(func())
	// Context is canceled when the test ends or the run is interrupted.
	Context() context.Context
}

// suiteT is a TB that also runs subtests: *testing.T (through goT) or the
// report runner's node.
type suiteT interface {
	TB
	Run(name string, f func(suiteT)) bool
	Parallel()
}

// goT runs the suite under go test.
type goT struct{ *testing.T }

func (t goT) Run(name string, f func(suiteT)) bool {
	return t.T.Run(name, func(t *testing.T) { f(goT{t}) })
}
