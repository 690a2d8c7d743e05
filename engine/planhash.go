package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"github.com/weirflow/weir"
	"time"
)

// PlanHash is the byte-exact fingerprint of a plan: the hex SHA-256 of its
// canonical encoding (spec/states.md, "Plan hash"). Two plans hash equal only
// if every field, byte and order is equal; MaxAttempts 0 and 1 and Backoff 0
// and DefaultBackoff count as equal, since they mean the same.
func PlanHash(p Plan) string {
	h := sha256.New()
	var buf []byte
	str := func(s string) {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	bytes := func(b []byte) {
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		buf = append(buf, b...)
	}
	num := func(n int64) { buf = binary.AppendVarint(buf, n) }
	flag := func(b bool) {
		if b {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	}
	str("weir-plan-1")
	str(p.ID)
	flag(p.FailFast)
	flag(p.UndoOnCancel)
	num(int64(len(p.Tasks)))
	for _, t := range p.Tasks {
		str(t.Name)
		str(t.Queue)
		bytes(t.Payload)
		num(int64(len(t.After)))
		for _, a := range t.After {
			str(a)
		}
		flag(t.Always)
		flag(t.Undo != nil)
		if t.Undo != nil {
			str(t.Undo.Queue)
			bytes(t.Undo.Payload)
		}
		num(int64(t.Priority))
		num(int64(attemptsOrDefault(t.MaxAttempts)))
		num(backoffOrDefault(t.Backoff).Milliseconds())
		num(t.Timeout.Milliseconds())
		// only when not the default, so that a plan's fingerprint did not
		// change when the field came
		if x := expiriesOrDefault(t.MaxExpiries); x != weir.DefaultMaxExpiries {
			str("x")
			num(int64(x))
		}
		// likewise only when set
		if t.Key != "" {
			str("k")
			str(t.Key)
		}
		if t.Signal {
			str("signal")
			num(t.SignalTimeout.Milliseconds())
		}
		if t.Delay > 0 {
			str("delay")
			num(t.Delay.Milliseconds())
		}
		if t.OnFailure {
			str("on_failure")
		}
		if t.NoAbsorb {
			str("no_absorb")
		}
		if len(buf) > 32<<10 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	if !p.StartAt.IsZero() {
		str("start_at")
		num(p.StartAt.UnixMilli())
	}
	if !p.Deadline.IsZero() {
		str("deadline")
		num(p.Deadline.UnixMilli())
	}
	if p.DeadlineIn != 0 {
		str("deadline_in")
		num(p.DeadlineIn.Milliseconds())
	}
	if w := p.Webhook; w != nil {
		str("webhook")
		str(w.URL)
		str(w.Secret)
		str(webhookQueue(w))
		num(int64(webhookAttempts(w)))
		num(backoffOrDefault(w.Backoff).Milliseconds())
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// JobHash is PlanHash's fingerprint for a plain job spec (RunAt excluded,
// since a retried enqueue computes a new "now"): an enqueue under an
// existing ID with another fingerprint is ErrJobExists. Every store uses
// it, so that they agree on which specs are the same.
func JobHash(s JobSpec) string {
	return PlanHash(Plan{ID: "job:" + s.ID, Tasks: []TaskSpec{{
		Name: "job", Queue: s.Queue, Payload: s.Payload, Priority: s.Priority,
		MaxAttempts: s.MaxAttempts, Backoff: s.Backoff, Timeout: s.Timeout, MaxExpiries: s.MaxExpiries,
		Key: s.Key,
	}}})
}

// expiriesOrDefault resolves a MaxExpiries: 0 is the default, NoExpiries 0.
func expiriesOrDefault(n int) int {
	switch {
	case n == 0:
		return weir.DefaultMaxExpiries
	case n < 0:
		return 0
	}
	return n
}

func attemptsOrDefault(n int) int {
	if n <= 0 {
		return 1
	}
	return n
}

func backoffOrDefault(d time.Duration) time.Duration {
	if d <= 0 {
		return weir.DefaultBackoff
	}
	return d
}
