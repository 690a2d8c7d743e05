package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirflow/weir/internal/redistest"
)

// infoKeyDB is what KeyDB's INFO says (cut to the lines that tell it).
const infoKeyDB = "# Server\r\nredis_version:6.3.4\r\nredis_mode:standalone\r\n\r\n# Clients\r\nconnected_clients:1\r\n" +
	"current_client_thread:0\r\nthread_0_clients:1\r\n\r\n# KeyDB\r\nmvcc_depth:0\r\n"

// weir refuses a server redisstore refuses (KeyDB, told by its INFO) when
// it opens the store, before any write, naming the server, the defects and
// the override; WEIR_ALLOW_UNSAFE_SERVER=1 runs on it, and a value other
// than 0 or 1 is a usage error naming the variable.
func TestRefusesKeyDB(t *testing.T) {
	t.Parallel()
	m := redistest.MiniAs(t, infoKeyDB)
	dir := t.TempDir()
	path := filepath.Join(dir, "job.json")
	if err := os.WriteFile(path, []byte(`{"id": "j1", "queue": "q"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	url := []string{"WEIR_REDIS_URL=" + m.URL}
	r := weir(t, dir, url, "enqueue", path)
	if r.Code != 1 {
		t.Fatalf("enqueue on KeyDB: status %d, want 1\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{m.Options.Addr, "unsafe server", "KeyDB 6.3.4", "Snapchat/KeyDB#928", "docs/compatibility.md", "WEIR_ALLOW_UNSAFE_SERVER=1"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("the refusal does not say %q: %q", want, r.Stderr)
		}
	}
	if ks := m.Mini.Keys(); len(ks) != 0 {
		t.Fatalf("the refused enqueue wrote %v", ks)
	}
	if r := weir(t, dir, append(url, "WEIR_ALLOW_UNSAFE_SERVER=yes"), "enqueue", path); r.Code != 2 || !strings.Contains(r.Stderr, `WEIR_ALLOW_UNSAFE_SERVER "yes"`) {
		t.Errorf("WEIR_ALLOW_UNSAFE_SERVER=yes: status %d, stderr %q; want 2 naming it", r.Code, r.Stderr)
	}
	if r := weir(t, dir, append(url, "WEIR_ALLOW_UNSAFE_SERVER=1"), "enqueue", path); r.Code != 0 || r.Stdout != "j1\n" {
		t.Errorf("enqueue with WEIR_ALLOW_UNSAFE_SERVER=1: status %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}
