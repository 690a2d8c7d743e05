package engine

import (
	"github.com/weirflow/weir"
	"slices"
	"strings"
	"time"
)

// ValidName reports whether s is a valid task, queue, schedule or
// concurrency key name (NameRule): ^[A-Za-z0-9_.-]{1,64}$, but not "." or
// "..", which a URL path cannot hold as a segment (a client cleans them
// away), so that every name can be a segment of a REST route.
func ValidName(s string) bool { return validChars(s, 64) && !dots(s) }

// NameRule says which names ValidName accepts, as the error of a bad name
// says it ("queue name "a b" must " + NameRule).
const NameRule = "match ^[A-Za-z0-9_.-]{1,64}$ and not be . or .."

// IDRule says which IDs ValidID accepts, as the error of a bad ID says it
// ("workflow ID "a b" must " + IDRule).
const IDRule = "match ^[A-Za-z0-9_.-]{1,128}$ and not be . or .., or be a schedule tick's <name>@<digits> (128 bytes at most)"

// ValidID reports whether s is a valid workflow or job ID (IDRule):
// ^[A-Za-z0-9_.-]{1,128}$ but not "." or ".." (as ValidName), or a
// schedule tick's ID of a namespace of several partitions,
// "<name>@<digits>" (name a ValidName, one or more decimal digits, at most
// 128 bytes in all: TickIDIn). Braces, colons, glob characters, '/',
// whitespace and control characters are all outside both forms, so an ID
// is always safe inside a Redis key, and every ID is a segment of a REST
// route. A webhook delivery's job ID ("<workflow>@webhook...") is not a
// valid ID: the digits after the '@' keep it out.
func ValidID(s string) bool {
	if validChars(s, 128) {
		return !dots(s)
	}
	name, n, ok := strings.Cut(s, "@")
	if !ok || len(s) > 128 || n == "" || !ValidName(name) {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// dots reports whether s is "." or "..", the path segments a URL cannot
// carry (RFC 3986, 5.2.4: they are removed from a path before it is sent).
func dots(s string) bool { return s == "." || s == ".." }

func validChars(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// compiled is a validated plan with dependency indices.
type compiled struct {
	plan       Plan
	deps       [][]int // deps[i]: indices of task i's dependencies, in After order
	dependents [][]int // dependents[i]: ascending indices of tasks that depend on i
	hash       string
}

// absorbable reports whether a failure of task i is absorbed: it has at least
// one dependent and all of them absorb (Absorbs).
func (c *compiled) absorbable(i int) bool {
	if len(c.dependents[i]) == 0 {
		return false
	}
	for _, d := range c.dependents[i] {
		if !Absorbs(c.plan.Tasks[d]) {
			return false
		}
	}
	return true
}

// Absorbs reports whether task t, as a dependent, absorbs a dependency's
// failure: it is Always and not NoAbsorb. A failure is absorbed when the
// failed task has dependents and every one of them absorbs.
func Absorbs(t TaskSpec) bool { return t.Always && !t.NoAbsorb }

// ValidatePlan checks a plan against the limits and returns the first
// problem as a *ValidationError, or nil.
func ValidatePlan(p Plan, l weir.Limits) error {
	_, err := compile(p, l)
	return err
}

func compile(p Plan, l weir.Limits) (*compiled, error) {
	if !ValidID(p.ID) {
		return nil, invalid("", "id", "workflow ID %q must "+IDRule, p.ID)
	}
	if len(p.Tasks) == 0 {
		return nil, invalid("", "tasks", "a workflow needs at least one task")
	}
	if len(p.Tasks) > l.MaxTasks {
		return nil, tooLarge("", "tasks", "%d tasks, the limit is %d", len(p.Tasks), l.MaxTasks)
	}
	p = clonePlan(p) // the model keeps the plan: never share the caller's slices
	c := &compiled{plan: p, deps: make([][]int, len(p.Tasks)), dependents: make([][]int, len(p.Tasks))}
	index := make(map[string]int, len(p.Tasks))
	edges := 0
	for i, t := range p.Tasks {
		if !ValidName(t.Name) {
			return nil, invalid(t.Name, "name", "task name %q must "+NameRule, t.Name)
		}
		if _, dup := index[t.Name]; dup {
			return nil, invalid(t.Name, "name", "duplicate task name")
		}
		if err := validateTaskFields(t, l); err != nil {
			return nil, err
		}
		edges += len(t.After)
		if edges > l.MaxEdges {
			return nil, tooLarge(t.Name, "after", "more than %d dependency edges in the plan", l.MaxEdges)
		}
		seen := make(map[int]bool, len(t.After))
		for _, name := range t.After {
			j, ok := index[name]
			if !ok {
				if name == t.Name {
					return nil, invalid(t.Name, "after", "a task cannot depend on itself")
				}
				return nil, invalid(t.Name, "after", "dependency %q is not a task listed before this one", name)
			}
			if seen[j] {
				return nil, invalid(t.Name, "after", "dependency %q is listed twice", name)
			}
			seen[j] = true
			c.deps[i] = append(c.deps[i], j)
			c.dependents[j] = append(c.dependents[j], i)
		}
		index[t.Name] = i
	}
	if err := validateStartAt(p); err != nil {
		return nil, err
	}
	if err := validateDeadline(p); err != nil {
		return nil, err
	}
	if err := validateWebhook(p, l); err != nil {
		return nil, err
	}
	c.hash = PlanHash(p)
	return c, nil
}

// validateTaskFields checks a task's own fields (not its name or its
// dependencies): what a submitted task and a task added at run time share.
func validateTaskFields(t TaskSpec, l weir.Limits) error {
	if err := validateRun(t.Name, t.Queue, t.Payload, t.Priority, t.MaxAttempts, t.MaxExpiries, t.Backoff, t.Timeout, l); err != nil {
		return err
	}
	if err := validateKey(t.Name, t.Key); err != nil {
		return err
	}
	if err := validateSignal(t); err != nil {
		return err
	}
	if t.OnFailure && (!t.Always || len(t.After) == 0) {
		return invalid(t.Name, "on_failure", "an OnFailure task must be Always and have a dependency")
	}
	if t.NoAbsorb && !t.Always {
		return invalid(t.Name, "no_absorb", "a NoAbsorb task must be Always (a task that is not Always never absorbs a failure)")
	}
	if t.Undo != nil {
		if !ValidName(t.Undo.Queue) {
			return invalid(t.Name, "undo.queue", "queue name %q must "+NameRule, t.Undo.Queue)
		}
		if len(t.Undo.Payload) > l.MaxPayload {
			return tooLarge(t.Name, "undo.payload", "%d bytes, the limit is %d", len(t.Undo.Payload), l.MaxPayload)
		}
	}
	return nil
}

// clonePlan returns a deep copy of p: its tasks, payloads, dependency lists
// and undo specs.
func clonePlan(p Plan) Plan {
	p.Tasks = slices.Clone(p.Tasks)
	if p.Webhook != nil {
		h := *p.Webhook
		p.Webhook = &h
	}
	for i := range p.Tasks {
		t := &p.Tasks[i]
		t.Payload = slices.Clone(t.Payload)
		t.After = slices.Clone(t.After)
		if t.Undo != nil {
			u := *t.Undo
			u.Payload = slices.Clone(u.Payload)
			t.Undo = &u
		}
	}
	return p
}

// validateRun checks the fields a task and a plain job share.
func validateRun(task, queue string, payload []byte, priority, attempts, expiries int, backoff, timeout time.Duration, l weir.Limits) error {
	if !ValidName(queue) {
		return invalid(task, "queue", "queue name %q must "+NameRule, queue)
	}
	if len(payload) > l.MaxPayload {
		return tooLarge(task, "payload", "%d bytes, the limit is %d", len(payload), l.MaxPayload)
	}
	if priority < weir.MinPriority || priority > weir.MaxPriority {
		return invalid(task, "priority", "%d is outside [%d, %d]", priority, weir.MinPriority, weir.MaxPriority)
	}
	if attempts < 0 || attempts > l.MaxAttempts {
		return invalid(task, "max_attempts", "%d is outside [0, %d] (0 means 1)", attempts, l.MaxAttempts)
	}
	if expiries < weir.NoExpiries || expiries > l.MaxAttempts {
		return invalid(task, "max_expiries", "%d is outside [-1, %d] (0 means %d, -1 none)", expiries, l.MaxAttempts, weir.DefaultMaxExpiries)
	}
	if backoff < 0 || backoff > l.MaxBackoff || backoff%time.Millisecond != 0 {
		return invalid(task, "backoff", "%v must be whole milliseconds in [0, %v]", backoff, l.MaxBackoff)
	}
	if timeout < 0 || timeout%time.Millisecond != 0 {
		return invalid(task, "timeout", "%v must be whole milliseconds and not negative", timeout)
	}
	return nil
}

// ValidateJob checks a plain job spec against the limits.
func ValidateJob(s JobSpec, l weir.Limits) error {
	if !ValidID(s.ID) {
		return invalid("", "id", "job ID %q must "+IDRule, s.ID)
	}
	switch {
	case s.Delay < 0:
		return invalid("", "delay", "%v is negative", s.Delay)
	case s.Delay > maxDelay:
		return invalid("", "delay", "%v is longer than %v", s.Delay, maxDelay)
	case s.Delay > 0 && !s.RunAt.IsZero():
		return invalid("", "delay", "set RunAt or Delay, not both")
	}
	if u := s.Unique; u != nil {
		switch {
		case len(u.Key) > MaxUniqueKey:
			return invalid("", "unique", "key is %d bytes, more than %d", len(u.Key), MaxUniqueKey)
		case u.For < 0:
			return invalid("", "unique", "duration %v is negative", u.For)
		case u.For > maxDelay:
			return invalid("", "unique", "duration %v is longer than %v", u.For, maxDelay)
		}
	}
	if err := validateKey("", s.Key); err != nil {
		return err
	}
	return validateRun("", s.Queue, s.Payload, s.Priority, s.MaxAttempts, s.MaxExpiries, s.Backoff, s.Timeout, l)
}

// validateKey checks a concurrency key: empty (none) or a name.
func validateKey(task, key string) error {
	if key != "" && !ValidName(key) {
		return invalid(task, "key", "concurrency key %q must "+NameRule, key)
	}
	return nil
}

// maxDelay bounds JobSpec.Delay (100 years), so that now plus a delay in
// milliseconds stays an exact integer in every store.
const maxDelay = 100 * 365 * 24 * time.Hour

func validateQueues(queues []string) error {
	if len(queues) == 0 {
		return invalid("", "queues", "name at least one queue")
	}
	for _, q := range queues {
		if !ValidName(q) {
			return invalid("", "queues", "queue name %q must "+NameRule, q)
		}
	}
	return nil
}

func validateBatch(field string, n int, l weir.Limits) error {
	if n < 1 || n > l.MaxBatch {
		return invalid("", field, "%d is outside [1, %d]", n, l.MaxBatch)
	}
	return nil
}

func validateLease(d time.Duration, l weir.Limits) error {
	if d < time.Millisecond || d > l.MaxLease || d%time.Millisecond != 0 {
		return invalid("", "lease", "%v must be whole milliseconds in [1ms, %v]", d, l.MaxLease)
	}
	return nil
}
