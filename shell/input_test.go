package shell_test

import (
	"context"
	"encoding/json"
	"github.com/weirflow/weir"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/worker"
	"github.com/weirflow/weir/workflowfile"
)

// WEIR_INPUT's deps lists a task's dependencies in its after order, not
// by name: its own (zeta, alpha, split), then the tasks split added with
// gate_dependents, in the order added (c-2 before c-10).
func TestInputDepsInAfterOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store := memstore.New()
	limits := weir.DefaultLimits()
	w := worker.New(store, worker.Config{})
	shell.Register(w, []string{"sh"}, limits.MaxResult, shell.AddTasksWith(func(data []byte, dir string) ([]engine.TaskSpec, bool, error) {
		return workflowfile.ParseAdded("WEIR_ADD_TASKS", data, workflowfile.Options{Dir: dir, Limits: limits})
	}))
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())

	q := shell.Queue("sh")
	wf := client.NewWorkflow()
	zeta := client.AddTask(wf, "zeta", q, shell.Payload{Run: "printf z"})
	alpha := client.AddTask(wf, "alpha", q, shell.Payload{Run: "printf a"})
	split := client.AddTask(wf, "split", q, shell.Payload{Run: `cat > "$WEIR_ADD_TASKS" <<'END'
gate_dependents: true
tasks:
  - {name: c-2, queue: sh, after: [split], run: printf 2}
  - {name: c-10, queue: sh, after: [split], run: printf 10}
END`})
	report := client.AddTask(wf, "report", q, shell.Payload{Run: `cat "$WEIR_INPUT"`})
	report.After(zeta, alpha, split)
	if err := client.New(store).Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	s, err := wf.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := client.ResultOf(s, report)
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	var doc struct{ Deps json.RawMessage }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("WEIR_INPUT %q: %v", out, err)
	}
	var names []string
	dec := json.NewDecoder(strings.NewReader(string(doc.Deps)))
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tok.(string))
		var v struct {
			State  string
			Result string
		}
		if err := dec.Decode(&v); err != nil || v.State != "completed" {
			t.Fatalf("deps member %s: %+v, %v", tok, v, err)
		}
	}
	if got, want := strings.Join(names, ","), "zeta,alpha,split,c-2,c-10"; got != want {
		t.Errorf("deps in the order %s, want %s; WEIR_INPUT:\n%s", got, want, out)
	}
}
