package redisstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
)

// validJobID reports whether id can name a job: a plain ID, "<wf>/<task>"
// or "<wf>/<task>/undo". Only such IDs reach a key.
func validJobID(id string) bool {
	wf, rest, ok := strings.Cut(id, "/")
	if !ok {
		if strings.IndexByte(id, '@') < 0 {
			return engine.ValidID(id) // no delivery's ID (weir.WebhookSuffix)
		}
		if w, hook := weir.WebhookOf(id); hook {
			return engine.ValidID(w)
		}
		return engine.ValidID(id)
	}
	task, undo, isUndo := strings.Cut(rest, "/")
	if isUndo && undo != "undo" {
		return false
	}
	return engine.ValidID(wf) && engine.ValidName(task)
}

func invalid(field, format string, args ...any) error {
	return &weir.ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

func tooLarge(field, format string, args ...any) error {
	return &weir.ValidationError{Field: field, Problem: fmt.Sprintf(format, args...), TooLarge: true}
}

func (pt *part) validateQueues(queues []string) error {
	if len(queues) == 0 {
		return invalid("queues", "name at least one queue")
	}
	for _, q := range queues {
		if !engine.ValidName(q) {
			return invalid("queues", "queue name %q must "+engine.NameRule, q)
		}
	}
	return nil
}

func (pt *part) validateBatch(field string, n int) error {
	if n < 1 || n > pt.cfg.Limits.MaxBatch {
		return invalid(field, "%d is outside [1, %d]", n, pt.cfg.Limits.MaxBatch)
	}
	return nil
}

func (pt *part) validateLease(d time.Duration) error {
	if d < time.Millisecond || d > pt.cfg.Limits.MaxLease || d%time.Millisecond != 0 {
		return invalid("lease", "%v must be whole milliseconds in [1ms, %v]", d, pt.cfg.Limits.MaxLease)
	}
	return nil
}

func (pt *part) validateClaim(p engine.ClaimParams) error {
	if err := pt.validateQueues(p.Queues); err != nil {
		return err
	}
	if err := pt.validateBatch("max", p.Max); err != nil {
		return err
	}
	if err := engine.ValidateWorkerID(p.WorkerID); err != nil {
		return err
	}
	return pt.validateLease(p.Lease)
}

func invalidQueue(name string) error {
	return invalid("queue", "queue name %q must "+engine.NameRule, name)
}
