package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v3"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/clitest"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/shell"
	"github.com/weirflow/weir/spec"
	"github.com/weirflow/weir/worker"
	"github.com/weirflow/weir/workflowfile"
)

// testStore returns a store of its own for a test: in a new namespace of
// the Redis of WEIR_REDIS_URL when set (its keys removed at the end), else
// on a new miniredis.
func testStore(t *testing.T) *redisstore.Store {
	t.Helper()
	rdb := redistest.Client(t, redistest.Default(t).Options)
	ns := redistest.Namespace(t, rdb, "resttest-")
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newAPI is NewHandler on s with cfg, failing the test on an error.
func newAPI(t testing.TB, s engine.Store, cfg Config) http.Handler {
	t.Helper()
	cfg.Store = s
	if cfg.StreamFor == 0 {
		cfg.StreamFor = 200 * time.Millisecond // an event stream ends soon in tests
	}
	h, err := NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// shellWorker returns a worker of the store's shell tasks on the default
// queue; the caller starts and stops it.
func shellWorker(s *redisstore.Store) *worker.Worker {
	limits := s.Config().Limits
	w := worker.New(s, worker.Config{Concurrency: 2, SweepInterval: 100 * time.Millisecond, Limits: limits})
	shell.Register(w, []string{workflowfile.DefaultQueue}, limits.MaxResult)
	return w
}

// recordTask returns the task name of rec, failing the test when it has
// none.
func recordTask(t *testing.T, rec workflowfile.Record, name string) workflowfile.TaskRecord {
	return clitest.RecordTask(t, rec, name)
}

// apiT is a REST API of a test on its own store.
type apiT struct {
	t     *testing.T
	url   string
	token string
	store *redisstore.Store
}

const testToken = "s3cret-token-of-the-tests"

// newTestAPI serves the API on a store of its own, with testToken unless
// cfg has a token.
func newTestAPI(t *testing.T, cfg Config) *apiT {
	t.Helper()
	if cfg.Token == "" {
		cfg.Token = testToken
	}
	return newTokenlessAPI(t, cfg)
}

// newTokenlessAPI serves the API with cfg's token, none when empty.
func newTokenlessAPI(t *testing.T, cfg Config) *apiT {
	t.Helper()
	s := testStore(t)
	cfg.Limits = s.Config().Limits
	srv := httptest.NewServer(newAPI(t, s, cfg))
	t.Cleanup(srv.Close)
	return &apiT{t: t, url: srv.URL, token: cfg.Token, store: s}
}

// resp is one response of the API.
type resp struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request with the API's token (when it has one); body is sent
// as is when a string, else as JSON. header is pairs of a name and a value
// to set ("" deletes it); "Host" sets the request's Host.
func (a *apiT) do(method, path string, body any, header ...string) resp {
	a.t.Helper()
	var rd io.Reader
	var again []byte // the body, when it can be sent again
	switch b := body.(type) {
	case nil:
	case string:
		rd, again = strings.NewReader(b), []byte(b)
	case io.Reader:
		rd = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		rd, again = bytes.NewReader(j), j
	}
	res, err := a.send(method, path, rd, header)
	if err != nil && again != nil && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
		// The server answered (a refusal) and closed the connection while
		// the client was still writing the body: the reset can come before
		// the client reads the answer. Send it once more.
		res, err = a.send(method, path, bytes.NewReader(again), header)
	}
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp{res.StatusCode, res.Header, b}
}

// send sends one request of do.
func (a *apiT) send(method, path string, rd io.Reader, header []string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	return testClient.Do(req)
}

// testClient sends the tests' requests: without keep-alives, so that a
// parallel test's httptest.Server.Close, which closes the idle connections
// of http.DefaultTransport, cannot break one of them in flight.
var testClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// want sends a request and fails the test unless the status is status.
func (a *apiT) want(status int, method, path string, body any, header ...string) resp {
	a.t.Helper()
	r := a.do(method, path, body, header...)
	if r.status != status {
		a.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" && ct != "application/yaml" {
		a.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return r
}

// strict decodes a JSON body into T, refusing unknown fields.
func strict[T any](t *testing.T, b []byte) T { return clitest.Strict[T](t, b) }

// wantErr checks an error body's code and field.
func wantErr(t *testing.T, r resp, code, field string) apiError {
	t.Helper()
	e := strict[apiError](t, r.body)
	if e.Code != code || e.Field != field || e.Message == "" {
		t.Errorf("error %+v, want code %s field %q", e, code, field)
	}
	return e
}

// wfFile is a workflow file as the API takes it.
type wfFile map[string]any

func tasks(ts ...map[string]any) []map[string]any { return ts }

func tk(name, run string, kv ...any) map[string]any {
	m := map[string]any{"name": name, "run": run}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// examplePath turns a route pattern into a path to request.
func examplePath(pattern string) string {
	return strings.NewReplacer("{id...}", "wf/task", "{id}", "wf", "{name}", "q", "{task}", "t").Replace(pattern)
}

func TestAPIAuth(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	paths := []string{"/v1/nope", "/v1"}
	for _, rt := range routes {
		if strings.HasPrefix(rt.pattern, "/v1") {
			paths = append(paths, rt.method+" "+examplePath(rt.pattern))
		}
	}
	for _, p := range paths {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "GET", p
		}
		for _, auth := range []string{"", "Bearer wrong", "Bearer " + testToken + "x", "Basic " + testToken, testToken, "Bearer"} {
			r := a.do(method, path, nil, "Authorization", auth)
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s %s with Authorization %q: status %d, want 401", method, path, auth, r.status)
				continue
			}
			wantErr(t, r, codeUnauthorized, "")
			if r.header.Get("WWW-Authenticate") != `Bearer realm="weir"` {
				t.Errorf("%s %s: WWW-Authenticate %q", method, path, r.header.Get("WWW-Authenticate"))
			}
		}
		// The right token passes (whatever the route then answers); the
		// scheme is case-insensitive.
		if r := a.do(method, path, nil, "Authorization", "bearer "+testToken); r.status == http.StatusUnauthorized {
			t.Errorf("%s %s with the token: 401", method, path)
		}
	}
	// /healthz needs no token.
	r := a.want(http.StatusOK, "GET", "/healthz", nil, "Authorization", "")
	if got := strict[map[string]string](t, r.body); got["status"] != "ok" {
		t.Errorf("healthz %s", r.body)
	}
}

// Without a token (loopback only), every route is open.
func TestAPINoToken(t *testing.T) {
	t.Parallel()
	s := testStore(t)
	srv := httptest.NewServer(newAPI(t, s, Config{Limits: s.Config().Limits}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/v1/queues")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/queues without a token on an API with none: %d", res.StatusCode)
	}
}

func TestAPISubmitAndGet(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	f := wfFile{"id": "photo-42", "undo_on_cancel": false, "tasks": tasks(
		tk("fetch", "echo fetch"),
		tk("upload", "echo up", "after", []string{"fetch"}, "retries", 2, "backoff", "250ms", "timeout", "5s",
			"undo", map[string]any{"run": "echo undo", "queue": "undos"}),
		tk("notify", "echo done", "queue", "mail", "after", []string{"upload"}, "always", true),
	)}
	r := a.want(http.StatusCreated, "POST", "/v1/workflows", f)
	if loc := r.header.Get("Location"); loc != "/v1/workflows/photo-42" {
		t.Errorf("Location %q", loc)
	}
	rec := strict[workflowfile.Record](t, r.body)
	if rec.ID != "photo-42" || rec.State != "running" || rec.UndoOnCancel || rec.CreatedAt == nil || rec.EndedAt != nil || len(rec.Tasks) != 3 {
		t.Fatalf("record %+v", rec)
	}
	up := recordTask(t, rec, "upload")
	if up.State != "waiting" || strings.Join(up.After, ",") != "fetch" || up.Undo == nil || up.Undo.Queue != "undos" || up.Undo.State != nil {
		t.Errorf("upload %+v undo %+v", up, up.Undo)
	}
	if n := recordTask(t, rec, "notify"); n.Queue != "mail" || !n.Always {
		t.Errorf("notify %+v", n)
	}
	if fe := recordTask(t, rec, "fetch"); fe.State != "queued" || fe.Queue != "default" || fe.After == nil {
		t.Errorf("fetch %+v", fe)
	}

	// The same plan again: 200, the same record.
	r = a.want(http.StatusOK, "POST", "/v1/workflows", f)
	if again := strict[workflowfile.Record](t, r.body); again.ID != rec.ID || !again.CreatedAt.Equal(rec.CreatedAt.Time) {
		t.Errorf("second submit %+v", again)
	}
	// Another plan under that ID: 409 naming the id.
	f2 := wfFile{"id": "photo-42", "tasks": tasks(tk("fetch", "echo other"))}
	wantErr(t, a.want(http.StatusConflict, "POST", "/v1/workflows", f2), weir.ErrWorkflowExists.Code, "id")

	r = a.want(http.StatusOK, "GET", "/v1/workflows/photo-42", nil)
	if got := strict[workflowfile.Record](t, r.body); got.ID != "photo-42" || len(got.Tasks) != 3 {
		t.Errorf("GET %+v", got)
	}
	wantErr(t, a.want(http.StatusNotFound, "GET", "/v1/workflows/nope", nil), weir.ErrNotFound.Code, "")
	wantErr(t, a.want(http.StatusNotFound, "GET", "/v1/workflows/bad%20id", nil), weir.ErrNotFound.Code, "")

	// No ID: one is generated, and each submit is a new workflow.
	anon := wfFile{"tasks": tasks(tk("a", "true"))}
	id1 := strict[workflowfile.Record](t, a.want(http.StatusCreated, "POST", "/v1/workflows", anon).body).ID
	id2 := strict[workflowfile.Record](t, a.want(http.StatusCreated, "POST", "/v1/workflows", anon).body).ID
	if !engine.ValidID(id1) || id1 == id2 {
		t.Errorf("generated IDs %q %q", id1, id2)
	}

	// YAML with a YAML content type.
	y := "id: from-yaml\ntasks:\n  - name: a\n    run: echo a\n"
	r = a.want(http.StatusCreated, "POST", "/v1/workflows", y, "Content-Type", "application/yaml")
	if got := strict[workflowfile.Record](t, r.body); got.ID != "from-yaml" {
		t.Errorf("yaml submit %+v", got)
	}
	// ...but not as JSON.
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows", y), weir.ErrInvalid.Code, "")
}

func TestAPISubmitInvalid(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	for _, c := range []struct {
		body        string
		field, task string
	}{
		{`{"tasks":[{"name":"a","run":"x"},{"name":"b","run":"y","after":["c"]}]}`, "tasks[1].after", "b"},
		{`{"tasks":[{"name":"a","run":"x","retries":"3"}]}`, "tasks[0].retries", "a"},
		{`{"tasks":[{"name":"a","run":"x"},{"name":"b","run":"x","colour":"red"}]}`, "tasks[1].colour", "b"},
		{`{"tasks":[{"name":"a","run":"x"},{"run":"x"}]}`, "tasks[1].name", ""},
		{`{"tasks":[{"name":"a","run":"x"},{"name":"a","run":"x"}]}`, "tasks[1].name", "a"},
		{`{"tasks":[{"name":"a","run":"  "}]}`, "tasks[0].run", "a"},
		{`{"tasks":[{"name":"a","run":"x","timeout":"soon"}]}`, "tasks[0].timeout", "a"},
		{`{"tasks":[{"name":"a","run":"x","retries":1000}]}`, "tasks[0].retries", "a"},
		{`{"tasks":[{"name":"a","run":"x","queue":"no queue"}]}`, "tasks[0].queue", "a"},
		{`{"tasks":[{"name":"a","run":"x","undo":{"queue":"q"}}]}`, "tasks[0].undo.run", "a"},
		{`{"id":"bad id!","tasks":[{"name":"a","run":"x"}]}`, "id", ""},
		{`{"tasks":[]}`, "tasks", ""},
		{`{"colour":1,"tasks":[{"name":"a","run":"x"}]}`, "colour", ""},
		{`{"fail_fast":"yes","tasks":[{"name":"a","run":"x"}]}`, "fail_fast", ""},
		{`{"tasks":[{"name":"a","run":"x"}]} {}`, "", ""},
		{`[1,2]`, "", ""},
		{``, "", ""},
		{`{"tasks":`, "", ""},
	} {
		r := a.do("POST", "/v1/workflows", c.body)
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400\n%s", c.body, r.status, r.body)
			continue
		}
		e := wantErr(t, r, weir.ErrInvalid.Code, c.field)
		if e.Task != c.task {
			t.Errorf("%s: task %q, want %q (%s)", c.body, e.Task, c.task, e.Message)
		}
		if c.field != "" && !strings.Contains(e.Message, "field ") {
			t.Errorf("%s: message %q does not name the field", c.body, e.Message)
		}
	}
	// Nothing was written.
	r := a.want(http.StatusOK, "GET", "/v1/workflows", nil)
	if p := strict[page](t, r.body); len(p.Workflows) != 0 {
		t.Errorf("workflows after refused submits: %+v", p.Workflows)
	}
}

func TestAPIBodyLimit(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{MaxBody: 1024})
	big := wfFile{"tasks": tasks(tk("a", "echo "+strings.Repeat("x", 1100)))}
	b, _ := json.Marshal(big)
	// With a Content-Length, and streamed without one.
	wantErr(t, a.want(http.StatusRequestEntityTooLarge, "POST", "/v1/workflows", bytes.NewReader(b)), weir.ErrTooLarge.Code, "")
	wantErr(t, a.want(http.StatusRequestEntityTooLarge, "POST", "/v1/workflows", io.MultiReader(bytes.NewReader(b))), weir.ErrTooLarge.Code, "")
	// Just under the limit is fine.
	small := wfFile{"id": "small", "tasks": tasks(tk("a", "echo "+strings.Repeat("x", 900)))}
	a.want(http.StatusCreated, "POST", "/v1/workflows", small)

	// Under the body limit but over the store's payload limit: 400 naming
	// the field, as for a file.
	b2 := newTestAPI(t, Config{})
	huge := wfFile{"tasks": tasks(tk("a", "true"), tk("b", "echo "+strings.Repeat("x", b2.store.Config().Limits.MaxPayload)))}
	e := wantErr(t, b2.want(http.StatusBadRequest, "POST", "/v1/workflows", huge), weir.ErrInvalid.Code, "tasks[1].run")
	if e.Task != "b" || !strings.Contains(e.Message, "over the limit") {
		t.Errorf("payload over the limit: %+v", e)
	}
}

// listAll pages through GET /v1/workflows with query q and limit n.
func (a *apiT) listAll(q string, n int) []workflowfile.Record {
	a.t.Helper()
	var all []workflowfile.Record
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			a.t.Fatal("paging does not end")
		}
		path := fmt.Sprintf("/v1/workflows?limit=%d%s", n, q)
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		p := strict[page](a.t, a.want(http.StatusOK, "GET", path, nil).body)
		if len(p.Workflows) > n {
			a.t.Fatalf("page of %d for limit %d", len(p.Workflows), n)
		}
		all = append(all, p.Workflows...)
		if p.NextCursor == nil {
			return all
		}
		cursor = *p.NextCursor
	}
}

func ids(recs []workflowfile.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// newestFirst reports whether recs are by created_at descending, then ID
// descending.
func newestFirst(recs []workflowfile.Record) bool {
	return slices.IsSortedFunc(recs, func(x, y workflowfile.Record) int {
		if c := y.CreatedAt.Compare(x.CreatedAt.Time); c != 0 {
			return c
		}
		return strings.Compare(y.ID, x.ID)
	})
}

func TestAPIListPaging(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	submit := func(id string) {
		a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": id, "tasks": tasks(tk("a", "true"))})
	}
	var want []string
	for i := range 7 {
		id := fmt.Sprintf("w%d", i)
		submit(id)
		want = append(want, id)
		if i%3 == 0 {
			time.Sleep(2 * time.Millisecond) // some in distinct milliseconds, some in the same
		}
	}
	all := a.listAll("", 3)
	if !newestFirst(all) {
		t.Errorf("not newest first: %v", ids(all))
	}
	got := ids(all)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	if one := a.listAll("", 1000); !slices.Equal(ids(one), ids(all)) {
		t.Errorf("one page %v, pages of 3 %v", ids(one), ids(all))
	}

	// Stable: workflows submitted while paging do not shift the pages
	// that follow (they are newer than the cursor).
	first := strict[page](t, a.want(http.StatusOK, "GET", "/v1/workflows?limit=3", nil).body)
	if first.NextCursor == nil || !slices.Equal(ids(first.Workflows), ids(all[:3])) {
		t.Fatalf("first page %v cursor %v", ids(first.Workflows), first.NextCursor)
	}
	submit("late-1")
	submit("late-2")
	rest := strict[page](t, a.want(http.StatusOK, "GET", "/v1/workflows?limit=100&cursor="+*first.NextCursor, nil).body)
	if !slices.Equal(ids(rest.Workflows), ids(all[3:])) || rest.NextCursor != nil {
		t.Errorf("after new submits, the rest is %v (cursor %v), want %v", ids(rest.Workflows), rest.NextCursor, ids(all[3:]))
	}

	// The state filter.
	a.want(http.StatusOK, "POST", "/v1/workflows/w2/cancel", nil)
	if c := a.listAll("&state=cancelled", 2); !slices.Equal(ids(c), []string{"w2"}) || c[0].State != "cancelled" {
		t.Errorf("state=cancelled: %v", ids(c))
	}
	if r := a.listAll("&state=running", 2); len(r) != 8 || slices.Contains(ids(r), "w2") {
		t.Errorf("state=running: %v", ids(r))
	}
	// Default limit: one page.
	if p := strict[page](t, a.want(http.StatusOK, "GET", "/v1/workflows", nil).body); len(p.Workflows) != 9 || p.NextCursor != nil {
		t.Errorf("default page: %d workflows, cursor %v", len(p.Workflows), p.NextCursor)
	}

	for q, field := range map[string]string{
		"limit=abc": "limit", "limit=0": "limit", "limit=-1": "limit", "limit=1001": "limit",
		"state=bogus": "state", "cursor=garbage": "cursor", "cursor=12:bad%20id": "cursor",
	} {
		wantErr(t, a.want(http.StatusBadRequest, "GET", "/v1/workflows?"+q, nil), weir.ErrInvalid.Code, field)
	}
}

func TestAPICancel(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	f := wfFile{"id": "c1", "tasks": tasks(tk("a", "true"), tk("b", "true", "after", []string{"a"}))}
	a.want(http.StatusCreated, "POST", "/v1/workflows", f)
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows/c1/cancel?undo=maybe", nil), weir.ErrInvalid.Code, "undo")
	r := a.want(http.StatusOK, "POST", "/v1/workflows/c1/cancel?undo=false", nil)
	c := strict[cancelRec](t, r.body)
	if c.ID != "c1" || c.State != "cancelled" || !slices.Equal(c.Cancelled, []string{"c1/a", "c1/b"}) || c.Stopping == nil || len(c.Stopping) != 0 {
		t.Errorf("cancel %+v", c)
	}
	wantErr(t, a.want(http.StatusConflict, "POST", "/v1/workflows/c1/cancel", nil), weir.ErrWorkflowEnded.Code, "")
	wantErr(t, a.want(http.StatusNotFound, "POST", "/v1/workflows/nope/cancel", nil), weir.ErrNotFound.Code, "")
	rec := strict[workflowfile.Record](t, a.want(http.StatusOK, "GET", "/v1/workflows/c1", nil).body)
	if rec.State != "cancelled" || !rec.CancelRequested || rec.EndedAt == nil {
		t.Errorf("cancelled record %+v", rec)
	}
}

// Jobs, read through the API before and after a worker ran them. A
// command submitted over the API runs in the worker's working directory.
func TestAPIJobs(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	f := wfFile{"id": "jw", "tasks": tasks(
		tk("a", "pwd", "retries", 2, "backoff", "250ms", "timeout", "3s"),
		tk("b", "echo b", "after", []string{"a"}, "undo", map[string]any{"run": "echo undo"}))}
	a.want(http.StatusCreated, "POST", "/v1/workflows", f)

	j := strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/jw/a", nil).body)
	if j.ID != "jw/a" || j.State != "queued" || deref(j.Workflow) != "jw" || deref(j.Task) != "a" || j.Undo ||
		j.MaxAttempts != 3 || j.BackoffMS != 250 || j.TimeoutMS != 3000 || j.Result != nil || j.LeaseDeadline != nil || j.CreatedAt == nil {
		t.Errorf("job a %+v", j)
	}
	if p, _ := j.Payload.(map[string]any); p["run"] != "pwd" || p["dir"] != "" {
		t.Errorf("payload %#v", j.Payload)
	}
	// The slash may be escaped.
	if j2 := strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/jw%2Fa", nil).body); j2.ID != "jw/a" {
		t.Errorf("escaped: %+v", j2)
	}
	if jb := strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/jw/b", nil).body); jb.State != "waiting" {
		t.Errorf("job b %+v", jb)
	}
	wantErr(t, a.want(http.StatusNotFound, "GET", "/v1/jobs/nope", nil), weir.ErrNotFound.Code, "")
	wantErr(t, a.want(http.StatusNotFound, "GET", "/v1/jobs/jw/nope", nil), weir.ErrNotFound.Code, "")
	wantErr(t, a.want(http.StatusNotFound, "GET", "/v1/jobs/jw/b/undo", nil), weir.ErrNotFound.Code, "")

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w := shellWorker(a.store)
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	final, err := a.store.AwaitWorkflow(ctx, "jw")
	if err != nil || final.State != weir.WorkflowCompleted {
		t.Fatalf("await: %v %+v", err, final)
	}
	cwd, _ := os.Getwd()
	j = strict[jobRec](t, a.want(http.StatusOK, "GET", "/v1/jobs/jw/a", nil).body)
	if j.State != "completed" || j.Attempts != 1 || j.Result != cwd+"\n" || j.EndedAt == nil || j.ExpiresAt == nil || j.Error != nil {
		t.Errorf("completed job a %+v (result %#v, want the worker's directory %q)", j, j.Result, cwd)
	}
	rec := strict[workflowfile.Record](t, a.want(http.StatusOK, "GET", "/v1/workflows/jw", nil).body)
	if rec.State != "completed" || recordTask(t, rec, "b").Result != "b\n" || rec.EndedAt == nil {
		t.Errorf("completed record %+v", rec)
	}
	wantErr(t, a.want(http.StatusConflict, "POST", "/v1/workflows/jw/cancel", nil), weir.ErrWorkflowEnded.Code, "")
}

func TestAPIQueues(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	type queues struct {
		Queues []queueRec `json:"queues"`
	}
	if q := strict[queues](t, a.want(http.StatusOK, "GET", "/v1/queues", nil).body); q.Queues == nil || len(q.Queues) != 0 {
		t.Errorf("queues of an empty store %s", a.do("GET", "/v1/queues", nil).body)
	}
	r := a.want(http.StatusOK, "POST", "/v1/queues/q1/pause", nil)
	if string(bytes.TrimSpace(r.body)) != `{"name":"q1","paused":true}` {
		t.Errorf("pause: %s", r.body)
	}
	a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"tasks": tasks(tk("a", "true", "queue", "q1"), tk("b", "true", "queue", "q2"))})
	want := []queueRec{{Name: "q1", Paused: true, Ready: 1}, {Name: "q2", Ready: 1}}
	if q := strict[queues](t, a.want(http.StatusOK, "GET", "/v1/queues", nil).body); !slices.Equal(q.Queues, want) {
		t.Errorf("queues %+v, want %+v", q.Queues, want)
	}
	r = a.want(http.StatusOK, "POST", "/v1/queues/q1/resume", nil)
	if string(bytes.TrimSpace(r.body)) != `{"name":"q1","paused":false}` {
		t.Errorf("resume: %s", r.body)
	}
	if q := strict[queues](t, a.want(http.StatusOK, "GET", "/v1/queues", nil).body); q.Queues[0].Paused {
		t.Errorf("q1 still paused %+v", q.Queues)
	}
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/queues/bad%20name/pause", nil), weir.ErrInvalid.Code, "name")
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/queues/"+strings.Repeat("q", 65)+"/resume", nil), weir.ErrInvalid.Code, "name")

	// a concurrency limit, shown by the list; 0 removes it
	r = a.want(http.StatusOK, "POST", "/v1/queues/q2/limit?concurrency=3", nil)
	if string(bytes.TrimSpace(r.body)) != `{"name":"q2","concurrency":3}` {
		t.Errorf("limit: %s", r.body)
	}
	if q := strict[queues](t, a.want(http.StatusOK, "GET", "/v1/queues", nil).body); q.Queues[1].Concurrency != 3 {
		t.Errorf("q2's limit not listed: %+v", q.Queues)
	}
	a.want(http.StatusOK, "POST", "/v1/queues/q2/limit?concurrency=0", nil)
	if q := strict[queues](t, a.want(http.StatusOK, "GET", "/v1/queues", nil).body); q.Queues[1].Concurrency != 0 {
		t.Errorf("q2's limit not removed: %+v", q.Queues)
	}
	for _, v := range []string{"", "-1", "x", "1048577"} {
		wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/queues/q2/limit?concurrency="+v, nil), weir.ErrInvalid.Code, "concurrency")
	}
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/queues/bad%20name/limit?concurrency=1", nil), weir.ErrInvalid.Code, "name")

	// a rate limit, shown by the list beside the concurrency limit, which
	// it leaves alone; 0 removes it
	a.want(http.StatusOK, "POST", "/v1/queues/q2/limit?concurrency=2", nil)
	r = a.want(http.StatusOK, "POST", "/v1/queues/q2/rate?limit=5&period_ms=1500", nil)
	if string(bytes.TrimSpace(r.body)) != `{"name":"q2","rate_limit":5,"rate_period_ms":1500}` {
		t.Errorf("rate: %s", r.body)
	}
	if q := strict[queues](t, a.want(http.StatusOK, "GET", "/v1/queues", nil).body); q.Queues[1].RateLimit != 5 || q.Queues[1].RatePeriodMS != 1500 || q.Queues[1].Concurrency != 2 {
		t.Errorf("q2's rate limit not listed: %+v", q.Queues)
	}
	a.want(http.StatusOK, "POST", "/v1/queues/q2/rate?limit=0", nil)
	if q := strict[queues](t, a.want(http.StatusOK, "GET", "/v1/queues", nil).body); q.Queues[1].RateLimit != 0 || q.Queues[1].RatePeriodMS != 0 || q.Queues[1].Concurrency != 2 {
		t.Errorf("q2's rate limit not removed: %+v", q.Queues)
	}
	for _, v := range []string{"", "-1", "x", "10001"} {
		wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/queues/q2/rate?period_ms=1000&limit="+v, nil), weir.ErrInvalid.Code, "limit")
	}
	for _, v := range []string{"", "0", "x", "86400001"} {
		wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/queues/q2/rate?limit=1&period_ms="+v, nil), weir.ErrInvalid.Code, "period_ms")
	}
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/queues/bad%20name/rate?limit=1&period_ms=1", nil), weir.ErrInvalid.Code, "name")
}

// GET /metrics answers with Config.Metrics behind the token and the
// checks of the /v1 routes; without a Metrics handler there is no such
// route.
func TestAPIMetrics(t *testing.T) {
	t.Parallel()
	m := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprintln(w, "weir_test 1")
	})
	a := newTestAPI(t, Config{Metrics: m})
	if r := a.do("GET", "/metrics", nil); r.status != http.StatusOK || string(r.body) != "weir_test 1\n" {
		t.Errorf("GET /metrics: %d %q", r.status, r.body)
	}
	for _, c := range []struct {
		name, method, path string
		header             []string
		status             int
	}{
		{"without the token", "GET", "/metrics", []string{"Authorization", ""}, http.StatusUnauthorized},
		{"from a foreign page", "GET", "/metrics", []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"POST", "POST", "/metrics", nil, http.StatusMethodNotAllowed},
		{"a query", "GET", "/metrics?x=1", nil, http.StatusBadRequest},
	} {
		if r := a.do(c.method, c.path, nil, c.header...); r.status != c.status || !strings.Contains(r.header.Get("Content-Type"), "json") {
			t.Errorf("%s: %d %s %q, want %d with a JSON error", c.name, r.status, r.header.Get("Content-Type"), r.body, c.status)
		}
	}
	if r := newTestAPI(t, Config{}).do("GET", "/metrics", nil); r.status != http.StatusNotFound {
		t.Errorf("GET /metrics without Config.Metrics: %d, want 404", r.status)
	}
}

func TestAPIRoutingErrors(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	for _, c := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"DELETE", "/v1/queues", 405, codeMethod, "GET, HEAD"},
		{"PUT", "/v1/workflows", 405, codeMethod, "GET, HEAD, POST"},
		{"GET", "/v1/workflows/x/cancel", 405, codeMethod, "POST"},
		{"POST", "/v1/jobs/a/b", 405, codeMethod, "GET, HEAD"},
		{"GET", "/v1/nope", 404, weir.ErrNotFound.Code, ""},
		{"GET", "/nope", 404, weir.ErrNotFound.Code, ""},
		{"POST", "/healthz", 405, codeMethod, "GET, HEAD"},
		{"GET", "/v1/workflows/../queues", 404, weir.ErrNotFound.Code, ""},
		{"GET", "/v1//queues", 404, weir.ErrNotFound.Code, ""},
		{"GET", "/v1/jobs/a/./b", 404, weir.ErrNotFound.Code, ""},
	} {
		r := a.do(c.method, c.path, nil)
		if r.status != c.status || r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want %d %q", c.method, c.path, r.status, r.header.Get("Allow"), c.status, c.allow)
			continue
		}
		wantErr(t, r, c.code, "")
	}
}

func TestAPIHealthzDown(t *testing.T) {
	t.Parallel()
	s := testStore(t)
	down := errors.New("connection refused")
	srv := httptest.NewServer(newAPI(t, s, Config{Ping: func(context.Context) error { return down }}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("healthz with a failing ping: %d %s", res.StatusCode, b)
	}
	wantErr(t, resp{res.StatusCode, res.Header, b}, weir.ErrUnavailable.Code, "")

	// A store that cannot be reached answers 503 on every route.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	gone, err := redisstore.New(rdb, redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rdb.Close()
	a := httptest.NewServer(newAPI(t, gone, Config{}))
	t.Cleanup(a.Close)
	for _, p := range []string{"/healthz", "/v1/queues", "/v1/workflows", "/v1/workflows/x"} {
		res, err := http.Get(a.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("GET %s on a closed store: %d %s", p, res.StatusCode, b)
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	r := a.want(http.StatusOK, "GET", "/v1/openapi.yaml", nil)
	if string(r.body) != spec.OpenAPI || r.header.Get("Content-Type") != "application/yaml" {
		t.Errorf("served document differs from spec/openapi.yaml (%d vs %d bytes, %s)", len(r.body), len(spec.OpenAPI), r.header.Get("Content-Type"))
	}
}

// The document lists exactly the routes the server has, and each operation
// lists 401 when it needs the token.
func TestOpenAPIRoutes(t *testing.T) {
	t.Parallel()
	var doc struct {
		OpenAPI string                                       `yaml:"openapi"`
		Paths   map[string]map[string]map[string]any         `yaml:"paths"`
		Comp    map[string]map[string]map[string]interface{} `yaml:"components"`
	}
	if err := yaml.Unmarshal([]byte(spec.OpenAPI), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	for _, rt := range routes {
		key := rt.method + " " + strings.ReplaceAll(rt.pattern, "{id...}", "{id}")
		if !documented[key] {
			t.Errorf("route %s is not in spec/openapi.yaml", key)
			continue
		}
		delete(documented, key)
		method, path, _ := strings.Cut(key, " ")
		op := doc.Paths[path][strings.ToLower(method)]
		responses, _ := op["responses"].(map[string]any)
		if _, ok := responses["401"]; ok != strings.HasPrefix(path, "/v1") {
			t.Errorf("%s: 401 documented %t", key, ok)
		}
	}
	// GET /metrics is served when Config.Metrics is set (weir serve and
	// dev set it), behind the token
	if !documented["GET /metrics"] {
		t.Errorf("GET /metrics is not in spec/openapi.yaml")
	} else if _, ok := doc.Paths["/metrics"]["get"]["responses"].(map[string]any)["401"]; !ok {
		t.Errorf("GET /metrics: 401 not documented")
	}
	delete(documented, "GET /metrics")
	for key := range documented {
		t.Errorf("spec/openapi.yaml documents %s, which the server does not have", key)
	}
	for _, name := range []string{"Error", "Workflow", "Task", "Page", "Queue", "Job", "CancelResult", "WorkflowFile"} {
		if _, ok := doc.Comp["schemas"][name]; !ok {
			t.Errorf("schema %s missing", name)
		}
	}
}

func deref(s *string) string { return clitest.Deref(s) }

// A submit's deadline: the record shows it; a time already past is 400
// naming the field; the deadline's cancel shows in deadline_hit.
func TestAPISubmitDeadline(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	r := a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "dl-1", "deadline": "1h", "tasks": tasks(tk("a", "true"))})
	rec := strict[workflowfile.Record](t, r.body)
	if rec.Deadline == nil || rec.DeadlineHit || rec.Deadline.Sub(rec.CreatedAt.Time) != time.Hour {
		t.Errorf("record deadline %v created %v hit %v", rec.Deadline, rec.CreatedAt, rec.DeadlineHit)
	}
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows", wfFile{"id": "dl-2", "deadline": past, "tasks": tasks(tk("a", "true"))}),
		weir.ErrInvalid.Code, "deadline")
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows", wfFile{"deadline": "soon", "tasks": tasks(tk("a", "true"))}),
		weir.ErrInvalid.Code, "deadline")
	r = a.want(http.StatusOK, "GET", "/v1/workflows/dl-1", nil)
	if got := strict[workflowfile.Record](t, r.body); got.Deadline == nil || !got.Deadline.Equal(rec.Deadline.Time) {
		t.Errorf("GET deadline %v, want %v", got.Deadline, rec.Deadline)
	}
}

// A submit's webhook: the record shows it and its delivery's job ID; a URL
// that is not absolute http(s) is 400 naming the field.
func TestAPISubmitWebhook(t *testing.T) {
	t.Parallel()
	a := newTestAPI(t, Config{})
	hook := map[string]any{"url": "http://127.0.0.1:9/h", "secret": "billing", "attempts": 3}
	r := a.want(http.StatusCreated, "POST", "/v1/workflows", wfFile{"id": "wh-1", "webhook": hook, "tasks": tasks(tk("a", "true"))})
	rec := strict[workflowfile.Record](t, r.body)
	if h := rec.Webhook; h == nil || h.URL != "http://127.0.0.1:9/h" || deref(h.Secret) != "billing" || h.Queue != "weir.webhooks" || h.Job != "wh-1@webhook" {
		t.Errorf("record webhook %+v", rec.Webhook)
	}
	wantErr(t, a.want(http.StatusBadRequest, "POST", "/v1/workflows", wfFile{"id": "wh-2", "webhook": map[string]any{"url": "/relative"}, "tasks": tasks(tk("a", "true"))}),
		weir.ErrInvalid.Code, "webhook.url")
	r = a.want(http.StatusOK, "GET", "/v1/workflows/wh-1", nil)
	if got := strict[workflowfile.Record](t, r.body); got.Webhook == nil || got.Webhook.Job != "wh-1@webhook" {
		t.Errorf("GET webhook %+v", got.Webhook)
	}
}
