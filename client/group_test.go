package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/worker"
)

// groupStores is memstore and the Redis stores.
func groupStores(t *testing.T) map[string]client.Store {
	s := redisStores(t)
	s["memstore"] = memstore.New()
	return s
}

// runGroup runs wf on store with a worker whose "send" handler fails
// payloads that start with "bad", and whose "report" handler records
// "<task> <summary>" lines; it returns the final snapshot and the lines
// in the order the callbacks ran.
func runGroup(t *testing.T, store client.Store, wf *client.Workflow) (weir.Workflow, []string) {
	t.Helper()
	ctx := testCtx(t)
	var mu sync.Mutex
	var lines []string
	w := worker.New(store, worker.Config{Concurrency: 1})
	worker.Handle(w, sendQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		if strings.HasPrefix(j.Payload, "bad") {
			return "", worker.NonRetryable(errors.New("no " + j.Payload))
		}
		return j.Payload, nil
	})
	worker.Handle(w, reportQ, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		g := j.Group()
		first := "-"
		if g.FirstFailure != nil {
			first = g.FirstFailure.Task + "/" + string(g.FirstFailure.State)
		}
		mu.Lock()
		lines = append(lines, fmt.Sprintf("%s total=%d completed=%d failed=%d cancelled=%d first=%s", j.Task, g.Total, g.Completed, g.Failed, g.Cancelled, first))
		mu.Unlock()
		return "", nil
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	if err := client.New(store).Submit(ctx, wf); err != nil {
		t.Fatal(err)
	}
	s, _ := wf.Wait(ctx)
	mu.Lock()
	defer mu.Unlock()
	return s, append([]string(nil), lines...)
}

func TestGroupCallbacks(t *testing.T) {
	type want struct {
		state weir.WorkflowState
		lines []string
	}
	cases := []struct {
		name  string
		build func(wf *client.Workflow)
		want  want
	}{{
		name: "chain stops at its failure",
		build: func(wf *client.Workflow) {
			g := client.Chain(wf, "c", client.NewStep("a", sendQ, "ok"), client.NewStep("b", sendQ, "bad-b"), client.NewStep("d", sendQ, "ok"))
			client.Then(g, reportQ, "")
			client.Catch(g, reportQ, "")
			client.Finally(g, reportQ, "")
		},
		want: want{weir.WorkflowFailed, []string{
			"c.catch total=3 completed=1 failed=1 cancelled=1 first=b/failed",
			"c.finally total=3 completed=1 failed=1 cancelled=1 first=b/failed",
		}},
	}, {
		name: "batch all completed",
		build: func(wf *client.Workflow) {
			g := client.Batch(wf, "b", client.NewStep("x", sendQ, "ok"), client.NewStep("y", sendQ, "ok"))
			client.Then(g, reportQ, "")
			client.Catch(g, reportQ, "")
			client.Finally(g, reportQ, "")
		},
		want: want{weir.WorkflowCompleted, []string{
			"b.then total=2 completed=2 failed=0 cancelled=0 first=-",
			"b.finally total=2 completed=2 failed=0 cancelled=0 first=-",
		}},
	}, {
		name: "batch allowing failures completes",
		build: func(wf *client.Workflow) {
			g := client.Batch(wf, "b", client.NewStep("x", sendQ, "bad-x"), client.NewStep("y", sendQ, "ok"))
			client.Then(g, reportQ, "")
			client.Catch(g, reportQ, "")
			g.AllowFailures() // after Then: it still applies
		},
		want: want{weir.WorkflowCompleted, []string{
			"b.then total=2 completed=1 failed=1 cancelled=0 first=x/failed",
			"b.catch total=2 completed=1 failed=1 cancelled=0 first=x/failed",
		}},
	}, {
		name: "batch with catch and finally but no then fails",
		build: func(wf *client.Workflow) {
			g := client.Batch(wf, "b", client.NewStep("x", sendQ, "bad-x"), client.NewStep("y", sendQ, "ok"))
			client.Catch(g, reportQ, "")
			client.Finally(g, reportQ, "")
		},
		want: want{weir.WorkflowFailed, []string{
			"b.catch total=2 completed=1 failed=1 cancelled=0 first=x/failed",
			"b.finally total=2 completed=1 failed=1 cancelled=0 first=x/failed",
		}},
	}, {
		name: "chain with only finally fails",
		build: func(wf *client.Workflow) {
			g := client.Chain(wf, "c", client.NewStep("x", sendQ, "ok"), client.NewStep("y", sendQ, "bad-y"))
			client.Finally(g, reportQ, "")
		},
		want: want{weir.WorkflowFailed, []string{
			"c.finally total=2 completed=1 failed=1 cancelled=0 first=y/failed",
		}},
	}, {
		name: "batch allowing failures with catch and finally only completes",
		build: func(wf *client.Workflow) {
			g := client.Batch(wf, "b", client.NewStep("x", sendQ, "bad-x"), client.NewStep("y", sendQ, "ok"))
			client.Catch(g, reportQ, "")
			client.Finally(g, reportQ, "")
			g.AllowFailures() // after the callbacks: it still applies
		},
		want: want{weir.WorkflowCompleted, []string{
			"b.catch total=2 completed=1 failed=1 cancelled=0 first=x/failed",
			"b.finally total=2 completed=1 failed=1 cancelled=0 first=x/failed",
		}},
	}, {
		name: "a group after a task",
		build: func(wf *client.Workflow) {
			first := client.AddTask(wf, "first", sendQ, "bad-first")
			g := client.Batch(wf, "b", client.NewStep("x", sendQ, "ok")).After(first)
			client.Catch(g, reportQ, "")
		},
		want: want{weir.WorkflowFailed, []string{
			"b.catch total=1 completed=0 failed=0 cancelled=1 first=x/cancelled",
		}},
	}}
	for name, store := range groupStores(t) {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				wf := client.NewWorkflow()
				c.build(wf)
				s, lines := runGroup(t, store, wf)
				if s.State != c.want.state {
					t.Errorf("workflow %s, want %s", s.State, c.want.state)
				}
				if strings.Join(lines, "\n") != strings.Join(c.want.lines, "\n") {
					t.Errorf("callbacks ran:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(c.want.lines, "\n"))
				}
			})
		}
	}
}

func TestGroupBuildErrors(t *testing.T) {
	cases := map[string]func(wf *client.Workflow){
		"no steps":  func(wf *client.Workflow) { client.Batch(wf, "b") },
		"zero step": func(wf *client.Workflow) { client.Batch(wf, "b", client.Step{}) },
		"chain allowing failures": func(wf *client.Workflow) {
			client.Chain(wf, "c", client.NewStep("a", sendQ, "")).AllowFailures()
		},
		"then after finally": func(wf *client.Workflow) {
			g := client.Batch(wf, "b", client.NewStep("a", sendQ, ""))
			client.Finally(g, reportQ, "")
			client.Then(g, reportQ, "")
		},
		"two catches": func(wf *client.Workflow) {
			g := client.Batch(wf, "b", client.NewStep("a", sendQ, ""))
			client.Catch(g, reportQ, "")
			client.Catch(g, reportQ, "")
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			wf := client.NewWorkflow()
			build(wf)
			var be *weir.BuildError
			if err := client.New(memstore.New()).Submit(context.Background(), wf); !errors.As(err, &be) {
				t.Fatalf("Submit: %v, want a *weir.BuildError", err)
			}
		})
	}
}

// An OnFailure task needs Always and a dependency: the store refuses one
// without a dependency with a ValidationError on field on_failure.
func TestOnFailureNeedsADependency(t *testing.T) {
	wf := client.NewWorkflow()
	client.AddTask(wf, "a", sendQ, "").OnFailure()
	var ve *weir.ValidationError
	if err := client.New(memstore.New()).Submit(context.Background(), wf); !errors.As(err, &ve) || ve.Field != "on_failure" {
		t.Fatalf("Submit: %v, want a ValidationError on on_failure", err)
	}
}
