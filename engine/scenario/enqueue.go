package scenario

import (
	"time"

	"github.com/weirflow/weir/engine"
)

type opEnqueue struct {
	noMore
	job engine.JobSpec
}

func (*opEnqueue) needsReply() bool { return true }

func parseEnqueue(args []word, now int64) (operation, error) {
	pos, rest, err := positional(args, 1, "enqueue <id> q=<queue> [payload=] [priority=] [run_at=] [attempts=] [backoff=] [timeout=] [expiries=] [delay=] [unique=<key>|-] [unique_for=] [key=]")
	if err != nil {
		return nil, err
	}
	o, err := parseOpts(rest, map[string]kind{
		"q": kStr, "payload": kStr, "priority": kInt, "run_at": kTime, "delay": kDur,
		"attempts": kInt, "backoff": kDur, "timeout": kDur, "expiries": kInt,
		"unique": kStr, "unique_for": kDur, "key": kStr,
	})
	if err != nil {
		return nil, err
	}
	j := engine.JobSpec{
		ID: pos[0], Queue: o.str("q"), Payload: o.bytes("payload"), Priority: o.int("priority", 0),
		MaxAttempts: o.int("attempts", 0), Backoff: o.dur("backoff", 0), Timeout: o.dur("timeout", 0),
		MaxExpiries: o.int("expiries", 0), Delay: o.dur("delay", 0), Key: o.str("key"),
	}
	if o.has("unique") || o.has("unique_for") {
		// unique=- (or unique_for alone): unique by the payload
		j.Unique = &engine.Unique{For: o.dur("unique_for", 0)}
		if k := o.str("unique"); k != "-" {
			j.Unique.Key = k
		}
	}
	if v := o.str("run_at"); v != "" && v != "-" {
		j.RunAt = time.UnixMilli(timeValue(v, now)).UTC()
	}
	return &opEnqueue{job: j}, nil
}

func (op *opEnqueue) exec(r *runner, st *Step) error {
	res, err := r.store(st).Enqueue(r.ctx, engine.EnqueueParams{Job: op.job})
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	if res.Existing != "" {
		return r.compare(st, []line{{{"", "held"}, {"by", res.Existing}, {"", string(res.State)}}})
	}
	verb := "created"
	if !res.Created {
		verb = "unchanged"
	}
	return r.compare(st, []line{{{"", verb}, {"", string(res.State)}}})
}
