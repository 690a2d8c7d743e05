package main

import (
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// weir serve serves the dashboard at / without the token (the API still
// wants it) and names its address on stderr, without the token.
func TestServeDashboard(t *testing.T) {
	t.Parallel()
	m := miniredis.RunT(t)
	const token = "tok-0123456789abcdef"
	p := startInProcess(t, "serve", "--redis", "redis://"+m.Addr(), "--http", "127.0.0.1:0", "--token", token)
	u := p.printed(t, "WEIR_HTTP_URL")
	if code, body := get(t, "GET", u+"/", ""); code != 200 || !strings.Contains(body, `<script src="/ui/app.js"`) {
		t.Errorf("GET /: %d %q", code, body)
	}
	if code, _ := get(t, "GET", u+"/ui/app.js", ""); code != 200 {
		t.Errorf("GET /ui/app.js: %d", code)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(p.stderr.String(), "weir serve: dashboard at "+u+"/\n"); { // a hang guard
		if time.Now().After(deadline) {
			t.Fatalf("no dashboard address on stderr:\n%s", p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if strings.Contains(p.stderr.String(), token) {
		t.Errorf("serve printed the token:\n%s", p.stderr.String())
	}
	if code := p.stop(t); code != 0 {
		t.Errorf("serve ended with status %d", code)
	}
}

// dev's dashboard address carries a token it generated in the fragment,
// and no token it was given.
func TestDashboardURL(t *testing.T) {
	if got, want := dashboardURL("127.0.0.1:8080", "generated-token-0123456", true), "http://127.0.0.1:8080/#token=generated-token-0123456"; got != want {
		t.Errorf("generated: %q, want %q", got, want)
	}
	if got, want := dashboardURL("[::1]:8080", "given-token-0123456789", false), "http://[::1]:8080/"; got != want {
		t.Errorf("given: %q, want %q", got, want)
	}
}
