package engine

import (
	"errors"
	"github.com/weirflow/weir"
	"reflect"
	"testing"
	"time"
)

// fuzzPlan builds a plan from fuzz bytes: a small interpreter whose every
// choice comes from the next byte (0 when the input ran out), picking names,
// queues, dependencies, numbers and sizes from tables of valid and edge
// values, so that most inputs are plans near the validity boundary.
func fuzzPlan(data []byte) Plan {
	i := 0
	next := func() int {
		if i >= len(data) {
			return 0
		}
		i++
		return int(data[i-1])
	}
	pick := func(vals ...string) string { return vals[next()%len(vals)] }
	ids := []string{"wf", "", "a/b", "x{y}", "w:1", "ok.id-1_", "é", string(make([]byte, 129)), "a b", "*"}
	names := []string{"a", "b", "c", "d", "a", "", "bad name", "x/y", "n{1}", "名", "e.f-g_h", "dup"}
	durs := []time.Duration{0, time.Millisecond, time.Second, -time.Millisecond, 1500 * time.Microsecond, time.Hour, time.Hour + time.Millisecond, 1}
	p := Plan{ID: ids[next()%len(ids)], FailFast: next()%2 == 1, UndoOnCancel: next()%2 == 1}
	if p.ID == "" && next()%2 == 0 {
		p.ID = "wf"
	}
	n := next() % 12
	for k := range n {
		t := TaskSpec{
			Name:        names[next()%len(names)],
			Queue:       pick("q", "default", "", "bad queue", "q:1", "x.y"),
			Always:      next()%3 == 0,
			Priority:    []int{0, 1, -1, weir.MinPriority, weir.MaxPriority, weir.MaxPriority + 1, weir.MinPriority - 1}[next()%7],
			MaxAttempts: []int{0, 1, 3, -1, 1000, 1001}[next()%6],
			Backoff:     durs[next()%len(durs)],
			Timeout:     durs[next()%len(durs)],
		}
		if next()%4 != 0 {
			t.Name = names[k%4] + string(rune('0'+k))
		}
		switch next() % 4 {
		case 0:
		case 1:
			t.Payload = []byte{}
		default:
			t.Payload = make([]byte, next()%24)
		}
		for range next() % 4 {
			switch d := next(); d % 5 {
			case 0:
				t.After = append(t.After, t.Name) // itself
			case 1:
				t.After = append(t.After, "zz") // unknown
			default:
				if k > 0 {
					t.After = append(t.After, names[(d/5)%4]+string(rune('0'+(d/20)%k)))
				}
			}
		}
		if next()%3 == 0 {
			t.After = []string{}
		}
		if next()%3 == 0 {
			t.Undo = &UndoSpec{Queue: pick("u", "", "bad queue"), Payload: make([]byte, next()%24)}
		}
		p.Tasks = append(p.Tasks, t)
	}
	return p
}

// fuzzLimits are small, so that fuzz plans reach every limit.
var fuzzLimits = weir.Limits{MaxTasks: 8, MaxEdges: 10, MaxPayload: 16, MaxResult: 16, MaxError: 16,
	MaxAttempts: 1000, MaxBatch: 4, MaxLease: time.Hour, MaxBackoff: time.Hour}

// validOracle is an independent statement of the plan rules of
// spec/states.md: whether p is valid under l.
func validOracle(p Plan, l weir.Limits) bool {
	if !ValidID(p.ID) || len(p.Tasks) == 0 || len(p.Tasks) > l.MaxTasks {
		return false
	}
	seen := map[string]bool{}
	edges := 0
	for _, t := range p.Tasks {
		if !ValidName(t.Name) || seen[t.Name] || !ValidName(t.Queue) || len(t.Payload) > l.MaxPayload ||
			t.Priority < weir.MinPriority || t.Priority > weir.MaxPriority || t.MaxAttempts < 0 || t.MaxAttempts > l.MaxAttempts ||
			t.Backoff < 0 || t.Backoff > l.MaxBackoff || t.Backoff%time.Millisecond != 0 ||
			t.Timeout < 0 || t.Timeout%time.Millisecond != 0 {
			return false
		}
		if t.Undo != nil && (!ValidName(t.Undo.Queue) || len(t.Undo.Payload) > l.MaxPayload) {
			return false
		}
		deps := map[string]bool{}
		for _, d := range t.After {
			if !seen[d] || deps[d] {
				return false
			}
			deps[d] = true
		}
		edges += len(t.After)
		seen[t.Name] = true
	}
	return edges <= l.MaxEdges
}

// FuzzValidatePlan: ValidatePlan never panics, returns nil or a
// *ValidationError that matches ErrInvalid (and ErrTooLarge exactly when it
// is a size or count limit), agrees with an independent oracle, leaves its
// input unchanged, and a valid plan's hash does not depend on its slices'
// identity; the model accepts exactly the plans ValidatePlan accepts.
func FuzzValidatePlan(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0})
	f.Add([]byte{5, 1, 1, 1, 4, 1, 1, 1, 1, 1, 1, 1, 2, 1, 2, 1, 2, 2, 7, 9, 1, 1, 0})
	f.Add([]byte("a longer seed with many different bytes to walk the interpreter through 11 tasks"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			t.Skip()
		}
		p := fuzzPlan(data)
		before := clonePlan(p)
		err := ValidatePlan(p, fuzzLimits)
		if !reflect.DeepEqual(p, before) {
			t.Fatal("ValidatePlan changed its input")
		}
		if want := validOracle(p, fuzzLimits); (err == nil) != want {
			t.Fatalf("ValidatePlan: %v, oracle says valid=%t for %+v", err, want, p)
		}
		m := NewModel(Config{Limits: fuzzLimits, Retention: time.Hour})
		_, merr := m.Submit(time.UnixMilli(1), SubmitParams{Plan: p})
		if err != nil {
			var ve *weir.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, weir.ErrInvalid) || ve.Field == "" || ve.Problem == "" {
				t.Fatalf("error %T %v is not a complete *ValidationError", err, err)
			}
			if errors.Is(err, weir.ErrTooLarge) != ve.TooLarge {
				t.Fatalf("ErrTooLarge match %t but TooLarge %t", errors.Is(err, weir.ErrTooLarge), ve.TooLarge)
			}
			if merr == nil || merr.Error() != err.Error() {
				t.Fatalf("model Submit: %v, ValidatePlan: %v", merr, err)
			}
			return
		}
		if merr != nil {
			t.Fatalf("model refused a valid plan: %v", merr)
		}
		if PlanHash(p) != PlanHash(clonePlan(p)) {
			t.Fatal("plan hash depends on slice identity")
		}
	})
}
