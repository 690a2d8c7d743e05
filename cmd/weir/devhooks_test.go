package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/workflowfile"
)

// weir dev's workers deliver webhooks from weir.webhooks by default
// (without it a workflow submitted to dev never reached its webhook), and
// --webhooks ” turns that off; a bad --webhooks is a usage error.
func TestDevDeliversWebhooks(t *testing.T) {
	t.Parallel()
	h := newHookReceiver(t, http.StatusNoContent)
	p := startInProcess(t, "dev", "--token", "dev-token-0123456789")
	httpURL := p.printed(t, "WEIR_HTTP_URL")
	body := `{"id":"dev-hook","webhook":{"url":"` + h.URL + `/h"},"tasks":[{"name":"a","run":"echo a"}]}`
	req, _ := http.NewRequestWithContext(t.Context(), "POST", httpURL+"/v1/workflows", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer dev-token-0123456789")
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d %s", res.StatusCode, b)
	}
	for deadline := time.Now().Add(30 * time.Second); ; { // a hang guard
		if bodies, _ := h.received(); len(bodies) > 0 {
			var rec workflowfile.Record
			if err := json.Unmarshal(bodies[0], &rec); err != nil || rec.ID != "dev-hook" || rec.State != "completed" {
				t.Errorf("webhook body %s: %v", bodies[0], err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no webhook delivered\nstderr:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	for _, c := range []struct{ flag, want string }{
		{"--webhooks=bad:name", `--webhooks: queue name "bad:name" must`},
		{"--webhooks=default", `--webhooks: queue "default" is also in --queues`},
	} {
		r := weir(t, "", nil, "dev", c.flag)
		if r.Code != exitUsage || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%s: status %d, stderr %q; want %d and %q", c.flag, r.Code, r.Stderr, exitUsage, c.want)
		}
	}
}
