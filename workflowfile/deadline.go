package workflowfile

import (
	"fmt"
	"strings"
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
	if _, err := time.ParseDuration(strings.TrimPrefix(s, "-")); err != nil {
		return time.Time{}, 0, fmt.Errorf("%q is neither a duration after the submit (examples: 30m, 2h) nor an RFC 3339 time", s)
	}
	// a duration: positive, in the file's syntax
	d, err := parseDuration(s, 0)
	switch {
	case err != nil:
		return time.Time{}, 0, err
	case d == 0:
		return time.Time{}, 0, fmt.Errorf("%q would end the workflow at its submit: a deadline is a positive duration after the submit (examples: 30m, 2h) or an RFC 3339 time", s)
	}
	return time.Time{}, d, nil
}
