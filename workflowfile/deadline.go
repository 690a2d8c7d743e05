package workflowfile

import (
	"fmt"
	"time"
)

// parseDeadline parses a workflow's deadline (spec/workflow-file.md): a
// duration after the submit, by the store's clock ("2h": DeadlineIn), or
// an RFC 3339 time (Deadline); "" is none.
func parseDeadline(s string) (time.Time, time.Duration, error) {
	if s == "" {
		return time.Time{}, 0, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), 0, nil
	}
	d, err := parseDuration(s, 0)
	if err != nil || d == 0 {
		return time.Time{}, 0, fmt.Errorf("%q is neither a duration after the submit (examples: 30m, 2h) nor an RFC 3339 time", s)
	}
	return time.Time{}, d, nil
}
