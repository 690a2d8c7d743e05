// Package rest is weir's REST API (spec/rest.md, spec/openapi.yaml) as an
// http.Handler: a Go program serves it on its own engine.Store, on any
// listener and behind any middleware. NewHandler makes one from a Config.
//
// The handler answers the routes of spec/openapi.yaml and nothing else: a
// request the spec does not allow (an unknown query parameter, a body on a
// route that takes none, a field the workflow file does not have) is
// refused with a JSON error body, never ignored. With Config.Token every
// /v1 route, and GET /metrics when Config.Metrics is set, requires it as a
// bearer token.
//
// POST /v1/workflows takes a workflow file (package workflowfile) as JSON
// or YAML; its tasks are shell tasks, run by a worker that has
// shell.Register'ed their queues, in that worker's working directory, or
// tasks with a JSON payload for Go handlers. POST /v1/jobs enqueues a plain
// job with a JSON payload. A payload is stored as the msgpack a Go
// producer would store for the same value, so that an ordinary
// worker.Handle handler of a client.NewQueue[P, R] decodes it into its P:
// programs in any language produce work for Go workers. Records show
// payloads and results decoded as JSON.
//
// Config.ReadTokens are tokens that may only read (GET, HEAD);
// Config.NoShell refuses shell commands.
//
// The handler also refuses what a web page could send it from a browser
// (docs/security.md, spec/rest.md "Browsers and other sites"): without a
// token, requests whose Host is not the loopback address they arrived on
// (DNS rebinding); requests whose Origin is neither the API's own nor one
// of Config.Origins; requests a browser marks cross-site; bodies that are
// not application/json or application/yaml. These checks need the
// connection's local address, which net/http's Server provides
// (http.LocalAddrContextKey): without a token, a request served any other
// way is refused.
package rest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/weirflow/weir/engine"
)

// The REST API of spec/rest.md: routing, bearer-token auth, body limits and
// JSON errors. The handlers are in handlers.go, the checks against web
// pages in guard.go.

// DefaultMaxBody is the limit of a request body, in bytes, when
// Config.MaxBody is 0.
const DefaultMaxBody = 4 << 20

// Config configures the handler NewHandler returns.
type Config struct {
	// Store is the store the API reads and changes. Required.
	Store engine.Store
	// Token, when set, is the read-write bearer token: every /v1 route
	// (and /metrics) requires it, or one of ReadTokens for GET and HEAD
	// (Authorization: Bearer <token>); it must pass CheckToken. Without
	// one the API answers only requests to a loopback address. A server
	// reachable from other machines needs one.
	Token string
	// MaxBody bounds a request body in bytes; a larger one is refused with
	// 413. 0 means DefaultMaxBody.
	MaxBody int64
	// Limits are the store's limits (a submitted workflow is checked
	// against them); zero means weir.DefaultLimits().
	Limits weir.Limits
	// Ping checks the store for GET /healthz; nil lists the queues instead.
	Ping func(context.Context) error
	// Origins are the web origins (scheme://host[:port]) besides the
	// API's own whose pages may call it: the public address of a proxy in
	// front of it, say. Each must pass CheckOrigin. A request with another
	// Origin header is refused.
	Origins []string
	// Logger, when set, logs requests that failed on the server's side
	// with the details their answer leaves out.
	Logger *slog.Logger
	// ReadTokens are bearer tokens that may only read (tokens.go): with
	// one, GET and HEAD requests are served and every other is refused
	// with 403 READONLY. Token is then the read-write token, and is
	// required. Each must pass CheckToken and differ from Token.
	ReadTokens []string
	// NoShell refuses shell commands (shell_guard.go): a workflow with a
	// shell task or undo (run), and a job or task whose payload is an
	// object with a "run" key (what a shell worker runs), are refused with
	// 403 NOSHELL. Tasks and jobs with payloads for Go handlers are
	// accepted. `weir serve` sets it when it listens off loopback.
	NoShell bool
	// Metrics, when set, answers GET /metrics (a Prometheus handler, such
	// as promhttp.HandlerFor of a registry with package metrics'
	// collectors), behind the same token and checks as the /v1 routes.
	Metrics http.Handler
	// Dashboard, when set, answers GET / and GET /ui/ (the web dashboard:
	// dashboard.Handler()), without the token and behind the same checks
	// against other sites as the API. Nil: / is 404.
	Dashboard http.Handler
	// StreamFor is how long the server keeps one Server-Sent Events
	// stream of GET /v1/events open before it ends it (the client then
	// reconnects, resuming with Last-Event-ID): so that a stream outlives
	// no deploy and holds no connection forever. 0 means
	// DefaultStreamFor. A stream also ends when the http.Server serving
	// it begins its Shutdown (the handler registers with the server of
	// each stream's request, http.ServerContextKey), so that a graceful
	// shutdown does not wait out the streams.
	StreamFor time.Duration
}

// DefaultStreamFor is Config.StreamFor when 0.
const DefaultStreamFor = 10 * time.Minute

// api serves the REST API on a store.
type api struct {
	store    engine.Store
	cfg      Config
	tokenSum [sha256.Size]byte
	readSums [][sha256.Size]byte // of cfg.ReadTokens
	origins  map[string]bool     // canonicalOrigin of each of cfg.Origins
	mux      *http.ServeMux
	down     serversDown // ends the event streams of a server that shuts down
}

// route is one route of the API. Every route under /v1 requires the token.
type route struct {
	method, pattern string
	handle          func(a *api, w http.ResponseWriter, r *http.Request)
	// body: the route takes a request body (JSON or YAML); the others
	// refuse one.
	body bool
	// query lists the query parameters the route takes; any other is
	// refused.
	query []string
}

// routes lists every route; spec/openapi.yaml documents each one (a test
// checks that both list the same).
var routes = []route{
	{"GET", "/healthz", (*api).healthz, false, nil},
	{"GET", "/v1/openapi.yaml", (*api).openAPI, false, nil},
	{"GET", "/v1/workflows", (*api).listWorkflows, false, []string{"state", "limit", "cursor", "name", "label", "id_prefix"}},
	{"POST", "/v1/workflows", (*api).submitWorkflow, true, nil},
	{"GET", "/v1/workflows/{id}", (*api).getWorkflow, false, nil},
	{"POST", "/v1/workflows/{id}/cancel", (*api).cancelWorkflow, false, []string{"undo"}},
	{"POST", "/v1/jobs", (*api).enqueueJob, true, nil},
	{"GET", "/v1/jobs/{id...}", (*api).getJob, false, nil},
	{"GET", "/v1/queues", (*api).listQueues, false, nil},
	{"POST", "/v1/queues/{name}/pause", (*api).pauseQueue, false, nil},
	{"POST", "/v1/queues/{name}/resume", (*api).resumeQueue, false, nil},
	{"POST", "/v1/queues/{name}/limit", (*api).limitQueue, false, []string{"concurrency"}},
	{"POST", "/v1/queues/{name}/rate", (*api).rateLimitQueue, false, []string{"limit", "period_ms"}},
	{"POST", "/v1/queues/{name}/key-limit", (*api).limitKeys, false, []string{"concurrency"}},
	{"GET", "/v1/events", (*api).listEvents, false, []string{"after", "workflow", "limit"}},
	{"GET", "/v1/events/stream", (*api).streamEvents, false, []string{"after", "workflow"}},
	{"POST", "/v1/events/on", (*api).eventsOn, false, nil},
	{"POST", "/v1/events/off", (*api).eventsOff, false, nil},
}

// NewHandler returns the REST API on cfg.Store. It fails, before serving
// anything, when cfg has no Store, a MaxBody below 0, a Token that
// CheckToken refuses or an Origin that CheckOrigin refuses. The handler is
// safe for concurrent use; each request's context is passed to the store.
func NewHandler(cfg Config) (http.Handler, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("rest: Config.Store is nil")
	case cfg.MaxBody < 0:
		return nil, fmt.Errorf("rest: Config.MaxBody is %d, below 0", cfg.MaxBody)
	}
	if cfg.Token != "" {
		if err := CheckToken("rest: Config.Token", cfg.Token); err != nil {
			return nil, err
		}
	}
	readSums, err := readTokenSums(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.StreamFor <= 0 {
		cfg.StreamFor = DefaultStreamFor
	}
	if cfg.Limits == (weir.Limits{}) {
		cfg.Limits = weir.DefaultLimits()
	}
	a := &api{store: cfg.Store, cfg: cfg, tokenSum: sha256.Sum256([]byte(cfg.Token)), readSums: readSums, origins: map[string]bool{}, mux: http.NewServeMux(),
		down: serversDown{m: map[*http.Server]context.Context{}}}
	for _, o := range cfg.Origins {
		c, err := canonicalOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("rest: Config.Origins: %w", err)
		}
		a.origins[c] = true
	}
	for _, rt := range routes {
		a.mux.HandleFunc(rt.method+" "+rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			if !checkQuery(w, r, rt.query) {
				return
			}
			if rt.body {
				if checkBodyType(w, r) == "" {
					return
				}
			} else if !a.noBody(w, r) {
				return
			}
			rt.handle(a, w, r)
		})
	}
	if cfg.Metrics != nil {
		a.mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
			if !checkQuery(w, r, nil) || !a.noBody(w, r) {
				return
			}
			cfg.Metrics.ServeHTTP(w, r)
		})
	}
	if cfg.Dashboard != nil {
		a.mux.Handle("GET /{$}", cfg.Dashboard)
		a.mux.Handle("GET /ui/", cfg.Dashboard)
	}
	a.mux.HandleFunc("/", a.noRoute)
	return a, nil
}

// ServeHTTP refuses what a web page could have sent (guard.go),
// checks the token of /v1 routes and /metrics, then routes the request.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !a.guardRequest(w, r) {
		return
	}
	if r.URL.Path == "/v1" || strings.HasPrefix(r.URL.Path, "/v1/") || r.URL.Path == "/metrics" {
		switch a.access(r) {
		case accessNone:
			w.Header().Set("WWW-Authenticate", `Bearer realm="weir"`)
			writeError(w, http.StatusUnauthorized, apiError{Code: codeUnauthorized, Message: "a valid bearer token is required (Authorization: Bearer <token>)"})
			return
		case accessRead:
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				writeError(w, http.StatusForbidden, apiError{Code: codeReadOnly, Message: fmt.Sprintf("this token is read-only: %s %s needs the read-write token", r.Method, r.URL.Path)})
				return
			}
		}
	}
	if !cleanPath(r.URL.Path) {
		// The mux would redirect to the cleaned path with an HTML body.
		writeError(w, http.StatusNotFound, apiError{Code: weir.ErrNotFound.Code, Message: fmt.Sprintf("no route %s %s: the path is not in canonical form", r.Method, r.URL.Path)})
		return
	}
	a.mux.ServeHTTP(w, r)
}

// cleanPath reports whether p is in the canonical form the mux routes
// without a redirect: no empty, "." or ".." segments.
func cleanPath(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// noRoute answers a request no route matched: 405 when the path has a route
// for another method, else 404.
func (a *api) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, pattern := a.mux.Handler(r2); pattern != "/" && pattern != "" {
			allow = append(allow, m)
			if m == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, apiError{Code: codeMethod, Message: fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", "))})
		return
	}
	writeError(w, http.StatusNotFound, apiError{Code: weir.ErrNotFound.Code, Message: fmt.Sprintf("no route %s %s (the routes are in /v1/openapi.yaml)", r.Method, r.URL.Path)})
}

// Codes of the REST API beyond the engine's result codes (spec/errors.md).
const (
	codeUnauthorized = "UNAUTHORIZED" // no or wrong bearer token
	codeMethod       = "METHOD"       // the route does not take that method
	codeInternal     = "INTERNAL"     // an error with no result code
	codeReadOnly     = "READONLY"     // a read-only token on a route that writes
	codeNoShell      = "NOSHELL"      // a shell command sent to a server that refuses them
)

// apiError is the body of every error response.
type apiError struct {
	// Code is an engine result code (spec/errors.md) or one of the REST
	// codes above.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Field names the wrong input: a query parameter, or a path in the
	// request body such as tasks[1].after.
	Field string `json:"field,omitempty"`
	// Task is the name of the task the wrong input is in, when known.
	Task string `json:"task,omitempty"`
}

// statusOf is the HTTP status of each engine result code.
var statusOf = map[string]int{
	weir.ErrNotFound.Code:        http.StatusNotFound,
	weir.ErrWorkflowExists.Code:  http.StatusConflict,
	weir.ErrJobExists.Code:       http.StatusConflict,
	weir.ErrWorkflowEnded.Code:   http.StatusConflict,
	weir.ErrJobEnded.Code:        http.StatusConflict,
	weir.ErrLeaseLost.Code:       http.StatusConflict,
	weir.ErrInvalid.Code:         http.StatusBadRequest,
	weir.ErrTooLarge.Code:        http.StatusRequestEntityTooLarge,
	weir.ErrStoreFull.Code:       http.StatusInsufficientStorage,
	weir.ErrUnavailable.Code:     http.StatusServiceUnavailable,
	weir.ErrProtocol.Code:        http.StatusBadGateway,
	weir.ErrJobNotRetryable.Code: http.StatusConflict,
	weir.ErrNotEnded.Code:        http.StatusConflict,
	weir.ErrNotOpen.Code:         http.StatusConflict,
	weir.ErrSignalled.Code:       http.StatusConflict,
	weir.ErrNotRerunnable.Code:   http.StatusConflict,
}

// genericMessage is the message of each error of the server's side: the
// error itself (which may name the Redis address, or a Go type) is logged,
// not sent.
var genericMessage = map[string]string{
	codeInternal:                 "internal error (the server's log has the details)",
	weir.ErrUnavailable.Code:     "the store does not answer now; retry later",
	weir.ErrProtocol.Code:        "the store replied something this server does not understand (the server's log has the details)",
	weir.ErrStoreFull.Code:       "the store is out of memory: nothing was written",
	weir.ErrLeaseLost.Code:       "the job's lease was lost",
	weir.ErrJobExists.Code:       "the job exists",
	weir.ErrJobEnded.Code:        "the job has ended",
	weir.ErrWorkflowEnded.Code:   "the workflow has already ended",
	weir.ErrWorkflowExists.Code:  "a workflow with that ID exists with a different plan",
	weir.ErrJobNotRetryable.Code: "the job cannot be retried: only a plain job that ended failed or cancelled can",
	weir.ErrNotEnded.Code:        "it has not ended: only an ended job or workflow is deleted",
	weir.ErrNotOpen.Code:         "the signal task is not open yet: its dependencies have not all ended",
	weir.ErrSignalled.Code:       "the signal task has ended otherwise: another signal, its timeout or a cancel",
	weir.ErrNotRerunnable.Code:   "the workflow cannot be re-run: only an ended workflow with a failed or cancelled task, not compensated, can",
}

// storeError writes the response for an error of the store. Only the
// errors about the request (invalid input, no such workflow) carry the
// store's message; the others get a fixed one, and are logged.
func (a *api) storeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away
	}
	e := apiError{Code: codeInternal}
	status := http.StatusInternalServerError
	if s := weir.Sentinel(err); s != nil {
		e.Code, status = s.Code, statusOf[s.Code]
	}
	var ve *weir.ValidationError
	switch {
	case errors.As(err, &ve):
		e.Field, e.Task, e.Message = ve.Field, ve.Task, err.Error()
	case e.Code == weir.ErrNotFound.Code || e.Code == weir.ErrInvalid.Code || e.Code == weir.ErrTooLarge.Code:
		e.Message = err.Error()
	default:
		e.Message = genericMessage[e.Code]
		if e.Message == "" {
			e.Message = genericMessage[codeInternal]
		}
	}
	if status >= 500 {
		a.logError(r, status, err)
	}
	writeError(w, status, e)
}

// logError logs an error answered with status, with its details.
func (a *api) logError(r *http.Request, status int, err error) {
	if a.cfg.Logger != nil {
		a.cfg.Logger.Error("weir api", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
}

func writeError(w http.ResponseWriter, status int, e apiError) {
	writeJSON(w, status, e)
}

// writeJSON writes v as the JSON body of a response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(apiError{Code: codeInternal, Message: "internal error: the response could not be encoded"})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
