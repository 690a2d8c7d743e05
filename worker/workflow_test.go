package worker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/worker"
)

type Image struct {
	Name  string `json:"name"`
	Width int    `json:"width"`
}

var (
	fetchQ   = client.NewQueue[string, Image]("fetch")
	resizeQ  = client.NewQueue[int, Image]("resize")
	reportQ  = client.NewQueue[string, string]("report")
	cleanupQ = client.NewQueue[string, []string]("cleanup")
)

// A DAG passes typed results along its edges; the workflow is followed
// from another process by ID.
func TestWorkflowPassesResults(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		ev := newEvents()
		cfg := fastConfig()
		cfg.Observer = ev.observe
		w := worker.New(b.open(t), cfg)
		worker.Handle(w, fetchQ, func(ctx context.Context, j *worker.Job[string]) (Image, error) {
			return Image{Name: j.Payload, Width: 1000}, nil
		})
		worker.Handle(w, resizeQ, func(ctx context.Context, j *worker.Job[int]) (Image, error) {
			src, err := worker.DepResult[Image](j, "fetch")
			if err != nil {
				return Image{}, err
			}
			return Image{Name: fmt.Sprintf("%s@%d", src.Name, j.Payload), Width: j.Payload}, nil
		})
		worker.Handle(w, reportQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			var names []string
			for _, d := range j.Deps {
				img, err := worker.DepResult[Image](j, d.Task)
				if err != nil {
					return "", err
				}
				names = append(names, img.Name)
			}
			return j.Payload + ": " + strings.Join(names, ", "), nil
		})
		start(t, w)

		wf := client.NewWorkflow(client.WorkflowID("thumbs"))
		fetch := client.AddTask(wf, "fetch", fetchQ, "cat.png")
		small := client.AddTask(wf, "small", resizeQ, 100).After(fetch)
		large := client.AddTask(wf, "large", resizeQ, 800).After(fetch)
		report := client.AddTask(wf, "report", reportQ, "done").After(small, large)
		producer := client.New(b.open(t))
		if err := producer.Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		s, err := client.New(b.open(t)).OpenWorkflow("thumbs").Wait(ctx)
		if err != nil {
			t.Fatalf("Wait = %v", err)
		}
		if got, err := client.ResultOf(s, report); err != nil || got != "done: cat.png@100, cat.png@800" {
			t.Fatalf("report = %q, %v", got, err)
		}
		if got, err := client.ResultOf(s, large); err != nil || got != (Image{"cat.png@800", 800}) {
			t.Fatalf("large = %+v, %v", got, err)
		}
		if got, err := client.ResultOf(s, fetch); err != nil || got.Width != 1000 {
			t.Fatalf("fetch = %+v, %v", got, err)
		}
		// The handle the producer kept sees the same.
		if s2, err := wf.Wait(ctx); err != nil || s2.State != weir.WorkflowCompleted {
			t.Fatalf("producer's Wait = %v, %v", s2.State, err)
		}
		e := ev.waitFor(t, ctx, worker.EventWorkflowEnded, "", 1)
		if e.Workflow != "thumbs" || e.WorkflowState != weir.WorkflowCompleted {
			t.Fatalf("workflow ended event = %+v", e)
		}
		// fetch promoted small and large; small and large together promoted
		// report (the observer may hear of a finish after the workflow's
		// end: wait for the third, then no other may have come)
		ev.waitFor(t, ctx, worker.EventPromoted, "", 3)
		if n := ev.count(worker.EventPromoted, ""); n != 3 {
			t.Fatalf("%d promoted events; want 3", n)
		}
	})
}

// An Always task runs after a failed dependency and reads how it ended;
// the failure is absorbed.
func TestAlwaysTaskSeesFailedDependency(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		w := worker.New(b.open(t), fastConfig())
		worker.Handle(w, fetchQ, func(ctx context.Context, j *worker.Job[string]) (Image, error) {
			return Image{}, worker.NonRetryable(errors.New("404 " + j.Payload))
		})
		worker.Handle(w, cleanupQ, func(ctx context.Context, j *worker.Job[string]) ([]string, error) {
			var seen []string
			for _, d := range j.Deps {
				_, err := worker.DepResult[Image](j, d.Task)
				var je *weir.JobError
				if !errors.As(err, &je) || !errors.Is(err, weir.ErrFailed) {
					return nil, fmt.Errorf("dep %s: %v; want a failed JobError", d.Task, err)
				}
				seen = append(seen, d.Task+" "+string(je.State)+": "+je.Message)
			}
			if _, err := worker.DepResult[Image](j, "nope"); !errors.Is(err, weir.ErrNoDependency) {
				return nil, fmt.Errorf("DepResult of a non-dependency = %v", err)
			}
			return seen, nil
		})
		start(t, w)
		wf := client.NewWorkflow()
		f := client.AddTask(wf, "fetch", fetchQ, "a.png")
		cl := client.AddTask(wf, "cleanup", cleanupQ, "tmp").After(f).Always()
		if err := client.New(b.open(t)).Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		s, err := wf.Wait(ctx)
		if err != nil {
			t.Fatalf("Wait = %v; want the failure absorbed", err)
		}
		got, err := client.ResultOf(s, cl)
		if err != nil || fmt.Sprint(got) != "[fetch failed: 404 a.png]" {
			t.Fatalf("cleanup = %v, %v", got, err)
		}
		if _, err := client.ResultOf(s, f); !errors.Is(err, weir.ErrFailed) {
			t.Fatalf("ResultOf(fetch) = %v; want ErrFailed", err)
		}
	})
}

type Booking struct {
	Ref string `json:"ref"`
}

var (
	bookQ   = client.NewQueue[string, Booking]("book")
	unbookQ = client.NewQueue[string, string]("unbook")
)

// A saga whose last step fails undoes the completed steps in reverse
// order; each undo reads the result of the step it undoes.
func TestSagaUndoesInReverseOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		var mu sync.Mutex
		var undone []string
		w := worker.New(b.open(t), fastConfig())
		worker.Handle(w, bookQ, func(ctx context.Context, j *worker.Job[string]) (Booking, error) {
			if j.Payload == "car" {
				return Booking{}, errors.New("no car left")
			}
			return Booking{Ref: j.Payload + "-42"}, nil
		})
		worker.Handle(w, unbookQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			if !j.Undo {
				return "", errors.New("not an undo job")
			}
			bk, err := worker.DepResult[Booking](j, j.Task)
			if err != nil {
				return "", err
			}
			mu.Lock()
			undone = append(undone, bk.Ref)
			mu.Unlock()
			return "released " + bk.Ref, nil
		})
		start(t, w)
		wf := client.NewWorkflow()
		flight := client.Undo(client.AddTask(wf, "flight", bookQ, "flight"), unbookQ, "flight")
		hotel := client.Undo(client.AddTask(wf, "hotel", bookQ, "hotel").After(flight), unbookQ, "hotel")
		client.AddTask(wf, "car", bookQ, "car").After(hotel)
		if err := client.New(b.open(t)).Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		s, err := wf.Wait(ctx)
		var we *weir.WorkflowError
		if !errors.As(err, &we) || !errors.Is(err, weir.ErrFailed) || we.State != weir.WorkflowCompensated || we.Task != "car" || we.Message != "no car left" {
			t.Fatalf("Wait = %v; want compensated after car failed", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(undone) != "[hotel-42 flight-42]" {
			t.Fatalf("undone %v; want [hotel-42 flight-42]", undone)
		}
		for _, task := range s.Tasks[:2] {
			if task.Undo == nil || task.Undo.State != weir.Completed {
				t.Fatalf("task %s undo = %+v; want completed", task.Name, task.Undo)
			}
		}
	})
}

// Cancelling a workflow cancels its running handler's context, and the
// tasks after it never run.
func TestWorkflowCancelReachesRunningHandler(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		w := worker.New(b.open(t), fastConfig())
		started, cause := handleUntilDone(w, nil)
		var ranReport atomic.Bool
		worker.Handle(w, reportQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			ranReport.Store(true)
			return "", nil
		})
		start(t, w)
		wf := client.NewWorkflow()
		long := client.AddTask(wf, "long", blockQ, "x", client.MaxAttempts(3))
		client.AddTask(wf, "after", reportQ, "y").After(long)
		client.AddTask(wf, "finally", reportQ, "z").After(long).Always()
		c := client.New(b.open(t))
		if err := c.Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		<-started
		// Another process cancels it, by ID.
		if _, err := client.New(b.open(t)).OpenWorkflow(wf.ID()).Cancel(ctx, client.WithUndo(false)); err != nil {
			t.Fatal(err)
		}
		if err := <-cause; !errors.Is(err, weir.ErrJobCancelled) {
			t.Fatalf("cause = %v; want ErrJobCancelled", err)
		}
		s, err := wf.Wait(ctx)
		if !errors.Is(err, weir.ErrCancelled) || s.State != weir.WorkflowCancelled {
			t.Fatalf("Wait = %v, %v; want cancelled", s.State, err)
		}
		for _, task := range s.Tasks {
			if task.State != weir.Cancelled {
				t.Errorf("task %s is %s; want cancelled", task.Name, task.State)
			}
		}
		if s.Tasks[0].Attempt != 1 {
			t.Errorf("long ran %d attempts; want 1 (a cancel is never retried)", s.Tasks[0].Attempt)
		}
		if ranReport.Load() {
			t.Error("a task after the cancelled one ran")
		}
		if _, err := wf.Cancel(ctx); !errors.Is(err, weir.ErrWorkflowEnded) {
			t.Fatalf("Cancel of an ended workflow = %v; want ErrWorkflowEnded", err)
		}
	})
}

// Cancel with undo compensates the completed tasks of a running workflow.
func TestWorkflowCancelWithUndo(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := testCtx(t)
		w := worker.New(b.open(t), fastConfig())
		var mu sync.Mutex
		var undone []string
		worker.Handle(w, bookQ, func(ctx context.Context, j *worker.Job[string]) (Booking, error) {
			return Booking{Ref: j.Payload}, nil
		})
		worker.Handle(w, unbookQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
			mu.Lock()
			undone = append(undone, j.Task)
			mu.Unlock()
			return "", nil
		})
		started, _ := handleUntilDone(w, nil)
		start(t, w)
		wf := client.NewWorkflow()
		a := client.Undo(client.AddTask(wf, "a", bookQ, "a"), unbookQ, "a")
		client.AddTask(wf, "wait", blockQ, "").After(a)
		c := client.New(b.open(t))
		if err := c.Submit(ctx, wf); err != nil {
			t.Fatal(err)
		}
		<-started
		if _, err := wf.Cancel(ctx); err != nil { // UndoOnCancel defaults to true
			t.Fatal(err)
		}
		s, err := wf.Wait(ctx)
		var we *weir.WorkflowError
		if !errors.As(err, &we) || !errors.Is(err, weir.ErrCancelled) || s.State != weir.WorkflowCompensated || s.Reason != weir.ReasonCancel {
			t.Fatalf("Wait = %v (%s); want compensated after cancel", err, s.State)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(undone, []string{"a"}) {
			t.Fatalf("undone %v; want [a]", undone)
		}
	})
}
