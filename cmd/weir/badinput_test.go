package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	weirpkg "github.com/weirflow/weir"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/rest"
)

// testToken is the REST API's token in the tests.
const testToken = "s3cret-token-of-the-tests"

// badEnv is one namespace reached three ways: the Go API (a redisstore.Store),
// the CLI binary (--redis, --namespace) and the REST API (on the store).
type badEnv struct {
	rdb   *redis.Client
	url   string
	ns    string
	store *redisstore.Store
	api   http.Handler
	live  engine.Claimed // the running job of workflow "live"
}

func newBadEnv(t *testing.T) *badEnv {
	t.Helper()
	srv := redistest.Default(t)
	e := &badEnv{rdb: redistest.Client(t, srv.Options), url: srv.URL}
	e.ns = redistest.Namespace(t, e.rdb, "bad")
	s, err := redisstore.New(e.rdb, redisstore.Options{Namespace: e.ns})
	if err != nil {
		t.Fatal(err)
	}
	e.store = s
	if e.api, err = rest.NewHandler(rest.Config{Store: s, Token: testToken, Limits: s.Config().Limits}); err != nil {
		t.Fatal(err)
	}

	// "live": one task, claimed (running); "done": one task, completed.
	ctx := t.Context()
	for _, id := range []string{"live", "done"} {
		p := engine.Plan{ID: id, Tasks: []engine.TaskSpec{{Name: "a", Queue: "q-" + id}}}
		if _, err := s.Submit(ctx, engine.SubmitParams{Plan: p}); err != nil {
			t.Fatal(err)
		}
		cs, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q-" + id}, Max: 1, Lease: time.Hour})
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim %s: %v %v", id, cs, err)
		}
		if id == "live" {
			e.live = cs[0]
			continue
		}
		res, err := s.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: cs[0].Job.ID, Token: cs[0].Lease.Token, Kind: engine.OutcomeCompleted, Result: []byte("x")}}})
		if err != nil || res.Settled[0].Err != nil {
			t.Fatalf("finish: %v %+v", err, res)
		}
	}
	return e
}

// keys lists the namespace's keys, sorted.
func (e *badEnv) keys(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	iter := e.rdb.Scan(ctx, 0, "weir:{"+e.ns+":*", 1000).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// badCase is one bad input, sent through every interface that takes it.
type badCase struct {
	name string
	// want is the sentinel the Go API returns; field must appear in every
	// interface's message (and be the ValidationError's field, REST's field).
	want  error
	field string
	// goAPI makes the call through the Go API.
	goAPI func(ctx context.Context, e *badEnv) error
	// file, when set, is a workflow file (JSON) given to `weir submit` and
	// POSTed to /v1/workflows; else cli and rest say what to send.
	file string
	cli  []string
	// cliCode is the CLI's exit status: 2 for bad input, 1 for a
	// well-formed request about a missing or ended record.
	cliCode    int
	restMethod string
	restPath   string
	restStatus int
	restCodes  []string // accepted codes of the REST error body
}

// planFile returns a workflow file of tasks (name, after..., extra JSON).
func planFile(id string, tasks ...string) string {
	b, _ := json.Marshal(map[string]any{"id": id, "tasks": json.RawMessage("[" + strings.Join(tasks, ",") + "]")})
	return string(b)
}

func submitGo(tasks ...engine.TaskSpec) func(context.Context, *badEnv) error {
	return func(ctx context.Context, e *badEnv) error {
		_, err := e.store.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "wf-new", Tasks: tasks}})
		return err
	}
}

func manyTasks(n int) ([]engine.TaskSpec, string) {
	specs := make([]engine.TaskSpec, n)
	files := make([]string, n)
	for i := range specs {
		specs[i] = engine.TaskSpec{Name: fmt.Sprintf("t%d", i), Queue: "q"}
		files[i] = fmt.Sprintf(`{"name":"t%d","run":"true"}`, i)
	}
	return specs, planFile("wf-new", files...)
}

// TestBadInputCatalogue sends each bad input through the Go API, the CLI
// and the REST API (each where it can be expressed): every one answers a
// typed error that names the field (errors.Is with the engine's sentinel;
// exit status 2, or 1 for a missing or ended record; a REST error code
// and field), and none writes anything: the namespace's keys are the same
// before and after.
func TestBadInputCatalogue(t *testing.T) {
	e := newBadEnv(t)
	limits := e.store.Config().Limits
	big := strings.Repeat("x", limits.MaxPayload+1)
	tooMany, tooManyFile := manyTasks(limits.MaxTasks + 1)
	cases := []badCase{{
		name: "bad task name", want: weirpkg.ErrInvalid, field: "name",
		goAPI: submitGo(engine.TaskSpec{Name: "bad name", Queue: "q"}),
		file:  planFile("wf-new", `{"name":"bad name","run":"true"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "task name with a key separator", want: weirpkg.ErrInvalid, field: "name",
		goAPI: submitGo(engine.TaskSpec{Name: "a:b{c}", Queue: "q"}),
		file:  planFile("wf-new", `{"name":"a:b{c}","run":"true"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "cycle", want: weirpkg.ErrInvalid, field: "after",
		goAPI: submitGo(engine.TaskSpec{Name: "a", Queue: "q", After: []string{"b"}}, engine.TaskSpec{Name: "b", Queue: "q", After: []string{"a"}}),
		file:  planFile("wf-new", `{"name":"a","run":"true","after":["b"]}`, `{"name":"b","run":"true","after":["a"]}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "self dependency", want: weirpkg.ErrInvalid, field: "after",
		goAPI: submitGo(engine.TaskSpec{Name: "a", Queue: "q", After: []string{"a"}}),
		file:  planFile("wf-new", `{"name":"a","run":"true","after":["a"]}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "unknown dependency", want: weirpkg.ErrInvalid, field: "after",
		goAPI: submitGo(engine.TaskSpec{Name: "a", Queue: "q", After: []string{"zz"}}),
		file:  planFile("wf-new", `{"name":"a","run":"true","after":["zz"]}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "duplicate task name", want: weirpkg.ErrInvalid, field: "name",
		goAPI: submitGo(engine.TaskSpec{Name: "a", Queue: "q"}, engine.TaskSpec{Name: "a", Queue: "q"}),
		file:  planFile("wf-new", `{"name":"a","run":"true"}`, `{"name":"a","run":"false"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "bad workflow ID", want: weirpkg.ErrInvalid, field: "id",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "x{y}:*", Tasks: []engine.TaskSpec{{Name: "a", Queue: "q"}}}})
			return err
		},
		file: planFile("x{y}:*", `{"name":"a","run":"true"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "existing ID with another plan", want: weirpkg.ErrWorkflowExists, field: "id",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.Submit(ctx, engine.SubmitParams{Plan: engine.Plan{ID: "live", Tasks: []engine.TaskSpec{{Name: "b", Queue: "q"}}}})
			return err
		},
		file: planFile("live", `{"name":"b","run":"true"}`), cliCode: 1, restStatus: 409, restCodes: []string{"WFEXISTS"},
	}, {
		name: "oversized payload", want: weirpkg.ErrTooLarge, field: "payload",
		goAPI: submitGo(engine.TaskSpec{Name: "a", Queue: "q", Payload: []byte(big)}),
	}, {
		name: "oversized command", want: weirpkg.ErrInvalid, field: "run",
		goAPI: nil,
		file:  planFile("wf-new", `{"name":"a","run":"`+big+`"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID", "TOOLARGE"},
	}, {
		name: "oversized workflow", want: weirpkg.ErrTooLarge, field: "tasks",
		goAPI: submitGo(tooMany...),
		file:  tooManyFile, cliCode: 2, restStatus: 400, restCodes: []string{"INVALID", "TOOLARGE"},
	}, {
		name: "oversized result", want: weirpkg.ErrTooLarge, field: "result",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: e.live.Job.ID, Token: e.live.Lease.Token,
				Kind: engine.OutcomeCompleted, Result: make([]byte, limits.MaxResult+1)}}})
			return err
		},
	}, {
		name: "oversized batch", want: weirpkg.ErrInvalid, field: "max",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: limits.MaxBatch + 1, Lease: time.Second})
			return err
		},
	}, {
		name: "fractional backoff", want: weirpkg.ErrInvalid, field: "backoff",
		goAPI: submitGo(engine.TaskSpec{Name: "a", Queue: "q", Backoff: 1500 * time.Microsecond}),
		file:  planFile("wf-new", `{"name":"a","run":"true","backoff":"1.5ms"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "negative timeout", want: weirpkg.ErrInvalid, field: "timeout",
		goAPI: submitGo(engine.TaskSpec{Name: "a", Queue: "q", Timeout: -time.Second}),
		file:  planFile("wf-new", `{"name":"a","run":"true","timeout":"-1s"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "backoff over the cap", want: weirpkg.ErrInvalid, field: "backoff",
		goAPI: submitGo(engine.TaskSpec{Name: "a", Queue: "q", Backoff: 2 * time.Hour}),
		file:  planFile("wf-new", `{"name":"a","run":"true","backoff":"2h"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "not a duration", want: nil, field: "timeout",
		file: planFile("wf-new", `{"name":"a","run":"true","timeout":"soon"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "bad lease", want: weirpkg.ErrInvalid, field: "lease",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: 1500 * time.Microsecond})
			return err
		},
	}, {
		name: "bad queue name in a task", want: weirpkg.ErrInvalid, field: "queue",
		goAPI: submitGo(engine.TaskSpec{Name: "a", Queue: "bad queue"}),
		file:  planFile("wf-new", `{"name":"a","run":"true","queue":"bad queue"}`), cliCode: 2, restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "bad queue name to pause", want: weirpkg.ErrInvalid, field: "queue",
		goAPI: func(ctx context.Context, e *badEnv) error { return e.store.PauseQueue(ctx, "q:*") },
		cli:   []string{"pause", "q:*"}, cliCode: 2,
		restMethod: "POST", restPath: "/v1/queues/q:*/pause", restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "bad queue name to enqueue", want: weirpkg.ErrInvalid, field: "queue",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "j1", Queue: "{q}"}})
			return err
		},
	}, {
		name: "bad job ID to enqueue", want: weirpkg.ErrInvalid, field: "id",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.Enqueue(ctx, engine.EnqueueParams{Job: engine.JobSpec{ID: "live/a", Queue: "q"}})
			return err
		},
	}, {
		name: "stale lease token", want: weirpkg.ErrLeaseLost, field: "",
		goAPI: func(ctx context.Context, e *badEnv) error {
			res, err := e.store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: e.live.Job.ID, Token: e.live.Lease.Token + "x", Kind: engine.OutcomeCompleted}}})
			if err != nil {
				return err
			}
			return res.Settled[0].Err
		},
	}, {
		name: "lease token of an ended job", want: weirpkg.ErrLeaseLost, field: "",
		goAPI: func(ctx context.Context, e *badEnv) error {
			res, err := e.store.Finish(ctx, engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "done/a", Token: "t", Kind: engine.OutcomeFailed}}})
			if err != nil {
				return err
			}
			return res.Settled[0].Err
		},
	}, {
		name: "unknown workflow", want: weirpkg.ErrNotFound, field: "not found",
		goAPI: func(ctx context.Context, e *badEnv) error { _, err := e.store.GetWorkflow(ctx, "nope"); return err },
		cli:   []string{"status", "nope"}, cliCode: 1,
		restMethod: "GET", restPath: "/v1/workflows/nope", restStatus: 404, restCodes: []string{"NOTFOUND"},
	}, {
		name: "cancel an unknown workflow", want: weirpkg.ErrNotFound, field: "not found",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: "nope"})
			return err
		},
		cli: []string{"cancel", "nope"}, cliCode: 1,
		restMethod: "POST", restPath: "/v1/workflows/nope/cancel", restStatus: 404, restCodes: []string{"NOTFOUND"},
	}, {
		name: "unknown job", want: weirpkg.ErrNotFound, field: "not found",
		goAPI:      func(ctx context.Context, e *badEnv) error { _, err := e.store.GetJob(ctx, "live/zz"); return err },
		restMethod: "GET", restPath: "/v1/jobs/live/zz", restStatus: 404, restCodes: []string{"NOTFOUND"},
	}, {
		name: "cancel an ended workflow", want: weirpkg.ErrWorkflowEnded, field: "ended",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: "done"})
			return err
		},
		cli: []string{"cancel", "done"}, cliCode: 1,
		restMethod: "POST", restPath: "/v1/workflows/done/cancel", restStatus: 409, restCodes: []string{"WFENDED"},
	}, {
		name: "cancel an ended job", want: weirpkg.ErrJobEnded, field: "ended",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.CancelJob(ctx, engine.CancelJobParams{ID: "done/a"})
			return err
		},
	}, {
		name: "bad list limit", want: weirpkg.ErrInvalid, field: "limit",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.ListWorkflows(ctx, weirpkg.ListParams{Limit: 5000})
			return err
		},
		cli: []string{"ls", "--limit", "5000"}, cliCode: 2,
		restMethod: "GET", restPath: "/v1/workflows?limit=5000", restStatus: 400, restCodes: []string{"INVALID"},
	}, {
		name: "bad list state", want: weirpkg.ErrInvalid, field: "state",
		goAPI: func(ctx context.Context, e *badEnv) error {
			_, err := e.store.ListWorkflows(ctx, weirpkg.ListParams{State: "bogus"})
			return err
		},
		cli: []string{"ls", "--state", "bogus"}, cliCode: 2,
		restMethod: "GET", restPath: "/v1/workflows?state=bogus", restStatus: 400, restCodes: []string{"INVALID"},
	}}

	ctx := t.Context()
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			before := e.keys(t)
			unchanged := func(via string) {
				t.Helper()
				if after := e.keys(t); !slices.Equal(before, after) {
					t.Errorf("%s wrote keys: before %d %q, after %d %q", via, len(before), before, len(after), after)
				}
			}
			if c.goAPI != nil {
				err := c.goAPI(ctx, e)
				if !errors.Is(err, c.want) || weirpkg.Sentinel(err) == nil {
					t.Errorf("Go API: %v, want %v", err, c.want)
				}
				var ve *weirpkg.ValidationError
				if errors.As(err, &ve) && ve.Field != c.field {
					t.Errorf("Go API: field %q, want %q (%v)", ve.Field, c.field, err)
				}
				if err != nil && !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.field)) {
					t.Errorf("Go API: %q does not name %q", err, c.field)
				}
				unchanged("Go API")
			}
			cli := c.cli
			if c.file != "" {
				cli = []string{"submit", writeFile(t, "w.json", c.file)}
			}
			if cli != nil {
				args := append([]string{"--redis", e.url, "--namespace", e.ns}, cli...)
				r := weir(t, "", nil, args...)
				if r.Code != c.cliCode || !strings.Contains(r.Stderr, c.field) {
					t.Errorf("CLI %v: exit %d, want %d naming %q; stderr: %s", cli, r.Code, c.cliCode, c.field, r.Stderr)
				}
				unchanged("CLI")
			}
			method, path, body := c.restMethod, c.restPath, ""
			if c.file != "" {
				method, path, body = "POST", "/v1/workflows", c.file
			}
			if method != "" {
				req := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+testToken)
				rec := httptest.NewRecorder()
				e.api.ServeHTTP(rec, req)
				var ae struct{ Code, Message, Field string }
				raw, _ := io.ReadAll(rec.Body)
				if err := json.Unmarshal(raw, &ae); err != nil || rec.Code != c.restStatus || !slices.Contains(c.restCodes, ae.Code) ||
					!(strings.Contains(ae.Field, c.field) || strings.Contains(ae.Message, c.field)) {
					t.Errorf("REST %s %s: %d %s, want %d with a code in %q naming %q", method, path, rec.Code, raw, c.restStatus, c.restCodes, c.field)
				}
				unchanged("REST")
			}
		})
	}
}
