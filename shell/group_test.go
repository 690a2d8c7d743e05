package shell_test

import (
	"testing"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/shell"
)

// A batch's catch command finds the steps' counts and first failure in
// WEIR_GROUP_*; its finally does not count the then and catch callbacks.
func TestGroupCallbackEnvironment(t *testing.T) {
	ctx, store := shellWorker(t)
	q := shell.Queue("sh")
	step := func(name, run string) client.Step { return client.NewStep(name, q, shell.Payload{Run: run}) }
	report := shell.Payload{Run: `printf '%s/%s/%s/%s/%s/%s' "$WEIR_GROUP_TOTAL" "$WEIR_GROUP_COMPLETED" "$WEIR_GROUP_FAILED" "$WEIR_GROUP_CANCELLED" "$WEIR_GROUP_FIRST_FAILURE" "$WEIR_GROUP_FIRST_ERROR"`}
	wf := client.NewWorkflow()
	g := client.Batch(wf, "g", step("a", "true"), step("b", "echo nope >&2; exit 3"), step("c", "true"))
	client.Then(g, q, report)
	catch := client.Catch(g, q, report)
	fin := client.Finally(g, q, report)
	if err := client.New(store).Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	s, _ := wf.Wait(ctx)
	for task, want := range map[*client.Task[string]]string{
		catch: "3/2/1/0/b/exit status 3: nope",
		fin:   "3/2/1/0/b/exit status 3: nope",
	} {
		got, err := client.ResultOf(s, task)
		if err != nil || got != want {
			t.Errorf("%s printed %q, %v; want %q", task.Name(), got, err, want)
		}
	}
}
