package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/clitest"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/rest"
	"github.com/weirflow/weir/workflowfile"
)

// listEnv is a namespace of its own on one test server, reached by the
// weir command in process (--redis, --namespace) and by the REST API.
type listEnv struct {
	url, ns string
	api     http.Handler
}

// forServers runs f on a namespace of its own of each test server: a
// miniredis, and WEIR_REDIS_URL's server when it is set.
func forServers(t *testing.T, f func(t *testing.T, e *listEnv)) {
	for _, srv := range redistest.Servers(t) {
		t.Run(srv.Name, func(t *testing.T) {
			rdb := redistest.Client(t, srv.Options)
			e := &listEnv{url: srv.URL, ns: redistest.Namespace(t, rdb, "cli")}
			s, err := redisstore.New(rdb, redisstore.Options{Namespace: e.ns})
			if err != nil {
				t.Fatal(err)
			}
			if e.api, err = rest.NewHandler(rest.Config{Store: s, Token: testToken, Limits: s.Config().Limits}); err != nil {
				t.Fatal(err)
			}
			f(t, e)
		})
	}
}

// cli runs weir args on the env's namespace, in process.
func (e *listEnv) cli(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), append([]string{"--redis", e.url, "--namespace", e.ns}, args...), &out, &errb)
	return result{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// get answers GET path from the env's REST API: its body decoded.
func (e *listEnv) get(t *testing.T, path string) map[string]any {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), "GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	e.api.ServeHTTP(rec, req)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
		t.Fatalf("GET %s: %d %v\n%s", path, rec.Code, err, rec.Body)
	}
	return body
}

// jsonArray decodes a --json list: one JSON array on stdout, nothing after.
func jsonArray(t *testing.T, r result) []any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	var v []any
	if err := dec.Decode(&v); err != nil || v == nil || dec.More() {
		t.Fatalf("stdout is not one JSON array (%v):\n%s", err, r.Stdout)
	}
	return v
}

// weir status prints the summary from its first line: no blank line
// before it (weir run keeps one between its progress and the summary).
func TestStatusStartsWithTheWorkflow(t *testing.T) {
	t.Parallel()
	forServers(t, func(t *testing.T, e *listEnv) {
		e.cli(t, "queue", "pause", "default").WantCode(t, 0)
		r := e.cli(t, "submit", "../../examples/pipeline.yaml")
		r.WantCode(t, 0)
		id := strings.TrimSpace(r.Stdout)
		r = e.cli(t, "status", id)
		r.WantCode(t, 0)
		checkBlankLines(t, "weir status", r.Stdout)
		if !strings.HasPrefix(r.Stdout, "workflow "+id+" running\n") {
			t.Errorf("status does not start with the workflow's line:\n%q", r.Stdout)
		}
	})
}

// weir ls lists one page of --limit (a store call each) and prints the
// cursor of the next; following the cursors lists every workflow once,
// newest first; --json prints the page's records as an array and the
// cursor on stderr; --state filters; a bad --limit or --state is a usage
// error that names it.
func TestLsPages(t *testing.T) {
	t.Parallel()
	forServers(t, func(t *testing.T, e *listEnv) {
		e.cli(t, "queue", "pause", "default").WantCode(t, 0)
		var ids []string
		for i := range 5 {
			id := fmt.Sprintf("w%d", i)
			e.cli(t, "submit", writeFile(t, id+".yaml", "id: "+id+"\ntasks:\n  - name: a\n    run: echo a\n")).WantCode(t, 0)
			ids = append(ids, id)
		}
		e.cli(t, "cancel", "w0").WantCode(t, 0)

		row := regexp.MustCompile(`(?m)^(w\d)\s+-\s+(running|cancelled)\s+1\s+\S+Z\s+-$`)
		more := regexp.MustCompile(`(?m)^more: --cursor (\S+)$`)
		seen := map[string]int{}
		args := []string{"ls", "--limit", "2"}
		for pages := 0; ; pages++ {
			if pages == 3 {
				t.Fatalf("more than 3 pages of 2 for 5 workflows")
			}
			r := e.cli(t, args...)
			r.WantCode(t, 0)
			checkBlankLines(t, "weir ls", r.Stdout)
			rows := row.FindAllStringSubmatch(r.Stdout, -1)
			if !strings.HasPrefix(r.Stdout, "ID  ") || len(rows) != min(2, 5-2*pages) {
				t.Fatalf("page %d of --limit 2:\n%s", pages, r.Stdout)
			}
			for _, m := range rows {
				seen[m[1]]++
			}
			m := more.FindStringSubmatch(r.Stdout)
			if m == nil {
				if pages != 2 {
					t.Fatalf("no cursor after page %d:\n%s", pages, r.Stdout)
				}
				break
			}
			args = []string{"ls", "--limit", "2", "--cursor", m[1]}
		}
		for _, id := range ids {
			if seen[id] != 1 {
				t.Errorf("%s listed %d times over the pages: %v", id, seen[id], seen)
			}
		}

		r := e.cli(t, "ls", "--limit", "2", "--json")
		r.WantCode(t, 0)
		recs := clitest.Strict[[]workflowfile.Record](t, []byte(r.Stdout))
		if len(recs) != 2 || recs[0].CreatedAt.Before(recs[1].CreatedAt.Time) || !more.MatchString(r.Stderr) {
			t.Errorf("ls --limit 2 --json: %d records, stderr %q\n%s", len(recs), r.Stderr, r.Stdout)
		}
		r = e.cli(t, "ls", "--state", "cancelled", "--json")
		r.WantCode(t, 0)
		if recs := clitest.Strict[[]workflowfile.Record](t, []byte(r.Stdout)); len(recs) != 1 || recs[0].ID != "w0" || recs[0].State != "cancelled" || r.Stderr != "" {
			t.Errorf("ls --state cancelled --json: %+v, stderr %q", recs, r.Stderr)
		}
		r = e.cli(t, "ls", "--state", "completed")
		if r.Code != 0 || strings.TrimSpace(r.Stdout) != "ID  NAME  STATE  TASKS  CREATED  LABELS" {
			t.Errorf("ls --state completed: %d\n%s", r.Code, r.Stdout)
		}
		for _, c := range []struct{ args []string }{
			{[]string{"ls", "--limit", "0"}}, {[]string{"ls", "--limit", "1001"}},
			{[]string{"jobs", "default", "--limit", "0"}}, {[]string{"ls", "--state", "done"}},
		} {
			r := e.cli(t, c.args...)
			flag := c.args[len(c.args)-2]
			if r.Code != exitUsage || !strings.Contains(r.Stderr, flag) || r.Stdout != "" {
				t.Errorf("%v: status %d, stderr %q, want %d naming %s", c.args, r.Code, r.Stderr, exitUsage, flag)
			}
		}
		if r := e.cli(t, "ls", "--state", "done"); !strings.Contains(r.Stderr, "compensation_failed") {
			t.Errorf("ls --state done does not list the states: %q", r.Stderr)
		}
	})
}

// weir jobs --json and weir queues --json (and weir queue ls --json) print
// JSON arrays of the REST API's objects: the same as GET
// /v1/queues/{name}/jobs's jobs and GET /v1/queues's queues.
func TestJobsAndQueuesJSON(t *testing.T) {
	t.Parallel()
	forServers(t, func(t *testing.T, e *listEnv) {
		e.cli(t, "queue", "pause", "q").WantCode(t, 0)
		e.cli(t, "queue", "limit", "q", "3").WantCode(t, 0)
		e.cli(t, "queue", "rate", "q", "10/1s").WantCode(t, 0)
		for i := range 3 {
			e.cli(t, "enqueue", writeFile(t, "j.json", fmt.Sprintf(`{"queue": "q", "id": "j%d", "payload": {"n": %d}}`, i, i))).WantCode(t, 0)
		}

		r := e.cli(t, "jobs", "q", "--limit", "2", "--json")
		r.WantCode(t, 0)
		jobs := jsonArray(t, r)
		body := e.get(t, "/v1/queues/q/jobs?state=ready&limit=2")
		if !reflect.DeepEqual(jobs, body["jobs"]) {
			t.Errorf("jobs --json:\n%v\nGET /v1/queues/q/jobs:\n%v", jobs, body["jobs"])
		}
		if len(jobs) != 2 || jobs[0].(map[string]any)["queue"] != "q" || jobs[0].(map[string]any)["state"] != "queued" {
			t.Errorf("jobs --json: %v", jobs)
		}
		if want := fmt.Sprintf("more: --cursor %s\n", body["next_cursor"]); r.Stderr != want {
			t.Errorf("jobs --json stderr %q, want %q", r.Stderr, want)
		}
		r = e.cli(t, "jobs", "q", "--state", "failed", "--json")
		r.WantCode(t, 0)
		if strings.TrimSpace(r.Stdout) != "[]" || r.Stderr != "" {
			t.Errorf("no failed jobs: %q %q", r.Stdout, r.Stderr)
		}

		type queue struct {
			Name           string `json:"name"`
			Paused         bool   `json:"paused"`
			Ready          int    `json:"ready"`
			Delayed        int    `json:"delayed"`
			Running        int    `json:"running"`
			Concurrency    int    `json:"concurrency"`
			RateLimit      int    `json:"rate_limit"`
			RatePeriodMS   int64  `json:"rate_period_ms"`
			KeyConcurrency int    `json:"key_concurrency"`
		}
		for _, args := range [][]string{{"queues", "--json"}, {"queue", "ls", "--json"}} {
			r := e.cli(t, args...)
			r.WantCode(t, 0)
			if qs := jsonArray(t, r); !reflect.DeepEqual(qs, e.get(t, "/v1/queues")["queues"]) {
				t.Errorf("%v: %v, not GET /v1/queues's", args, qs)
			}
			want := queue{Name: "q", Paused: true, Ready: 3, Concurrency: 3, RateLimit: 10, RatePeriodMS: 1000}
			qs := clitest.Strict[[]queue](t, []byte(r.Stdout))
			if i := indexQueue(qs, func(q queue) string { return q.Name }, "q"); i < 0 || qs[i] != want {
				t.Errorf("%v: %+v, want %+v among them", args, qs, want)
			}
		}
	})
}

func indexQueue[T any](qs []T, name func(T) string, n string) int {
	for i, q := range qs {
		if name(q) == n {
			return i
		}
	}
	return -1
}

// The queue verbs are under weir queue; weir pause, resume and purge stay
// as aliases that do the same, and their help says so.
func TestQueueVerbs(t *testing.T) {
	t.Parallel()
	forServers(t, func(t *testing.T, e *listEnv) {
		for _, c := range []struct {
			args []string
			out  string
		}{
			{[]string{"queue", "pause", "q"}, "queue q paused\n"},
			{[]string{"resume", "q"}, "queue q resumed\n"},
			{[]string{"pause", "q"}, "queue q paused\n"},
			{[]string{"queue", "resume", "q"}, "queue q resumed\n"},
			{[]string{"queue", "pause", "q"}, "queue q paused\n"},
		} {
			if r := e.cli(t, c.args...); r.Code != 0 || r.Stdout != c.out {
				t.Errorf("%v: %d %q %q, want %q", c.args, r.Code, r.Stdout, r.Stderr, c.out)
			}
		}
		for i := range 2 {
			e.cli(t, "enqueue", writeFile(t, "j.json", fmt.Sprintf(`{"queue": "q", "id": "j%d"}`, i))).WantCode(t, 0)
		}
		if r := e.cli(t, "queue", "purge", "q"); r.Code != 0 || r.Stdout != "queue q purged: 2 job(s) cancelled\n" {
			t.Errorf("queue purge: %d %q %q", r.Code, r.Stdout, r.Stderr)
		}
		e.cli(t, "enqueue", writeFile(t, "j.json", `{"queue": "q", "id": "j9"}`)).WantCode(t, 0)
		if r := e.cli(t, "purge", "q"); r.Code != 0 || r.Stdout != "queue q purged: 1 job(s) cancelled\n" {
			t.Errorf("purge: %d %q %q", r.Code, r.Stdout, r.Stderr)
		}
	})
	for _, group := range []string{"queue", "schedule"} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), []string{group, "puase", "q"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), `unknown command "puase"`) {
			t.Errorf("weir %s puase q: status %d, stderr %q, want %d naming it", group, code, errb.String(), exitUsage)
		}
		out.Reset()
		if code := run(t.Context(), []string{group}, &out, &errb); code != 0 || !strings.Contains(out.String(), "Available Commands:") {
			t.Errorf("weir %s: status %d, want its help:\n%s", group, code, out.String())
		}
	}
	for _, verb := range []string{"pause", "resume", "purge"} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), []string{verb, "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "(alias of weir queue "+verb+")") {
			t.Errorf("weir %s --help does not say it is an alias:\n%s", verb, out.String())
		}
	}
}

// checkBlankLines fails t when out starts with a blank line, has two in a
// row, ends without a newline or with a blank line, or has a line of
// spaces only.
func checkBlankLines(t *testing.T, what, out string) {
	t.Helper()
	switch {
	case out == "":
		t.Errorf("%s printed nothing", what)
	case strings.HasPrefix(out, "\n"):
		t.Errorf("%s starts with a blank line:\n%s", what, out)
	case strings.Contains(out, "\n\n\n"):
		t.Errorf("%s has two blank lines in a row:\n%s", what, out)
	case !strings.HasSuffix(out, "\n") || strings.HasSuffix(out, "\n\n"):
		t.Errorf("%s does not end with exactly one newline: %q", what, out[max(0, len(out)-40):])
	}
	for i, l := range strings.Split(out, "\n") {
		if l != "" && strings.TrimSpace(l) == "" {
			t.Errorf("%s: line %d is spaces only", what, i+1)
		}
	}
}
