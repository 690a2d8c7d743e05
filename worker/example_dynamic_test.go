package worker_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

// A fan-out whose width is known only at run time, in one workflow: the
// split task reads its input, adds one count task per line (AddTasks, with
// its completed finish) and gates its dependent, the total, on them; the
// total then gets every count's result as a dependency.
func ExampleJobInfo_AddTasks() {
	ctx := context.Background()
	store := memstore.New()
	split := client.NewQueue[string, int]("split")
	count := client.NewQueue[string, int]("count")
	sum := client.NewQueue[struct{}, int]("sum")
	w := worker.New(store, worker.Config{})
	worker.Handle(w, split, func(ctx context.Context, j *worker.Job[string]) (int, error) {
		lines := strings.Split(j.Payload, "\n")
		add := client.NewWorkflow()
		me := client.Existing(add, j.Task)
		for i, l := range lines {
			client.AddTask(add, fmt.Sprintf("count-%d", i), count, l).After(me)
		}
		if err := j.AddTasks(add, worker.GateDependents()); err != nil {
			return 0, err
		}
		return len(lines), nil
	})
	worker.Handle(w, count, func(ctx context.Context, j *worker.Job[string]) (int, error) {
		return len(strings.Fields(j.Payload)), nil
	})
	worker.Handle(w, sum, func(ctx context.Context, j *worker.Job[struct{}]) (int, error) {
		total := 0
		for _, d := range j.Deps[1:] { // the split's outcome first, then the counts
			n, err := worker.DepResult[int](j, d.Task)
			if err != nil {
				return 0, err
			}
			total += n
		}
		return total, nil
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	wf := client.NewWorkflow()
	s := client.AddTask(wf, "split", split, "a b c\nd e\nf")
	total := client.AddTask(wf, "total", sum, struct{}{}).After(s)
	_ = client.New(store).Submit(ctx, wf)
	st, _ := wf.Wait(ctx)
	fmt.Println(client.ResultOf(st, total))
	for _, t := range st.Tasks {
		fmt.Printf("%s %s after=%v added_by=%q\n", t.Name, t.State, t.After, t.AddedBy)
	}
	// Output:
	// 6 <nil>
	// split completed after=[] added_by=""
	// total completed after=[split count-0 count-1 count-2] added_by=""
	// count-0 completed after=[split] added_by="split"
	// count-1 completed after=[split] added_by="split"
	// count-2 completed after=[split] added_by="split"
}
