package dashboard_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test ends its browser, servers and the goroutines reading the
// browser's events.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
