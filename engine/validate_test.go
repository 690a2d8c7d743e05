package engine

import (
	"errors"
	"github.com/weirflow/weir"
	"strings"
	"testing"
	"time"
)

// Bad input: every call checks its input first and a refused call writes
// nothing. Each row asserts ErrInvalid (and ErrTooLarge exactly for limits),
// the *ValidationError's Task and Field, and that nothing was written.

// rtGoodPlan is a valid plan under rtSmallLimits: a, then b after a.
func rtGoodPlan() Plan {
	return Plan{ID: "wf", Tasks: []TaskSpec{
		{Name: "a", Queue: "q"},
		{Name: "b", Queue: "q", After: []string{"a"}, Undo: &UndoSpec{Queue: "u"}},
	}}
}

// rtBadNames are invalid as task names, queue names and IDs alike.
var rtBadNames = map[string]string{
	"empty":         "",
	"space":         "a b",
	"tab":           "a\tb",
	"newline":       "a\n",
	"open brace":    "a{b",
	"close brace":   "b}",
	"colon":         "a:b",
	"star":          "a*",
	"question mark": "a?",
	"bracket":       "a[0",
	"slash":         "a/b",
	"NUL":           "a\x00",
	"DEL":           "a\x7f",
	"escape":        "\x1b[0m",
	"non-ASCII":     "é",
	"backslash":     `a\b`,
	// a URL path cannot hold these as a segment: no REST route could
	// reach what they name
	"one dot":  ".",
	"two dots": "..",
}

func TestValidatePlanRefusesBadInput(t *testing.T) {
	type row struct {
		name        string
		mod         func(p *Plan)
		task, field string
		tooLarge    bool
	}
	rows := []row{
		{name: "empty workflow", mod: func(p *Plan) { p.Tasks = nil }, field: "tasks"},
		{name: "too many tasks", mod: func(p *Plan) {
			for _, n := range []string{"c", "d", "e"} {
				p.Tasks = append(p.Tasks, TaskSpec{Name: n, Queue: "q"})
			}
		}, field: "tasks", tooLarge: true},
		{name: "duplicate task name", mod: func(p *Plan) { p.Tasks[1].Name = "a" }, task: "a", field: "name"},
		{name: "task name longer than 64", mod: func(p *Plan) { p.Tasks[0].Name = strings.Repeat("n", 65) }, task: strings.Repeat("n", 65), field: "name"},
		{name: "workflow ID longer than 128", mod: func(p *Plan) { p.ID = strings.Repeat("w", 129) }, field: "id"},
		{name: "queue name longer than 64", mod: func(p *Plan) { p.Tasks[1].Queue = strings.Repeat("q", 65) }, task: "b", field: "queue"},
		{name: "dependency on itself", mod: func(p *Plan) { p.Tasks[1].After = []string{"b"} }, task: "b", field: "after"},
		{name: "dependency on a later task", mod: func(p *Plan) { p.Tasks[0].After = []string{"b"} }, task: "a", field: "after"},
		{name: "dependency on an unknown task", mod: func(p *Plan) { p.Tasks[1].After = []string{"zz"} }, task: "b", field: "after"},
		{name: "dependency on a task of another workflow", mod: func(p *Plan) { p.Tasks[1].After = []string{"other/a"} }, task: "b", field: "after"},
		{name: "dependency listed twice", mod: func(p *Plan) { p.Tasks[1].After = []string{"a", "a"} }, task: "b", field: "after"},
		{name: "too many edges", mod: func(p *Plan) {
			p.Tasks = append(p.Tasks,
				TaskSpec{Name: "c", Queue: "q", After: []string{"a", "b"}},
				TaskSpec{Name: "d", Queue: "q", After: []string{"a"}})
		}, task: "d", field: "after", tooLarge: true},
		{name: "payload over the cap", mod: func(p *Plan) { p.Tasks[1].Payload = make([]byte, 9) }, task: "b", field: "payload", tooLarge: true},
		{name: "undo payload over the cap", mod: func(p *Plan) { p.Tasks[1].Undo.Payload = make([]byte, 9) }, task: "b", field: "undo.payload", tooLarge: true},
		{name: "undo queue invalid", mod: func(p *Plan) { p.Tasks[1].Undo.Queue = "u:1" }, task: "b", field: "undo.queue"},
		{name: "undo queue empty", mod: func(p *Plan) { p.Tasks[1].Undo.Queue = "" }, task: "b", field: "undo.queue"},
		{name: "priority below the range", mod: func(p *Plan) { p.Tasks[1].Priority = weir.MinPriority - 1 }, task: "b", field: "priority"},
		{name: "priority above the range", mod: func(p *Plan) { p.Tasks[1].Priority = weir.MaxPriority + 1 }, task: "b", field: "priority"},
		{name: "negative attempts", mod: func(p *Plan) { p.Tasks[1].MaxAttempts = -1 }, task: "b", field: "max_attempts"},
		{name: "attempts over the limit", mod: func(p *Plan) { p.Tasks[1].MaxAttempts = 6 }, task: "b", field: "max_attempts"},
		{name: "negative backoff", mod: func(p *Plan) { p.Tasks[1].Backoff = -time.Second }, task: "b", field: "backoff"},
		{name: "backoff over MaxBackoff", mod: func(p *Plan) { p.Tasks[1].Backoff = 10*time.Second + time.Millisecond }, task: "b", field: "backoff"},
		{name: "backoff not whole milliseconds", mod: func(p *Plan) { p.Tasks[1].Backoff = 1500 * time.Microsecond }, task: "b", field: "backoff"},
		{name: "negative timeout", mod: func(p *Plan) { p.Tasks[1].Timeout = -time.Millisecond }, task: "b", field: "timeout"},
		{name: "timeout not whole milliseconds", mod: func(p *Plan) { p.Tasks[1].Timeout = time.Second + time.Nanosecond }, task: "b", field: "timeout"},
		{name: "NoAbsorb without Always", mod: func(p *Plan) { p.Tasks[1].NoAbsorb = true }, task: "b", field: "no_absorb"},
		// what a signal task cannot use (spec/states.md, Signal): a key
		// always; without an undo, what only a job a worker runs uses
		{name: "signal task with a concurrency key", mod: func(p *Plan) { p.Tasks[1].Signal, p.Tasks[1].Key = true, "k" }, task: "b", field: "key"},
		{name: "signal task without undo with a priority", mod: func(p *Plan) { p.Tasks[0].Signal, p.Tasks[0].Priority = true, 1 }, task: "a", field: "priority"},
		{name: "signal task without undo with attempts", mod: func(p *Plan) { p.Tasks[0].Signal, p.Tasks[0].MaxAttempts = true, 2 }, task: "a", field: "max_attempts"},
		{name: "signal task without undo with expiries", mod: func(p *Plan) { p.Tasks[0].Signal, p.Tasks[0].MaxExpiries = true, weir.NoExpiries }, task: "a", field: "max_expiries"},
		{name: "signal task without undo with a backoff", mod: func(p *Plan) { p.Tasks[0].Signal, p.Tasks[0].Backoff = true, time.Second }, task: "a", field: "backoff"},
		{name: "signal task without undo with a timeout", mod: func(p *Plan) { p.Tasks[0].Signal, p.Tasks[0].Timeout = true, time.Second }, task: "a", field: "timeout"},
	}
	for what, bad := range rtBadNames {
		rows = append(rows,
			row{name: "task name with " + what, mod: func(p *Plan) { p.Tasks[1].Name = bad }, task: bad, field: "name"},
			row{name: "workflow ID with " + what, mod: func(p *Plan) { p.ID = bad }, field: "id"},
			row{name: "queue name with " + what, mod: func(p *Plan) { p.Tasks[0].Queue = bad }, task: "a", field: "queue"},
		)
	}
	limits := rtSmallLimits()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			p := rtGoodPlan()
			r.mod(&p)
			rtValidation(t, ValidatePlan(p, limits), r.task, r.field, r.tooLarge)

			h := rtNewWith(t, Config{Limits: limits, Retention: time.Hour})
			res, err := h.m.Submit(h.now, SubmitParams{Plan: p})
			rtValidation(t, err, r.task, r.field, r.tooLarge)
			rtDeepEq(t, "reply", res, SubmitResult{})
			rtNothingWritten(t, h, p.ID)
		})
	}
}

// rtNothingWritten checks that a model holds no workflow, job or queue.
func rtNothingWritten(t *testing.T, h *rtHarness, id string) {
	t.Helper()
	if ValidID(id) {
		_, err := h.m.GetWorkflow(h.now, id)
		rtErrIs(t, "workflow after a refused submit", err, weir.ErrNotFound)
		_, err = h.m.GetJob(h.now, id)
		rtErrIs(t, "job after a refused call", err, weir.ErrNotFound)
	}
	page, err := h.m.ListWorkflows(h.now, weir.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	rtEq(t, "listed workflows", len(page.Workflows), 0)
	rtEq(t, "queues", len(h.m.Queues(h.now)), 0)
}

func TestValidatePlanAcceptsBoundaryValues(t *testing.T) {
	limits := rtSmallLimits()
	for _, r := range []struct {
		name string
		mod  func(p *Plan)
	}{
		{"task name of 64 characters", func(p *Plan) { p.Tasks[0].Name = strings.Repeat("n", 64); p.Tasks[1].After = []string{p.Tasks[0].Name} }},
		{"workflow ID of 128 characters", func(p *Plan) { p.ID = strings.Repeat("w", 128) }},
		{"every allowed character", func(p *Plan) {
			p.ID = "AZaz09_.-"
			p.Tasks[1].Queue = "AZaz09_.-"
		}},
		{"tasks at MaxTasks", func(p *Plan) {
			p.Tasks = append(p.Tasks, TaskSpec{Name: "c", Queue: "q"}, TaskSpec{Name: "d", Queue: "q"})
		}},
		{"edges at MaxEdges", func(p *Plan) {
			p.Tasks = append(p.Tasks, TaskSpec{Name: "c", Queue: "q", After: []string{"a", "b"}})
		}},
		{"payloads at the cap", func(p *Plan) {
			p.Tasks[0].Payload = make([]byte, 8)
			p.Tasks[1].Undo.Payload = make([]byte, 8)
		}},
		{"priorities at the ends of the range", func(p *Plan) { p.Tasks[0].Priority, p.Tasks[1].Priority = weir.MinPriority, weir.MaxPriority }},
		{"attempts, backoff and timeout at their limits", func(p *Plan) {
			p.Tasks[1].MaxAttempts, p.Tasks[1].Backoff, p.Tasks[1].Timeout = 5, 10*time.Second, 1000*time.Hour
		}},
		{"a signal task with an undo and its retry policy (the undo's)", func(p *Plan) {
			b := &p.Tasks[1]
			b.Signal, b.SignalTimeout, b.Priority, b.MaxAttempts, b.MaxExpiries, b.Backoff, b.Timeout = true, time.Hour, 3, 5, 2, time.Second, time.Minute
		}},
		{"a signal task without undo, one attempt", func(p *Plan) { p.Tasks[0].Signal, p.Tasks[0].MaxAttempts = true, 1 }},
	} {
		t.Run(r.name, func(t *testing.T) {
			p := rtGoodPlan()
			r.mod(&p)
			if err := ValidatePlan(p, limits); err != nil {
				t.Fatalf("ValidatePlan: %v", err)
			}
			h := rtNewWith(t, Config{Limits: limits})
			h.submit(p)
			rtEq(t, "workflow", h.wfState(), weir.WorkflowRunning)
		})
	}
}

func TestValidateJobRefusesBadInput(t *testing.T) {
	type row struct {
		name     string
		mod      func(s *JobSpec)
		field    string
		tooLarge bool
	}
	rows := []row{
		{"ID longer than 128", func(s *JobSpec) { s.ID = strings.Repeat("j", 129) }, "id", false},
		{"payload over the cap", func(s *JobSpec) { s.Payload = make([]byte, 9) }, "payload", true},
		{"priority out of range", func(s *JobSpec) { s.Priority = weir.MaxPriority + 1 }, "priority", false},
		{"attempts over the limit", func(s *JobSpec) { s.MaxAttempts = 6 }, "max_attempts", false},
		{"negative attempts", func(s *JobSpec) { s.MaxAttempts = -1 }, "max_attempts", false},
		{"backoff over MaxBackoff", func(s *JobSpec) { s.Backoff = time.Minute }, "backoff", false},
		{"negative timeout", func(s *JobSpec) { s.Timeout = -1 }, "timeout", false},
	}
	for what, bad := range rtBadNames {
		rows = append(rows,
			row{"ID with " + what, func(s *JobSpec) { s.ID = bad }, "id", false},
			row{"queue with " + what, func(s *JobSpec) { s.Queue = bad }, "queue", false},
		)
	}
	limits := rtSmallLimits()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			s := JobSpec{ID: "j", Queue: "q"}
			r.mod(&s)
			rtValidation(t, ValidateJob(s, limits), "", r.field, r.tooLarge)
			h := rtNewWith(t, Config{Limits: limits})
			res, err := h.m.Enqueue(h.now, EnqueueParams{Job: s})
			rtValidation(t, err, "", r.field, r.tooLarge)
			rtDeepEq(t, "reply", res, EnqueueResult{})
			rtNothingWritten(t, h, s.ID)
		})
	}
}

// TestValidateCallsRefuseBadInput covers the guards of Claim, Finish,
// Heartbeat, ExpireLeases, the queue calls and ListWorkflows. Each row runs
// on a model holding one running job "run" and one queued job "wait"; a
// refused call must leave both as they were.
func TestValidateCallsRefuseBadInput(t *testing.T) {
	claim := func(q []string, max int, lease time.Duration) func(h *rtHarness, c Claimed) error {
		return func(h *rtHarness, _ Claimed) error {
			_, err := h.m.Claim(h.now, ClaimParams{Queues: q, Max: max, Lease: lease})
			return err
		}
	}
	finish := func(mod func(p *FinishParams, c Claimed)) func(h *rtHarness, c Claimed) error {
		return func(h *rtHarness, c Claimed) error {
			p := FinishParams{Outcomes: []Outcome{rtDone(c, "ok")}}
			mod(&p, c)
			_, err := h.m.Finish(h.now, p)
			return err
		}
	}
	heartbeat := func(n int, extend time.Duration) func(h *rtHarness, c Claimed) error {
		return func(h *rtHarness, c Claimed) error {
			refs := make([]LeaseRef, n)
			for i := range refs {
				refs[i] = LeaseRef{JobID: c.Job.ID, Token: c.Lease.Token}
			}
			_, err := h.m.Heartbeat(h.now, HeartbeatParams{Leases: refs, Extend: extend})
			return err
		}
	}
	list := func(p weir.ListParams) func(h *rtHarness, c Claimed) error {
		return func(h *rtHarness, _ Claimed) error { _, err := h.m.ListWorkflows(h.now, p); return err }
	}
	for _, r := range []struct {
		name     string
		call     func(h *rtHarness, c Claimed) error
		field    string
		tooLarge bool
	}{
		{"claim without queues", claim(nil, 1, time.Second), "queues", false},
		{"claim from an invalid queue name", claim([]string{"q", "q{1}"}, 1, time.Second), "queues", false},
		{"claim of 0 jobs", claim([]string{"q"}, 0, time.Second), "max", false},
		{"claim of more than MaxBatch jobs", claim([]string{"q"}, 4, time.Second), "max", false},
		{"claim with a lease of 0", claim([]string{"q"}, 1, 0), "lease", false},
		{"claim with a lease that is not whole milliseconds", claim([]string{"q"}, 1, 1500*time.Microsecond), "lease", false},
		{"claim with a lease over MaxLease", claim([]string{"q"}, 1, time.Minute+time.Millisecond), "lease", false},
		{"finish without outcomes or claim", finish(func(p *FinishParams, _ Claimed) { p.Outcomes = nil }), "outcomes", false},
		{"finish of more than MaxBatch outcomes", finish(func(p *FinishParams, c Claimed) {
			p.Outcomes = append(p.Outcomes, p.Outcomes[0], p.Outcomes[0], p.Outcomes[0])
		}), "outcomes", true},
		{"finish with an unknown kind", finish(func(p *FinishParams, _ Claimed) { p.Outcomes[0].Kind = "done" }), "kind", false},
		{"finish with a result over the cap", finish(func(p *FinishParams, _ Claimed) { p.Outcomes[0].Result = make([]byte, 9) }), "result", true},
		{"finish of a failure with a result over the cap", finish(func(p *FinishParams, _ Claimed) {
			p.Outcomes[0].Kind, p.Outcomes[0].Result = OutcomeFailed, make([]byte, 9)
		}), "result", true},
		{"finish with a negative RetryAfter", finish(func(p *FinishParams, _ Claimed) {
			p.Outcomes[0].Kind, p.Outcomes[0].RetryAfter = OutcomeFailed, -time.Second
		}), "retry_after", false},
		{"finish with a RetryAfter over MaxBackoff", finish(func(p *FinishParams, _ Claimed) {
			p.Outcomes[0].Kind, p.Outcomes[0].RetryAfter = OutcomeFailed, time.Minute
		}), "retry_after", false},
		{"finish with a bad claim", finish(func(p *FinishParams, _ Claimed) {
			p.Claim = &ClaimParams{Queues: []string{"q"}, Max: 1, Lease: 0}
		}), "lease", false},
		{"heartbeat of no lease", heartbeat(0, time.Second), "leases", false},
		{"heartbeat of more than MaxBatch leases", heartbeat(4, time.Second), "leases", false},
		{"heartbeat extending by 0", heartbeat(1, 0), "lease", false},
		{"heartbeat extending beyond MaxLease", heartbeat(1, 2*time.Minute), "lease", false},
		{"expire with a negative max", func(h *rtHarness, _ Claimed) error {
			_, err := h.m.ExpireLeases(h.now, ExpireParams{Max: -1})
			return err
		}, "max", false},
		{"expire with a max over MaxBatch", func(h *rtHarness, _ Claimed) error {
			_, err := h.m.ExpireLeases(h.now, ExpireParams{Max: 4})
			return err
		}, "max", false},
		{"pause of an invalid queue", func(h *rtHarness, _ Claimed) error { return h.m.PauseQueue(h.now, "a b") }, "queue", false},
		{"resume of an invalid queue", func(h *rtHarness, _ Claimed) error { return h.m.ResumeQueue(h.now, "a*") }, "queue", false},
		{"purge of an invalid queue", func(h *rtHarness, _ Claimed) error {
			_, err := h.m.PurgeQueue(h.now, "")
			return err
		}, "queue", false},
		{"list with a negative limit", list(weir.ListParams{Limit: -1}), "limit", false},
		{"list with a limit over 1000", list(weir.ListParams{Limit: 1001}), "limit", false},
		{"list with an unknown state", list(weir.ListParams{State: "done"}), "state", false},
		{"list with a cursor without a colon", list(weir.ListParams{Cursor: "12"}), "cursor", false},
		{"list with a cursor that is not a time", list(weir.ListParams{Cursor: "x:wf"}), "cursor", false},
		{"list with a cursor with a bad ID", list(weir.ListParams{Cursor: "12:a/b"}), "cursor", false},
	} {
		t.Run(r.name, func(t *testing.T) {
			h := rtNewWith(t, Config{Limits: rtSmallLimits(), Retention: time.Hour})
			h.enqueue(JobSpec{ID: "run", Queue: "q"})
			c := h.claimJob("q", "run")
			h.enqueue(JobSpec{ID: "wait", Queue: "q"})
			h.advance(time.Minute) // the lease is overdue: a sweep would end it
			before := h.m.Queues(h.now)

			rtValidation(t, r.call(h, c), "", r.field, r.tooLarge)

			rtDeepEq(t, "queues", h.m.Queues(h.now), before)
			j := h.job("run")
			rtEq(t, "running job", j.State, weir.Running)
			rtEq(t, "deadline", j.Lease.Deadline, rtAt(rtLease))
			rtEq(t, "queued job", h.job("wait").State, weir.Queued)
			rtEq(t, "paused", h.m.Queues(h.now)[0].Paused, false)
		})
	}
}

func TestValidationErrorMatchesItsSentinels(t *testing.T) {
	plain := &weir.ValidationError{Field: "id", Problem: "bad"}
	large := &weir.ValidationError{Field: "payload", Problem: "big", TooLarge: true}
	rtEq(t, "plain is invalid", errors.Is(plain, weir.ErrInvalid), true)
	rtEq(t, "plain is not too large", errors.Is(plain, weir.ErrTooLarge), false)
	rtEq(t, "large is invalid", errors.Is(large, weir.ErrInvalid), true)
	rtEq(t, "large is too large", errors.Is(large, weir.ErrTooLarge), true)
	rtEq(t, "not found", errors.Is(large, weir.ErrNotFound), false)
	rtEq(t, "text names the task", (&weir.ValidationError{Task: "t", Field: "after", Problem: "x"}).Error(), `weir: invalid task "t": after: x`)
}

// TestValidIDTickForm: an ID is ^[A-Za-z0-9_.-]{1,128}$ or a schedule
// tick's <name>@<digits>, at most 128 bytes; a webhook delivery's job ID
// is no valid ID.
func TestValidIDTickForm(t *testing.T) {
	name64 := strings.Repeat("n", 64)
	for id, want := range map[string]bool{
		"nightly@1700000000":                   true,
		"a@0":                                  true,
		name64 + "@" + strings.Repeat("9", 63): true, // 128 bytes
		"a@" + strings.Repeat("9", 126):        true, // 128 bytes
		"a@" + strings.Repeat("9", 127):        false,
		name64 + "n@1":                         false, // a name of 65
		"nightly@":                             false,
		"@1":                                   false,
		"a@1@2":                                false,
		"a@1x":                                 false,
		"a@-1":                                 false,
		"a b@1":                                false,
		"a/b@1":                                false,
		"wf@webhook":                           false,
		"wf@webhook.2":                         false,
		".":                                    false,
		"..":                                   false,
		"...":                                  true,
		".a":                                   true,
		"a..":                                  true,
		".@1":                                  false,
		"..@1":                                 false,
		"...@1":                                true,
		TickIDIn("nightly", rtT0, 8):           true,
		TickIDIn("nightly", rtT0, 8) + "@webhook":   false,
		TickIDIn(name64, time.Unix(1<<62, 0), 1024): true,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
	if got := TickIDIn("nightly", rtT0, 1); got != TickID("nightly", rtT0) || got != "nightly.1700000000" {
		t.Errorf("one partition's tick ID %q", got)
	}
	if got := TickIDIn("nightly", rtT0, 2); got != "nightly@1700000000" || RoutingID(got) != "nightly" {
		t.Errorf("a tick ID of partitions %q", got)
	}
}
