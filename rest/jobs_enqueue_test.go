package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/worker"
	"github.com/weirflow/weir/workflowfile"
)

// A Go handler's types, as a Go service would declare them.
type resizeArgs struct {
	URL    string            `json:"url"`
	Width  int               `json:"width"`
	Scale  float64           `json:"scale"`
	Big    uint64            `json:"big"`
	Tags   []string          `json:"tags"`
	At     string            `json:"at"` // a time.Time field cannot be given in JSON (spec/rest.md)
	Meta   map[string]int    `json:"meta"`
	Labels map[string]string `json:"labels"`
	Skip   *int              `json:"skip"`
}

type resizeResult struct {
	Path  string `json:"path"`
	Bytes int    `json:"bytes"`
}

var resizeQ = client.NewQueue[resizeArgs, resizeResult]("resize")

// apiStore is an API on a store of its own, for a test that runs on every
// store: memstore, and the Lua store (miniredis, or WEIR_REDIS_URL).
type apiStore struct {
	*apiT
	store engine.Store
}

// everyStore runs f on the API served on each store, with cfg (its Store
// and Limits filled in).
func everyStore(t *testing.T, cfg Config, f func(t *testing.T, a apiStore)) {
	stores := map[string]func(t *testing.T) engine.Store{
		"memstore": func(*testing.T) engine.Store { return memstore.New() },
		"lua":      func(t *testing.T) engine.Store { return testStore(t) },
	}
	for _, name := range []string{"memstore", "lua"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := stores[name](t)
			c := cfg
			if c.Token == "" {
				c.Token = testToken
			}
			c.Limits = weir.DefaultLimits()
			if ls, ok := s.(interface{ Config() engine.Config }); ok {
				c.Limits = ls.Config().Limits
			}
			srv := httptest.NewServer(newAPI(t, s, c))
			t.Cleanup(srv.Close)
			f(t, apiStore{&apiT{t: t, url: srv.URL, token: c.Token}, s})
		})
	}
}

// goWorker starts a worker of s whose resize handler sends every payload
// it receives to got; shellQueues get the shell handler. It stops at the
// end of the test.
func goWorker(t *testing.T, s engine.Store, got chan<- resizeArgs, shellQueues ...string) {
	t.Helper()
	w := worker.New(s, worker.Config{Concurrency: 2, SweepInterval: 100 * time.Millisecond})
	worker.Handle(w, resizeQ, func(ctx context.Context, j *worker.Job[resizeArgs]) (resizeResult, error) {
		got <- j.Payload
		return resizeResult{Path: "/out/" + j.ID + ".png", Bytes: j.Payload.Width * 10}, nil
	})
	if len(shellQueues) > 0 {
		shell.Register(w, shellQueues, weir.DefaultLimits().MaxResult)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
}

// The payload of the tests, as JSON, and the struct a Go handler must
// receive from it.
const resizeJSON = `{"url": "https://example.com/a.png", "width": 640, "scale": 1.5, "big": 18446744073709551615,
  "tags": ["a", "b"], "at": "2026-12-04T10:00:00.25Z", "meta": {"k": 1.0, "m": -2e3}, "labels": {}, "skip": null}`

var resizeWant = resizeArgs{
	URL: "https://example.com/a.png", Width: 640, Scale: 1.5, Big: 1<<64 - 1, Tags: []string{"a", "b"},
	At: "2026-12-04T10:00:00.25Z", Meta: map[string]int{"k": 1, "m": -2000}, Labels: map[string]string{},
}

// sameArgs compares received payloads.
func sameArgs(a, b resizeArgs) bool { return reflect.DeepEqual(a, b) }

// A job enqueued over REST with a JSON payload runs in an ordinary typed Go
// handler, which receives the struct a Go producer would have sent; its
// result comes back decoded in the job record, and to a Go client.
func TestAPIEnqueueForGoHandler(t *testing.T) {
	t.Parallel()
	everyStore(t, Config{}, func(t *testing.T, a apiStore) {
		body := `{"id": "r1", "queue": "resize", "priority": 5, "retries": 2, "backoff": "250ms", "timeout": "5s", "max_expiries": 0, "payload": ` + resizeJSON + `}`
		r := a.want(http.StatusCreated, "POST", "/v1/jobs", body)
		if loc := r.header.Get("Location"); loc != "/v1/jobs/r1" {
			t.Errorf("Location %q", loc)
		}
		j := strict[jobRec](t, r.body)
		if j.ID != "r1" || j.Queue != "resize" || j.State != "queued" || j.Workflow != nil || j.Priority != 5 ||
			j.MaxAttempts != 3 || j.BackoffMS != 250 || j.TimeoutMS != 5000 || j.Result != nil {
			t.Errorf("record %+v", j)
		}
		// The stored payload is what the Go handler's queue decodes.
		stored, err := a.store.GetJob(t.Context(), "r1")
		if err != nil {
			t.Fatal(err)
		}
		if p, err := resizeQ.DecodePayload(stored.Payload); err != nil || !sameArgs(p, resizeWant) {
			t.Errorf("stored payload decodes to %+v, %v; want %+v", p, err, resizeWant)
		}
		if stored.MaxExpiries != 0 {
			t.Errorf("max_expiries 0 is stored as %d, want 0 (none; the default is 1)", stored.MaxExpiries)
		}
		// The same job again, its keys in another order: nothing changes.
		again := `{"payload": ` + resizeJSON + `, "max_expiries": 0, "timeout": "5s", "backoff": "250ms", "retries": 2, "priority": 5, "queue": "resize", "id": "r1"}`
		if j2 := strict[jobRec](t, a.want(http.StatusOK, "POST", "/v1/jobs", again).body); j2.ID != "r1" || j2.State != "queued" {
			t.Errorf("repeat: %+v", j2)
		}
		// Another payload under that ID is a conflict.
		wantErr(t, a.want(http.StatusConflict, "POST", "/v1/jobs", `{"id": "r1", "queue": "resize", "payload": {"width": 1}}`), weir.ErrJobExists.Code, "id")

		got := make(chan resizeArgs, 4)
		goWorker(t, a.store, got)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		res, err := client.OpenJob(client.New(a.store), resizeQ, "r1").Wait(ctx)
		if err != nil || res != (resizeResult{Path: "/out/r1.png", Bytes: 6400}) {
			t.Fatalf("Go client reads %+v, %v", res, err)
		}
		if p := <-got; !sameArgs(p, resizeWant) {
			t.Errorf("the handler received %+v, want %+v", p, resizeWant)
		}
		j = strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/r1", nil).body)
		want := map[string]any{"path": "/out/r1.png", "bytes": float64(6400)}
		if j.State != "completed" || !reflect.DeepEqual(j.Result, want) {
			t.Errorf("completed job: state %s result %#v, want %#v", j.State, j.Result, want)
		}
		if p, _ := j.Payload.(map[string]any); p["width"] != float64(640) || p["url"] != resizeWant.URL {
			t.Errorf("payload shown as %#v", j.Payload)
		}

		// No ID: a new one each time; YAML works too; a delay delays.
		r = a.want(http.StatusCreated, "POST", "/v1/jobs", "queue: resize\ndelay: 1h\npayload: {width: 3}\n", "Content-Type", "application/yaml")
		j = strict[jobRec](t, r.body)
		if !engine.ValidID(j.ID) || j.State != "queued" || j.RunAt == nil || time.Until(j.RunAt.Time) < 50*time.Minute {
			t.Errorf("delayed job %+v", j)
		}
		runAt := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Millisecond)
		j = strict[jobRec](t, a.want(http.StatusCreated, "POST", "/v1/jobs", fmt.Sprintf(`{"queue": "resize", "run_at": %q}`, runAt.Format(time.RFC3339Nano))).body)
		if j.State != "queued" || j.RunAt == nil || !j.RunAt.Equal(runAt) || j.Payload != nil {
			t.Errorf("job with run_at %v: %+v", runAt, j)
		}
	})
}

// A workflow of tasks with JSON payloads runs in Go handlers, beside a
// shell task; the record shows the Go results decoded.
func TestAPIWorkflowOfGoTasks(t *testing.T) {
	t.Parallel()
	everyStore(t, Config{}, func(t *testing.T, a apiStore) {
		body := `{"id": "gw", "tasks": [
		  {"name": "a", "queue": "resize", "payload": ` + resizeJSON + `, "priority": -3},
		  {"name": "b", "queue": "resize", "after": ["a"], "payload": {"width": 7}, "undo": {"payload": {"width": 0}}},
		  {"name": "c", "run": "echo shell", "after": ["b"]}]}`
		rec := strict[workflowfile.Record](t, a.want(http.StatusCreated, "POST", "/v1/workflows", body).body)
		if rec.ID != "gw" || len(rec.Tasks) != 3 || rec.Tasks[1].Undo == nil || rec.Tasks[1].Undo.Queue != "resize" {
			t.Fatalf("record %+v", rec)
		}
		if j := strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/gw/a", nil).body); j.Priority != -3 {
			t.Errorf("task a's job has priority %d, want -3", j.Priority)
		}
		// The same plan again (keys reordered) is the same workflow.
		again := strings.Replace(body, `"queue": "resize", "payload": {"width": 7}`, `"payload": {"width": 7}, "queue": "resize"`, 1)
		a.want(http.StatusOK, "POST", "/v1/workflows", again)

		got := make(chan resizeArgs, 4)
		goWorker(t, a.store, got, workflowfile.DefaultQueue)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		final, err := a.store.AwaitWorkflow(ctx, "gw")
		if err != nil || final.State != weir.WorkflowCompleted {
			t.Fatalf("await: %v %+v", err, final)
		}
		var seen []resizeArgs
		for range 2 {
			seen = append(seen, <-got)
		}
		if !sameArgs(seen[0], resizeWant) || !sameArgs(seen[1], resizeArgs{Width: 7}) {
			t.Errorf("the handler received %+v", seen)
		}
		rec = strict[workflowfile.Record](t, a.want(http.StatusOK, "GET", "/v1/workflows/gw", nil).body)
		wantB := map[string]any{"path": "/out/gw/b.png", "bytes": float64(70)}
		if b := recordTask(t, rec, "b"); !reflect.DeepEqual(b.Result, wantB) {
			t.Errorf("task b's result %#v, want %#v", b.Result, wantB)
		}
		if c := recordTask(t, rec, "c"); c.Result != "shell\n" {
			t.Errorf("shell task c's result %#v", c.Result)
		}
	})
}

// A read-only token reads and cannot write; the read-write token does
// both.
func TestAPIReadOnlyToken(t *testing.T) {
	t.Parallel()
	const readTok = "read-only-token-of-the-tests"
	everyStore(t, Config{ReadTokens: []string{readTok}}, func(t *testing.T, a apiStore) {
		a.want(http.StatusCreated, "POST", "/v1/workflows", `{"id": "w", "tasks": [{"name": "a", "queue": "resize", "payload": {}}]}`)
		ro := &apiT{t: t, url: a.url, token: readTok}
		for _, p := range []string{"/v1/workflows", "/v1/workflows/w", "/v1/jobs/w/a", "/v1/queues", "/v1/openapi.yaml"} {
			ro.want(http.StatusOK, "GET", p, nil)
			if r := ro.do("HEAD", p, nil); r.status != http.StatusOK {
				t.Errorf("HEAD %s with the read-only token: %d", p, r.status)
			}
		}
		writes := []struct{ path, body string }{
			{"/v1/jobs", `{"queue": "resize"}`},
			{"/v1/workflows", `{"id": "w2", "tasks": [{"name": "a", "queue": "resize", "payload": {}}]}`},
			{"/v1/workflows/w/cancel", ""},
			{"/v1/queues/resize/pause", ""},
		}
		for _, wr := range writes {
			var body any
			if wr.body != "" {
				body = wr.body
			}
			e := wantErr(t, ro.want(http.StatusForbidden, "POST", wr.path, body), codeReadOnly, "")
			if !strings.Contains(e.Message, "read-only") {
				t.Errorf("POST %s: message %q", wr.path, e.Message)
			}
		}
		// Nothing changed.
		wf, err := a.store.GetWorkflow(t.Context(), "w")
		if err != nil || wf.State != weir.WorkflowRunning || wf.CancelRequested {
			t.Errorf("workflow after refused writes: %+v %v", wf, err)
		}
		if _, err := a.store.GetWorkflow(t.Context(), "w2"); !errors.Is(err, weir.ErrNotFound) {
			t.Errorf("w2 was written: %v", err)
		}
		qs, _ := a.store.Queues(t.Context())
		for _, q := range qs {
			if q.Paused || q.Ready != 1 {
				t.Errorf("queue after refused writes: %+v", q)
			}
		}
		// A wrong token is still 401, on reads and writes.
		bad := &apiT{t: t, url: a.url, token: readTok + "x"}
		wantErr(t, bad.want(http.StatusUnauthorized, "GET", "/v1/queues", nil), codeUnauthorized, "")
		wantErr(t, bad.want(http.StatusUnauthorized, "POST", "/v1/queues/resize/pause", nil), codeUnauthorized, "")
		// The read-write token writes.
		a.want(http.StatusOK, "POST", "/v1/queues/resize/pause", nil)
	})
}

func TestNewHandlerRefusesBadReadTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{ReadTokens: []string{"read-only-token-of-the-tests"}}, "without Config.Token"},
		{Config{Token: testToken, ReadTokens: []string{"short"}}, "ReadTokens[0] is 5 characters"},
		{Config{Token: testToken, ReadTokens: []string{"read-only-token-of-the-tests", testToken}}, "ReadTokens[1] is Config.Token"},
	} {
		tc.cfg.Store = memstore.New()
		if _, err := NewHandler(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.cfg.ReadTokens, err, tc.want)
		}
	}
}

// A server with NoShell refuses every body a shell worker would run, and
// writes nothing; payloads for Go handlers pass.
func TestAPINoShell(t *testing.T) {
	t.Parallel()
	everyStore(t, Config{NoShell: true}, func(t *testing.T, a apiStore) {
		for _, tc := range []struct{ path, body, field string }{
			{"/v1/workflows", `{"tasks": [{"name": "a", "run": "echo hi"}]}`, "tasks[0].run"},
			{"/v1/workflows", `{"tasks": [{"name": "a", "queue": "q", "payload": 1}, {"name": "b", "queue": "q", "payload": 2, "undo": {"run": "echo undo"}}]}`, "tasks[1].undo.run"},
			{"/v1/workflows", `{"tasks": [{"name": "a", "queue": "q", "payload": {"run": "echo hi"}}]}`, "tasks[0].payload"},
			{"/v1/workflows", `{"tasks": [{"name": "a", "queue": "q", "payload": 1, "undo": {"payload": {"run": "x", "dir": "/"}}}]}`, "tasks[0].undo.payload"},
			{"/v1/workflows", "tasks:\n  - name: a\n    queue: q\n    payload: {run: echo hi}\n", "tasks[0].payload"},
			{"/v1/jobs", `{"queue": "default", "payload": {"run": "echo hi"}}`, "payload"},
		} {
			ct := "application/json"
			if !strings.HasPrefix(tc.body, "{") {
				ct = "application/yaml"
			}
			e := wantErr(t, a.want(http.StatusForbidden, "POST", tc.path, tc.body, "Content-Type", ct), codeNoShell, tc.field)
			if !strings.Contains(e.Message, "refuses shell commands") {
				t.Errorf("%s: message %q", tc.body, e.Message)
			}
		}
		if pg, err := a.store.ListWorkflows(t.Context(), weir.ListParams{}); err != nil || len(pg.Workflows) != 0 {
			t.Errorf("refused workflows were written: %+v %v", pg, err)
		}
		if qs, err := a.store.Queues(t.Context()); err != nil || len(qs) != 0 {
			t.Errorf("refused jobs were written: %+v %v", qs, err)
		}
		// Payloads without a run field pass (a "run" deeper down is data).
		a.want(http.StatusCreated, "POST", "/v1/workflows", `{"tasks": [{"name": "a", "queue": "q", "payload": {"cmd": {"run": "x"}}}]}`)
		a.want(http.StatusCreated, "POST", "/v1/jobs", `{"queue": "q", "payload": ["run"]}`)
	})
}

// Bad job bodies are 400 naming the field, and write nothing.
func TestAPIEnqueueInvalid(t *testing.T) {
	t.Parallel()
	limits := weir.DefaultLimits()
	deep := strings.Repeat("[", 70) + strings.Repeat("]", 70)
	for _, tc := range []struct{ body, field, says string }{
		{`{"payload": 1}`, "queue", "required"},
		{`{"queue": "a b"}`, "queue", "must match"},
		{`{"queue": "q", "colour": "red"}`, "colour", "unknown field"},
		{`{"queue": "q", "id": null}`, "id", "null is not allowed"},
		{`{"queue": "q", "id": "a/b"}`, "id", "must match"},
		{`{"queue": "q", "queue": "r"}`, "queue", "given twice"},
		{`{"queue": "q", "retries": -1}`, "retries", "outside"},
		{`{"queue": "q", "retries": "3"}`, "retries", "not an integer"},
		{`{"queue": "q", "priority": 5000}`, "priority", ""},
		{`{"queue": "q", "backoff": "1x"}`, "backoff", "not a duration"},
		{`{"queue": "q", "timeout": "1.5ms5us"}`, "timeout", "whole milliseconds"},
		{`{"queue": "q", "delay": "1s", "run_at": "2026-12-04T17:00:00Z"}`, "run_at", "not both"},
		{`{"queue": "q", "run_at": "tomorrow"}`, "run_at", "RFC 3339"},
		{`{"queue": "q", "payload": ` + deep + `}`, "", "nested more than"},
		{`{"queue": "q", "payload": "` + strings.Repeat("x", limits.MaxPayload) + `"}`, "payload", "over the limit"},
		{`{"queue": "q", "payload": {"a": 1, "a": 2}}`, "payload.a", "given twice"},
		{`{"queue": "q"} {}`, "", "more than one JSON value"},
		{`[]`, "", "not a job"},
		{` `, "", "empty"},
		{`{"queue": "q", "payload": 1e999}`, "payload", "not a finite number"},
	} {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			a := newTestAPI(t, Config{})
			e := wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/jobs", tc.body), weir.ErrInvalid.Code, tc.field)
			if !strings.Contains(e.Message, tc.says) {
				t.Errorf("%s: message %q, want it to say %q", tc.body, e.Message, tc.says)
			}
			if qs, err := a.store.Queues(t.Context()); err != nil || len(qs) != 0 {
				t.Errorf("%s: written: %+v %v", tc.body, qs, err)
			}
		})
	}
}

// Many producers enqueueing the same job ID at once: one creates it, the
// others get 200, and the handler runs it once.
func TestAPIEnqueueIdempotentRace(t *testing.T) {
	t.Parallel()
	everyStore(t, Config{}, func(t *testing.T, a apiStore) {
		var wg sync.WaitGroup
		status := make(chan int, 8)
		for range 8 {
			wg.Go(func() {
				status <- a.do("POST", "/v1/jobs", `{"id": "once", "queue": "resize", "payload": {"width": 1}}`).status
			})
		}
		wg.Wait()
		close(status)
		created := 0
		for s := range status {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusOK:
			default:
				t.Errorf("status %d", s)
			}
		}
		if created != 1 {
			t.Errorf("%d responses were 201, want 1", created)
		}
	})
}

// TestAPIEnqueueUnique: a job whose unique key another job holds is not
// enqueued; the answer is 200 with the holder's record. Racing producers
// write one job.
func TestAPIEnqueueUnique(t *testing.T) {
	t.Parallel()
	everyStore(t, Config{}, func(t *testing.T, a apiStore) {
		var wg sync.WaitGroup
		type answer struct {
			status int
			id     string
		}
		answers := make(chan answer, 8)
		for i := range 8 {
			wg.Go(func() {
				r := a.do("POST", "/v1/jobs", fmt.Sprintf(`{"id": "u%d", "queue": "resize", "payload": {"width": %d}, "unique": {"key": "acct-7"}}`, i, i))
				var rec struct{ ID string }
				_ = json.Unmarshal(r.body, &rec)
				answers <- answer{r.status, rec.ID}
			})
		}
		wg.Wait()
		close(answers)
		created, ids := 0, map[string]bool{}
		for an := range answers {
			if an.status == http.StatusCreated {
				created++
			} else if an.status != http.StatusOK {
				t.Errorf("status %d", an.status)
			}
			ids[an.id] = true
		}
		if created != 1 || len(ids) != 1 {
			t.Errorf("%d answers were 201 and they name %d jobs; want 1 and 1 (the holder)", created, len(ids))
		}
		// the key is per queue: another queue takes its own
		if r := a.do("POST", "/v1/jobs", `{"queue": "other", "unique": {"key": "acct-7"}}`); r.status != http.StatusCreated {
			t.Errorf("another queue: %d %s", r.status, r.body)
		}
	})
}
