package workflowfile

import (
	"fmt"
	"github.com/weirflow/weir"
	"time"

	"go.yaml.in/yaml/v3"
)

// fileRetry is a task's or a job's retry policy as written: retries,
// max_expiries, backoff and timeout.
type fileRetry struct {
	Retries int
	// MaxExpiries is max_expiries when given (nil: the engine's default).
	MaxExpiries *int
	Backoff     string
	Timeout     string
}

// retryField decodes field k (value v) into r when it is one of the retry
// policy's, and says whether it was.
func (d *fileDecoder) retryField(w where, k string, v *yaml.Node, r *fileRetry) (bool, error) {
	var err error
	switch k {
	case "retries":
		r.Retries, err = d.int(w, v)
	case "max_expiries":
		var x int
		if x, err = d.int(w, v); err == nil {
			r.MaxExpiries = &x
		}
	case "backoff":
		r.Backoff, err = d.optStr(w, v)
	case "timeout":
		r.Timeout, err = d.optStr(w, v)
	default:
		return false, nil
	}
	return true, err
}

// retryPolicy is a checked fileRetry, as engine specs take it.
type retryPolicy struct {
	maxAttempts, maxExpiries int
	backoff, timeout         time.Duration
}

// resolve checks r against limits; a problem names its field.
func (r fileRetry) resolve(limits weir.Limits) (p retryPolicy, field string, err error) {
	if r.Retries < 0 || r.Retries > limits.MaxAttempts-1 {
		return p, "retries", fmt.Errorf("%d is outside [0, %d]", r.Retries, limits.MaxAttempts-1)
	}
	p.maxAttempts = r.Retries + 1
	if x := r.MaxExpiries; x != nil {
		if *x < 0 || *x > limits.MaxAttempts {
			return p, "max_expiries", fmt.Errorf("%d is outside [0, %d]", *x, limits.MaxAttempts)
		}
		// in a file 0 means none; the engine's 0 is its default
		p.maxExpiries = *x
		if *x == 0 {
			p.maxExpiries = weir.NoExpiries
		}
	}
	if p.backoff, err = parseDuration(r.Backoff, limits.MaxBackoff); err != nil {
		return p, "backoff", err
	}
	if p.timeout, err = parseDuration(r.Timeout, 0); err != nil {
		return p, "timeout", err
	}
	return p, "", nil
}
