package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/dashboard"
	"github.com/weirflow/weir/engine/memstore"
	"github.com/weirflow/weir/rest"
)

const testToken = "dashboard-test-token-0123"

// newServer serves the REST API with the dashboard on s.
func newServer(t *testing.T, cfg rest.Config) *httptest.Server {
	t.Helper()
	if cfg.StreamFor == 0 {
		// a workflow's page holds an event stream open: a short one lets
		// the server's Close end without waiting for the browser
		cfg.StreamFor = 3 * time.Second
	}
	h, err := rest.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// TestAssets: every path of Paths answers its embedded file with its type
// and the page's security headers; other paths and methods do not.
func TestAssets(t *testing.T) {
	srv := httptest.NewServer(dashboard.Handler())
	defer srv.Close()
	types := map[string]string{"/": "text/html", "/ui/app.js": "text/javascript", "/ui/app.css": "text/css", "/ui/icon.svg": "image/svg+xml"}
	if len(dashboard.Paths()) != len(types) {
		t.Errorf("Paths() = %v, want the %d of %v", dashboard.Paths(), len(types), types)
	}
	for _, p := range dashboard.Paths() {
		res, body := get(t, srv.URL+p, nil)
		if res.StatusCode != 200 || body == "" {
			t.Errorf("GET %s: %d with %d bytes", p, res.StatusCode, len(body))
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, types[p]) {
			t.Errorf("GET %s: Content-Type %q, want %s", p, ct, types[p])
		}
		if csp := res.Header.Get("Content-Security-Policy"); csp != dashboard.CSP {
			t.Errorf("GET %s: Content-Security-Policy %q", p, csp)
		}
		if xfo := res.Header.Get("X-Frame-Options"); xfo != "DENY" {
			t.Errorf("GET %s: X-Frame-Options %q", p, xfo)
		}
		if rp := res.Header.Get("Referrer-Policy"); rp != "no-referrer" {
			t.Errorf("GET %s: Referrer-Policy %q", p, rp)
		}
	}
	for _, p := range []string{"/ui/", "/ui/nope.js", "/index.html", "/assets/app.js"} {
		if res, _ := get(t, srv.URL+p, nil); res.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
	}
	res, err := http.Post(srv.URL+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 405 {
		t.Errorf("POST /: %d, want 405", res.StatusCode)
	}
}

// TestCSP: the policy allows no inline script or style, and the page has
// none (no inline <script>, no style or on* attribute), nor does the
// script write HTML as text.
func TestCSP(t *testing.T) {
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(dashboard.CSP, want) {
			t.Errorf("CSP %q lacks %q", dashboard.CSP, want)
		}
	}
	if strings.Contains(dashboard.CSP, "unsafe") {
		t.Errorf("CSP %q allows something unsafe", dashboard.CSP)
	}
	srv := httptest.NewServer(dashboard.Handler())
	defer srv.Close()
	_, page := get(t, srv.URL+"/", nil)
	scripts := regexp.MustCompile(`(?is)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if len(scripts) == 0 {
		t.Error("the page loads no script")
	}
	for _, m := range scripts {
		if !strings.Contains(m[1], `src="/ui/`) || strings.TrimSpace(m[2]) != "" {
			t.Errorf("the page has the inline script %q, which the CSP refuses", m[0])
		}
	}
	if m := regexp.MustCompile(`(?i)\sstyle=|\son[a-z]+=|<style`).FindString(page); m != "" {
		t.Errorf("the page has %q, which the CSP refuses", m)
	}
	_, js := get(t, srv.URL+"/ui/app.js", nil)
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "localStorage"} {
		if strings.Contains(js, bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
}

// TestMounted: rest.Config.Dashboard serves the page without the token,
// behind the API's checks against other sites; the API still wants the
// token; without Config.Dashboard / is 404.
func TestMounted(t *testing.T) {
	s := memstore.New()
	srv := newServer(t, rest.Config{Store: s, Token: testToken, Dashboard: dashboard.Handler()})
	res, body := get(t, srv.URL+"/", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `src="/ui/app.js"`) {
		t.Errorf("GET / without a token: %d %q", res.StatusCode, body)
	}
	if csp := res.Header.Get("Content-Security-Policy"); csp != dashboard.CSP {
		t.Errorf("GET /: Content-Security-Policy %q", csp)
	}
	if res, _ := get(t, srv.URL+"/ui/app.js", nil); res.StatusCode != 200 {
		t.Errorf("GET /ui/app.js without a token: %d", res.StatusCode)
	}
	if res, _ := get(t, srv.URL+"/v1/workflows", nil); res.StatusCode != 401 {
		t.Errorf("GET /v1/workflows without a token: %d, want 401", res.StatusCode)
	}
	if res, _ := get(t, srv.URL+"/v1/workflows", map[string]string{"Authorization": "Bearer " + testToken, "Origin": srv.URL, "Sec-Fetch-Site": "same-origin"}); res.StatusCode != 200 {
		t.Errorf("GET /v1/workflows from the page's origin: %d, want 200", res.StatusCode)
	}
	for _, h := range []map[string]string{{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}} {
		if res, _ := get(t, srv.URL+"/", h); res.StatusCode != 403 {
			t.Errorf("GET / with %v: %d, want 403", h, res.StatusCode)
		}
	}
	res, err := http.Post(srv.URL+"/", "application/json", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 405 {
		t.Errorf("POST /: %d, want 405", res.StatusCode)
	}

	// Without a token the Host check applies to the page too.
	open := newServer(t, rest.Config{Store: s, Dashboard: dashboard.Handler()})
	if res, _ := get(t, open.URL+"/", nil); res.StatusCode != 200 {
		t.Errorf("GET / without a token configured: %d", res.StatusCode)
	}
	req, _ := http.NewRequest("GET", open.URL+"/", nil)
	req.Host = "rebound.example:80"
	if res, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else if res.Body.Close(); res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("GET / with Host %s: %d, want 421", req.Host, res.StatusCode)
	}

	bare := newServer(t, rest.Config{Store: s, Token: testToken})
	if res, _ := get(t, bare.URL+"/", nil); res.StatusCode != 404 {
		t.Errorf("GET / without Config.Dashboard: %d, want 404", res.StatusCode)
	}
}
