package main

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/alicebob/miniredis/v2"
)

// weir dev and weir serve, each a process of its own, stop on SIGTERM
// with an event stream open (what a dashboard tab on a workflow's page
// holds): the stream ends, and they exit 0 (spec/rest.md), rather than
// waiting out the stream until their shutdown's deadline and exiting 1.
func TestStopWithEventStream(t *testing.T) {
	t.Parallel()
	const token = "stream-token-0123456789"
	m := miniredis.RunT(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"dev", []string{"dev", "--queues", "idle", "--token", token}},
		{"serve", []string{"serve", "--redis", "redis://" + m.Addr(), "--http", "127.0.0.1:0", "--token", token}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pr, pw := io.Pipe()
			p := startWeir(t, pw, c.args...)
			t.Cleanup(func() { pw.Close() })
			httpURL := ""
			sc := bufio.NewScanner(pr)
			for httpURL == "" && sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), "WEIR_HTTP_URL="); ok {
					httpURL = v
				}
			}
			go func() { _, _ = io.Copy(io.Discard, pr) }() // keep its stdout drained; ends with pw
			if httpURL == "" {
				t.Fatalf("%s printed no WEIR_HTTP_URL\nstderr:\n%s", c.name, p.stderr.String())
			}

			req, err := http.NewRequestWithContext(t.Context(), "GET", httpURL+"/v1/events/stream", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			rd := bufio.NewReader(res.Body)
			if line, err := rd.ReadString('\n'); res.StatusCode != http.StatusOK || err != nil || line != ": keep-alive\n" {
				t.Fatalf("the stream: %s, began with %q, %v", res.Status, line, err)
			}

			if code := p.signal(t, syscall.SIGTERM); code != 0 || !strings.Contains(p.stderr.String(), "weir "+c.name+": stopped") {
				t.Errorf("%s with an event stream open, after SIGTERM: status %d\nstderr:\n%s", c.name, code, p.stderr.String())
			}
			// it has exited: the stream has ended, cleanly
			if rest, err := io.ReadAll(rd); err != nil {
				t.Errorf("the stream after %s stopped: %q, %v; want its end", c.name, rest, err)
			}
		})
	}
}
