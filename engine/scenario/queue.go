package scenario

import (
	"strconv"

	"github.com/weirflow/weir/engine"
)

type opQueue struct {
	noMore
	verb  string // purge, pause, resume, limit, keylimit
	queue string
	limit int // limit's or keylimit's concurrency
}

func (*opQueue) needsReply() bool { return true }

type opQueues struct{ noMore }

func (*opQueues) needsReply() bool { return true }

func (op *opQueue) exec(r *runner, st *Step) error {
	var err error
	switch op.verb {
	case "purge":
		var res engine.PurgeResult
		res, err = r.store(st).PurgeQueue(r.ctx, op.queue)
		if err == nil {
			return r.compare(st, []line{{{"purged", list(res.Purged)}, {"pushed", pushedList(res.Pushed)}}})
		}
	case "pause":
		err = r.store(st).PauseQueue(r.ctx, op.queue)
	case "limit":
		err = r.store(st).LimitQueue(r.ctx, engine.LimitQueueParams{Queue: op.queue, Concurrency: op.limit})
	case "keylimit":
		err = r.store(st).LimitKeys(r.ctx, engine.LimitKeysParams{Queue: op.queue, Concurrency: op.limit})
	default:
		err = r.store(st).ResumeQueue(r.ctx, op.queue)
	}
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	return r.compare(st, []line{{{"", "ok"}}})
}

func (op *opQueues) exec(r *runner, st *Step) error {
	qs, err := r.store(st).Queues(r.ctx)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	var got []line
	for _, q := range qs {
		l := line{{"", q.Name}, {"ready", strconv.Itoa(q.Ready)}, {"delayed", strconv.Itoa(q.Delayed)}, {"running", strconv.Itoa(q.Running)}}
		if q.Paused {
			l = append(l, field{"", "paused"})
		}
		if q.Concurrency > 0 {
			l = append(l, field{"concurrency", strconv.Itoa(q.Concurrency)})
		}
		if q.RateLimit > 0 {
			l = append(l, rateField(q))
		}
		if q.KeyConcurrency > 0 {
			l = append(l, field{"key_concurrency", strconv.Itoa(q.KeyConcurrency)})
		}
		got = append(got, l)
	}
	if len(got) == 0 {
		got = []line{{{"", "none"}}}
	}
	return r.compare(st, got)
}
