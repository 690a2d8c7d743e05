package dashboard_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Every test ends its browser, servers, processes and the goroutines
// reading the browser's events; the weir binary a test built is removed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		weirBinary.Cleanup()
		os.Exit(code)
	}))
}
