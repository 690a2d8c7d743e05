package scenario

import (
	"context"
	"errors"
	"flag"
	"github.com/weirflow/weir"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/spec"
)

// testdata is where the embedded scenarios are in the source tree, for
// -rewrite.
const testdata = "../../spec/testdata"

var rewrite = flag.Bool("rewrite", false, "rewrite the reply lines of spec/testdata's scenarios that differ from the Model's replies (then review the diff)")

// TestGolden replays every spec/testdata scenario against the Model; with
// -rewrite it rewrites the reply lines that differ in the source tree's
// files instead (Rewrite).
func TestGolden(t *testing.T) {
	all, err := ParseFS(spec.Scenarios(), "*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatal("no scenario files in spec.Scenarios()")
	}
	for _, s := range all {
		t.Run(strings.TrimSuffix(s.Name, ".txt"), func(t *testing.T) {
			t.Parallel()
			if s.Doc == "" {
				t.Errorf("%s: the file does not start with a comment saying which rule it shows", s.Name)
			}
			if *rewrite {
				text, changed, err := Rewrite(context.Background(), s, NewModelTarget(s.Config))
				if err != nil {
					t.Fatal(err)
				}
				if changed {
					p := filepath.Join(testdata, s.Name)
					if err := os.WriteFile(p, text, 0o644); err != nil {
						t.Fatal(err)
					}
					t.Logf("rewrote %s", p)
				}
				return
			}
			res, err := RunModel(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps != len(s.Steps) || len(res.Skipped) > 0 {
				t.Fatalf("ran %d of %d steps, skipped %v", res.Steps, len(s.Steps), res.Skipped)
			}
		})
	}
}

func parse(t *testing.T, src string) *Scenario {
	t.Helper()
	s, err := Parse("test.txt", strings.NewReader(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return s
}

func run(t *testing.T, src string) error {
	t.Helper()
	_, err := RunModel(context.Background(), parse(t, src))
	return err
}

// TestParseErrors checks that bad lines are refused with their line number
// and a message that says what is wrong.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unknown op", "# doc\nsubmit w\n  task a q=q\n> created pushed=w/a\nfrobnicate x\n", 5, `unknown operation "frobnicate"`},
		{"missing reply", "claim q\nclaim q\n> none\n", 1, "needs its expected reply"},
		{"missing reply at end", "claim q\n> none\nclaim q\n", 3, "needs its expected reply"},
		{"reply without op", "# doc\n\n> created\n", 3, "must follow a store operation"},
		{"reply after expect", "expect job j error NOTFOUND\n> none\n", 2, "must follow a store operation"},
		{"time goes back", "at 5000\nat 4000\n", 2, "goes back in time"},
		{"bad duration", "advance soon\n", 1, "not a duration"},
		{"stepback before the epoch", "stepback 2s\n", 1, "goes before the epoch"},
		{"stepback zero", "stepback 0s\n", 1, "not a duration"},
		{"unknown option", "submit w\n  task a q=q colour=red\n> created pushed=w/a\n", 2, `unknown option "colour"`},
		{"bad int", "claim q max=lots\n> none\n", 1, `option max: bad value "lots"`},
		{"unterminated quote", "finish j t failed error=\"oops\n> error LEASELOST\n", 1, "unterminated quoted string"},
		{"bad error code", "claim q\n> error NOPE\n", 2, "error CODE"},
		{"stray indent", "at 2000\n  task a q=q\n", 2, "does not continue an operation"},
		{"indent after reply", "submit w\n  task a q=q\n> created pushed=w/a\n  task b q=q\n", 4, "does not continue an operation"},
		{"task outside submit", "claim q\n  task a q=q\n> none\n", 2, "takes no indented lines"},
		{"bad expect state", "expect workflow w sleeping\n", 1, `"sleeping" is not a state`},
		{"variable option", "enqueue j q=$q\n> created queued\n", 1, "cannot be a variable"},
		{"config late", "claim q\n> none\nconfig retention=1h\n", 3, "before the first operation"},
		{"undo payload alone", "submit w\n  task a q=q undo_payload=x\n> created pushed=w/a\n", 2, "undo_payload needs undo"},
		{"no operations", "# only a comment\n", 1, "no operations"},
		{"heartbeat odd", "heartbeat j1\n> j1 lost\n", 1, "usage: heartbeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.txt", strings.NewReader(tc.src))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *ParseError", err)
			}
			if pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Fatalf("got %q, want line %d and a message containing %q", err, tc.line, tc.msg)
			}
			if want := "bad.txt:" + strconv.Itoa(tc.line) + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %q does not start with %q", err, want)
			}
		})
	}
}

// TestParseValues checks the value notation: quotes, c*N, variables,
// comments, continuation lines and defaults.
func TestParseValues(t *testing.T) {
	s := parse(t, `# A title
# and a second line.

config retention=1h max_result=10
at 5000
submit w1 fail_fast undo_on_cancel=false  # a comment
  task a q=q payload="hello # not a comment" undo=u undo_payload=x*20
  task b q=q after=a always priority=-3 attempts=4 backoff=1500ms timeout=2m
> created pushed=w1/a
advance 1d
enqueue j q=q run_at=+5s
> created queued
finish j $t completed result=r
  outcome k tok failed error="a b" non_retryable retry_after=1s
  claim q,r max=2 lease=1m
> error LEASELOST
`)
	if s.Doc != "A title\nand a second line." {
		t.Errorf("doc %q", s.Doc)
	}
	if s.Config.Retention.Hours() != 1 || s.Config.Limits.MaxResult != 10 || s.Config.Limits.MaxTasks != weir.DefaultLimits().MaxTasks {
		t.Errorf("config %+v", s.Config)
	}
	if len(s.Steps) != 3 {
		t.Fatalf("%d steps", len(s.Steps))
	}
	sub := s.Steps[0].op.(*opSubmit).plan
	if !sub.FailFast || sub.UndoOnCancel || len(sub.Tasks) != 2 {
		t.Fatalf("plan %+v", sub)
	}
	a, b := sub.Tasks[0], sub.Tasks[1]
	if string(a.Payload) != "hello # not a comment" || a.Undo == nil || a.Undo.Queue != "u" || string(a.Undo.Payload) != strings.Repeat("x", 20) {
		t.Errorf("task a %+v", a)
	}
	if !b.Always || b.Priority != -3 || b.MaxAttempts != 4 || b.Backoff.Milliseconds() != 1500 || b.Timeout.Minutes() != 2 || len(b.After) != 1 {
		t.Errorf("task b %+v", b)
	}
	if s.Steps[0].Now.UnixMilli() != 5000 || s.Steps[1].Now.UnixMilli() != 5000+86_400_000 {
		t.Errorf("clock %v %v", s.Steps[0].Now, s.Steps[1].Now)
	}
	if got := s.Steps[1].op.(*opEnqueue).job.RunAt.UnixMilli(); got != 5000+86_400_000+5000 {
		t.Errorf("run_at %d", got)
	}
	f := s.Steps[2].op.(*opFinish)
	if len(f.outs) != 2 || !f.outs[0].token.isVar || f.outs[1].o.Error != "a b" || !f.outs[1].o.NonRetryable ||
		f.claim == nil || len(f.claim.Queues) != 2 || f.claim.Max != 2 {
		t.Errorf("finish %+v", f)
	}
	if s.Steps[0].Line != 6 || s.Steps[2].Line != 13 {
		t.Errorf("lines %d %d", s.Steps[0].Line, s.Steps[2].Line)
	}
}

// TestRunnerCatchesWrongReply feeds a scenario with one wrong expected
// reply and checks the runner reports it, with where and what.
func TestRunnerCatchesWrongReply(t *testing.T) {
	src := `# chain with a wrong expectation
submit w1
  task a q=q
  task b q=q after=a
> created pushed=w1/a
claim q
> w1/a attempt=1 token=$t1
finish w1/a $t1 completed
> completed pushed=- wf=running
`
	err := run(t, src)
	var m *Mismatch
	if !errors.As(err, &m) {
		t.Fatalf("got %v, want a *Mismatch", err)
	}
	if m.File != "test.txt" || m.Line != 8 {
		t.Errorf("mismatch at %s:%d, want test.txt:8", m.File, m.Line)
	}
	if len(m.Want) != 1 || m.Want[0] != "completed pushed=- wf=running" ||
		len(m.Got) != 1 || m.Got[0] != "completed pushed=w1/b wf=running" {
		t.Errorf("want %q got %q", m.Want, m.Got)
	}
	if !strings.Contains(err.Error(), "test.txt:8: finish w1/a $t1 completed") {
		t.Errorf("message %q does not name the line and step", err)
	}
	// The same file with the right reply passes.
	if err := run(t, strings.Replace(src, "pushed=- wf", "pushed=w1/b wf", 1)); err != nil {
		t.Fatal(err)
	}
}

// TestRunnerCatchesWrongState checks every kind of expectation can fail.
func TestRunnerCatchesWrongState(t *testing.T) {
	head := `submit w1
  task a q=q undo=u
  task b q=q after=a
> created pushed=w1/a
enqueue j q=p
> created queued
`
	for _, tc := range []struct{ name, line, got string }{
		{"workflow state", "expect workflow w1 completed", "running"},
		{"workflow field", "expect workflow w1 running fail_fast", "running fail_fast=false"},
		{"workflow missing", "expect workflow nope running", "error NOTFOUND"},
		{"unexpected error", "expect workflow w1 error NOTFOUND", "running"},
		{"task state", "expect task w1 b queued", "waiting"},
		{"task field", "expect task w1 a queued undo_queue=v", "queued undo_queue=u"},
		{"task missing", "expect task w1 zz queued", `error "(no code)`},
		{"tasks", "expect tasks w1 a=queued b=queued", "a=queued b=waiting"},
		{"tasks count", "expect tasks w1 a=queued", "a=queued b=waiting"},
		{"job", "expect job j queued priority=1", "queued priority=0"},
		{"job backoff", "expect job j queued backoff=2s", "queued backoff=1s"},
		{"queue", "expect queue q ready=w1/b", "ready=w1/a delayed=- running=-"},
		{"queue omitted", "expect queue p", "ready=j delayed=- running=-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t, head+tc.line+"\n")
			var m *Mismatch
			if !errors.As(err, &m) {
				t.Fatalf("got %v, want a *Mismatch", err)
			}
			if m.Line != 7 || len(m.Got) != 1 || !strings.HasPrefix(m.Got[0], tc.got) {
				t.Fatalf("got %v, want line 7 and got %q", err, tc.got)
			}
		})
	}
}

// TestRunnerVariables checks capture, reuse, mismatch of a bound variable
// and use before capture.
func TestRunnerVariables(t *testing.T) {
	base := `enqueue j q=q
> created queued
claim q
> j attempt=1 token=$t
expect job j running token=$t
`
	if err := run(t, base+"heartbeat extend=10s j $t\n> j deadline=11000\n"); err != nil {
		t.Fatal(err)
	}
	// A bound variable must match again.
	err := run(t, base+"enqueue k q=q\n> created queued\nclaim q\n> k attempt=1 token=$t\n")
	var m *Mismatch
	if !errors.As(err, &m) || m.Line != 8 {
		t.Fatalf("got %v, want a mismatch at line 8 (token $t already bound)", err)
	}
	// $_ matches anything and binds nothing.
	if err := run(t, "enqueue j q=q\n> created queued\nclaim q\n> j attempt=1 token=$_\n"); err != nil {
		t.Fatal(err)
	}
	err = run(t, "finish j $nope completed\n> error LEASELOST\n")
	if err == nil || !strings.Contains(err.Error(), "test.txt:1: variable $nope is used before") {
		t.Fatalf("got %v, want an undefined-variable error at line 1", err)
	}
}

// TestRunnerSkipsUnsupported: a store without a capability a step needs
// (QueueInspector, DueClaimer), or whose method answers
// errors.ErrUnsupported, has that step skipped and reported; the others
// run.
func TestRunnerSkipsUnsupported(t *testing.T) {
	const src = "enqueue j q=q\n> created queued\nexpect queue q ready=nonsense\ndue p\n> none next=12345\n"
	for _, c := range []struct {
		name string
		wrap func(engine.Store) engine.Store
		want []string
	}{
		{"no capabilities", func(s engine.Store) engine.Store { return plainStore{s} }, []string{"test.txt:3: expect queue", "test.txt:4: due p"}},
		{"unsupported", func(s engine.Store) engine.Store { return unsupported{s} }, []string{"test.txt:3: expect queue", "test.txt:4: due p"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := parse(t, src)
			target := NewModelTarget(s.Config)
			target.Store = c.wrap(target.Store)
			res, err := Run(context.Background(), s, target)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Skipped) != len(c.want) {
				t.Fatalf("skipped %q, want %q", res.Skipped, c.want)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(res.Skipped[i], w) {
					t.Fatalf("skipped %q, want %q", res.Skipped, c.want)
				}
			}
		})
	}
	// the reference has every capability: the same steps are checked
	s := parse(t, src)
	if _, err := Run(context.Background(), s, NewModelTarget(s.Config)); err == nil {
		t.Fatal("the model target skipped an expectation it can check")
	}
}

// plainStore is an engine.Store and nothing more.
type plainStore struct{ engine.Store }

// unsupported is a store whose optional methods answer
// errors.ErrUnsupported.
type unsupported struct{ engine.Store }

func (unsupported) QueueContents(context.Context, string) (engine.QueueContents, error) {
	return engine.QueueContents{}, errors.ErrUnsupported
}

func (unsupported) ClaimDue(context.Context, engine.ClaimParams) ([]engine.Claimed, time.Time, error) {
	return nil, time.Time{}, errors.ErrUnsupported
}

// TestFormatRoundTrip checks that rendered values read back as themselves.
func TestFormatRoundTrip(t *testing.T) {
	for _, v := range []string{"ra", "-", "a b", `q"uote`, "x*3", "$x", strings.Repeat("z", 40), "é", "\x00\xff", "#x", ""} {
		ws, err := lex("k=" + format(v))
		if err != nil || len(ws) != 1 || ws[0].val != v || ws[0].isVar {
			t.Errorf("%q: rendered %s, read back %+v (%v)", v, format(v), ws, err)
		}
	}
}
