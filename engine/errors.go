package engine

import (
	"fmt"

	"github.com/weirflow/weir"
)

func invalid(task, field, format string, args ...any) error {
	return &weir.ValidationError{Task: task, Field: field, Problem: fmt.Sprintf(format, args...)}
}

func tooLarge(task, field, format string, args ...any) error {
	return &weir.ValidationError{Task: task, Field: field, Problem: fmt.Sprintf(format, args...), TooLarge: true}
}

// wrap adds the ID it concerns to a sentinel, keeping errors.Is working.
func wrap(err *weir.Error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", err, fmt.Sprintf(format, args...))
}
