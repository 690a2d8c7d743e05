package main

import (
	"testing"
	"time"

	"github.com/weirflow/weir/examples/internal/exampletest"
)

// Tenant small's one report starts in the first claim batch, behind big's
// 20; the per-key limit keeps each tenant to one report at a time.
func TestTenantsFairAndLimited(t *testing.T) {
	const want = `small's report started in the first claim batch (4 slots): true
most reports of big running at once: 1
most reports of small running at once: 1
`
	exampletest.CheckOutput(t, time.Minute, want, run)
}
