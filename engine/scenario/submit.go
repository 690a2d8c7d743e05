package scenario

import (
	"fmt"
	"github.com/weirflow/weir"
	"time"

	"github.com/weirflow/weir/engine"
)

type opSubmit struct {
	plan   engine.Plan
	name   string            // name=
	labels map[string]string // labels=k=v,k2=v2
}

func (*opSubmit) needsReply() bool { return true }

func parseSubmit(args []word, now int64) (operation, error) {
	pos, rest, err := positional(args, 1, "submit <workflow> [fail_fast] [undo_on_cancel=false] [start_at=] [deadline=] [deadline_in=] [webhook=<url> webhook_secret= webhook_queue= webhook_attempts= webhook_backoff=] [name=] [labels=k=v,...]")
	if err != nil {
		return nil, err
	}
	o, err := parseOpts(rest, map[string]kind{"fail_fast": kBool, "undo_on_cancel": kBool, "start_at": kTime, "deadline": kTime, "deadline_in": kDur,
		"webhook": kStr, "webhook_secret": kStr, "webhook_queue": kStr, "webhook_attempts": kInt, "webhook_backoff": kDur,
		"name": kStr, "labels": kStr})
	if err != nil {
		return nil, err
	}
	op := &opSubmit{plan: engine.Plan{
		ID: pos[0], FailFast: o.bool("fail_fast", false), UndoOnCancel: o.bool("undo_on_cancel", true),
	}}
	if v := o.str("start_at"); v != "" && v != "-" {
		op.plan.StartAt = time.UnixMilli(timeValue(v, now)).UTC()
	}
	if v := o.str("deadline"); v != "" && v != "-" {
		op.plan.Deadline = time.UnixMilli(timeValue(v, now)).UTC()
	}
	op.plan.DeadlineIn = o.dur("deadline_in", 0)
	op.name, op.labels = o.str("name"), labelsOpt(o.str("labels"))
	if _, ok := o["webhook"]; ok {
		op.plan.Webhook = &weir.Webhook{
			URL: o.str("webhook"), Secret: o.str("webhook_secret"), Queue: o.str("webhook_queue"),
			MaxAttempts: o.int("webhook_attempts", 0), Backoff: o.dur("webhook_backoff", 0),
		}
	}
	return op, nil
}

var taskSpec = map[string]kind{
	"q": kStr, "payload": kStr, "after": kList, "always": kBool, "undo": kStr,
	"undo_payload": kStr, "priority": kInt, "attempts": kInt, "backoff": kDur, "timeout": kDur,
	"expiries": kInt, "key": kStr, "signal": kBool, "signal_timeout": kDur, "delay": kDur,
	"on_failure": kBool, "no_absorb": kBool,
}

func (op *opSubmit) more(ws []word) error {
	if ws[0].val != "task" || ws[0].key != "" {
		return fmt.Errorf("a submit continues with 'task <name> q=<queue> ...' lines")
	}
	t, err := parseTask(ws[1:])
	if err != nil {
		return err
	}
	op.plan.Tasks = append(op.plan.Tasks, t)
	return nil
}

// parseTask reads a task line's words after "task" (or a finish's "add").
func parseTask(ws []word) (engine.TaskSpec, error) {
	pos, rest, err := positional(ws, 1, "task <name> q=<queue> [after=a,b] [always] [undo=<queue>] ...")
	if err != nil {
		return engine.TaskSpec{}, err
	}
	o, err := parseOpts(rest, taskSpec)
	if err != nil {
		return engine.TaskSpec{}, err
	}
	t := engine.TaskSpec{
		Name: pos[0], Queue: o.str("q"), Payload: o.bytes("payload"), After: o.list("after"),
		Always: o.bool("always", false), Priority: o.int("priority", 0),
		MaxAttempts: o.int("attempts", 0), Backoff: o.dur("backoff", 0), Timeout: o.dur("timeout", 0),
		MaxExpiries: o.int("expiries", 0), Key: o.str("key"), Signal: o.bool("signal", false), SignalTimeout: o.dur("signal_timeout", 0),
		Delay: o.dur("delay", 0), OnFailure: o.bool("on_failure", false),
		NoAbsorb: o.bool("no_absorb", false),
	}
	if o.has("undo") {
		t.Undo = &engine.UndoSpec{Queue: o.str("undo"), Payload: o.bytes("undo_payload")}
	} else if o.has("undo_payload") {
		return engine.TaskSpec{}, fmt.Errorf("undo_payload needs undo=<queue>")
	}
	return t, nil
}

func (op *opSubmit) exec(r *runner, st *Step) error {
	res, err := r.store(st).Submit(r.ctx, engine.SubmitParams{Plan: op.plan, Name: op.name, Labels: op.labels})
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	verb := "created"
	if !res.Created {
		verb = "unchanged"
	}
	return r.compare(st, []line{{{"", verb}, {"pushed", pushedList(res.Pushed)}}})
}
