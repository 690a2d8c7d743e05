package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/rest"
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

// weir status prints the summary from its first line: no blank line
// before it (weir run keeps one between its progress and the summary).
func TestStatusStartsWithTheWorkflow(t *testing.T) {
	t.Parallel()
	forServers(t, func(t *testing.T, e *listEnv) {
		e.cli(t, "pause", "default").WantCode(t, 0)
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
