// Package dashboard is weir's web dashboard: a page, a style sheet and a
// script, embedded in the binary, that show the workflows, queues and jobs
// of a store through the REST API of package rest (spec/dashboard.md).
//
// Handler serves the assets; rest.Config.Dashboard mounts it at / next to
// the API, which is how `weir serve` and `weir dev` serve it. The page
// calls the API on its own origin (/v1/...), so it must be served by the
// same server as the API. The assets hold no data and need no token; the
// page sends the API's bearer token, kept in the tab's sessionStorage,
// with each request it makes (docs/security.md).
package dashboard

import (
	"embed"
	"net/http"
)

//go:embed assets
var assets embed.FS

// asset is one file the handler serves.
type asset struct {
	file, contentType string
}

// files maps each path the handler serves to its asset; every other path
// is 404.
var files = map[string]asset{
	"/":            {"assets/index.html", "text/html; charset=utf-8"},
	"/ui/app.js":   {"assets/app.js", "text/javascript; charset=utf-8"},
	"/ui/app.css":  {"assets/app.css", "text/css; charset=utf-8"},
	"/ui/icon.svg": {"assets/icon.svg", "image/svg+xml"},
}

// CSP is the Content-Security-Policy of every answer of the handler: the
// page runs only the script and style sheet of its own origin (no inline
// script or style), talks only to its own origin, and may not be framed.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Paths are the paths Handler answers (GET and HEAD): / and the assets
// under /ui/.
func Paths() []string {
	ps := make([]string, 0, len(files))
	for p := range files {
		ps = append(ps, p)
	}
	return ps
}

// Handler returns the dashboard's handler. It answers GET and HEAD of the
// paths of Paths with the embedded files, under the headers of CSP,
// X-Frame-Options DENY and Referrer-Policy no-referrer; any other path is
// 404 and any other method 405. It reads nothing from a store.
func Handler() http.Handler {
	return http.HandlerFunc(serve)
}

func serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	f, ok := files[r.URL.Path]
	if !ok {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	b, err := assets.ReadFile(f.file)
	if err != nil { // every file of the map is embedded (TestAssets)
		http.Error(w, "500 internal error", http.StatusInternalServerError)
		return
	}
	h.Set("Content-Type", f.contentType)
	// The assets change with the binary: revalidate rather than keep.
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(b)
	}
}
