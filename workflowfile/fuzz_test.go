package workflowfile

import (
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirflow/weir/engine"
)

// maxFuzzFile bounds the inputs the file fuzzer tries: a workflow file is
// read whole, so bigger inputs only cost time.
const maxFuzzFile = 256 << 10

// FuzzParseFile feeds arbitrary bytes, as YAML and as JSON, to the workflow
// file parser (decodeFile, then Parse's checks). It never panics; it
// returns an *Error naming the file or a plan the engine accepts, whose
// queues are listed; and the plan it builds is bounded by the input: a
// small file cannot make a large plan.
func FuzzParseFile(f *testing.F) {
	for _, name := range []string{"pipeline.yaml", "saga.yaml", "retry.yaml", "failfast.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	f.Add([]byte(`{"id":"j1","tasks":[{"name":"a","run":"echo a"},{"name":"b","run":"echo b","after":["a"],"backoff":"250ms","timeout":"1s","retries":2,"undo":{"run":"echo u","queue":"q"}}]}`), true)
	f.Add([]byte("tasks:\n  - name: a\n    run: x\n  - name: a\n    run: y\n"), false)
	f.Add([]byte("tasks:\n  - name: a\n    run: x\n    after: [b]\n"), false)
	f.Add([]byte("tasks:\n  - &t {name: a, run: x}\n  - *t\n"), false)
	f.Add([]byte("tasks: [{name: a, run: x, backoff: -1s, timeout: 1.5ms}]\n---\nid: two\n"), false)
	f.Add([]byte(`{"tasks":[{"name":"a","run":"x","retries":1e9}]}`), true)
	f.Add([]byte(`{"tasks":[{"name":"a","queue":"q","payload":{"n":1.0,"s":"x","l":[true,null,-1.5e3,{"run":"y"}]},"priority":-3,"undo":{"payload":null}}]}`), true)
	f.Add([]byte("tasks:\n  - {name: a, queue: q, payload: &p {b: [1, 2.5, .inf], a: ~}}\n  - {name: b, queue: q, payload: *p, after: [a]}\n"), false)
	limits := weir.DefaultLimits()
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		if len(data) > maxFuzzFile {
			t.Skip()
		}
		path := "w.yaml"
		if asJSON {
			path = "w.json"
		}
		lf, err := Parse(path, data, Options{Dir: "/flows", Limits: limits})
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.File != path || fe.Problem == "" {
				t.Fatalf("error %T %v is not a *Error about %s", err, err, path)
			}
			if lf != nil {
				t.Fatal("a plan with an error")
			}
			return
		}
		if err := engine.ValidatePlan(lf.Plan, limits); err != nil {
			t.Fatalf("the parser accepted a plan the engine refuses: %v", err)
		}
		size := 0
		for _, tk := range lf.Plan.Tasks {
			if !slices.Contains(lf.Queues, tk.Queue) {
				t.Fatalf("queue %q of task %q not listed in %q", tk.Queue, tk.Name, lf.Queues)
			}
			size += len(tk.Payload) + len(tk.Name)
			if tk.Undo != nil {
				if !slices.Contains(lf.Queues, tk.Undo.Queue) {
					t.Fatalf("undo queue %q of task %q not listed", tk.Undo.Queue, tk.Name)
				}
				size += len(tk.Undo.Payload)
			}
		}
		// Each task costs at least a few bytes of input, and its payload is
		// its command plus the directory and a few bytes of encoding.
		if bound := 64*len(data) + 4096; size > bound {
			t.Fatalf("%d input bytes made a plan of %d bytes (bound %d)", len(data), size, bound)
		}
	})
}

// A YAML anchor on one task's command, aliased by every other task, would
// make a plan far larger than the file (each task's payload is a copy; the
// engine bounds tasks and each payload, not their total): the parser
// refuses a file whose expanded commands pass MaxCommands.
func TestAliasAmplification(t *testing.T) {
	var b strings.Builder
	b.WriteString("tasks:\n  - {name: t, run: &big " + strings.Repeat("a", 100_000) + "}\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  - {name: t%d, run: *big}\n", i)
	}
	lf, err := Parse("w.yaml", []byte(b.String()), Options{Dir: "/d"})
	var fe *Error
	if errors.As(err, &fe) && fe.Field == "run" && strings.Contains(fe.Problem, "commands total more than") {
		return // refused, with the reason
	}
	if err != nil {
		t.Fatalf("refused for another reason: %v", err)
	}
	size := 0
	for _, tk := range lf.Plan.Tasks {
		size += len(tk.Payload)
	}
	if size > 64*b.Len() {
		t.Fatalf("a %d-byte file made a plan of %d bytes", b.Len(), size)
	}
}
