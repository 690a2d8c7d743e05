package redisstore

import (
	"context"
	"errors"
	"github.com/weirflow/weir"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// INFO replies (the default sections, cut to what identifies the server)
// as each server gives them.
const (
	infoRedis70 = "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n\r\n# Clients\r\nconnected_clients:1\r\nclients_in_timeout_table:0\r\n"
	infoRedis60 = "# Server\r\nredis_version:6.0.16\r\nredis_mode:standalone\r\n"
	infoRedis62 = "# Server\r\nredis_version:6.2.14\r\nredis_mode:standalone\r\n"
	infoRedis74 = "# Server\r\nredis_version:7.4.1\r\nredis_mode:standalone\r\n\r\n# Clients\r\nconnected_clients:1\r\n"
	infoValkey8 = "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\nserver_mode:standalone\r\n\r\n# Clients\r\nconnected_clients:1\r\n"
	// KeyDB 6.3 and its main branch: a section of its own
	infoKeyDB = "# Server\r\nredis_version:255.255.255\r\nredis_mode:standalone\r\nfeatures:cluster_mget\r\n\r\n# Clients\r\nconnected_clients:1\r\n" +
		"current_client_thread:0\r\nthread_0_clients:1\r\n\r\n# KeyDB\r\nmvcc_depth:0\r\n"
	// KeyDB 6.0 and 6.2: no section, but the client thread fields
	infoKeyDB62 = "# Server\r\nredis_version:6.2.2\r\nredis_mode:standalone\r\n\r\n# Clients\r\nconnected_clients:1\r\nclients_in_timeout_table:0\r\n" +
		"current_client_thread:0\r\nthread_0_clients:1\r\n"
	infoDragonfly = "# Server\r\nredis_version:7.4.0\r\ndragonfly_version:df-v1.25.0\r\nredis_mode:standalone\r\n"
	// miniredis: the Clients and Stats sections only
	infoMiniredis = "# Clients\r\nconnected_clients:1\r\n\r\n# Stats\r\ntotal_connections_received:1\r\n"
)

func TestParseServer(t *testing.T) {
	for _, c := range []struct {
		info, name, version, str string
		refused                  bool
	}{
		{infoRedis60, "redis", "6.0.16", "redis 6.0.16", true},
		{infoRedis62, "redis", "6.2.14", "redis 6.2.14", false},
		{infoRedis70, "redis", "7.0.15", "redis 7.0.15", false},
		{infoRedis74, "redis", "7.4.1", "redis 7.4.1", false},
		{infoValkey8, "valkey", "8.0.1", "valkey 8.0.1 (redis_version 7.2.4)", false},
		{infoKeyDB, "keydb", "255.255.255", "keydb 255.255.255", true},
		{infoKeyDB62, "keydb", "6.2.2", "keydb 6.2.2", true},
		{infoDragonfly, "dragonfly", "df-v1.25.0", "dragonfly df-v1.25.0 (redis_version 7.4.0)", false},
		{infoMiniredis, "", "", "unknown server", false},
		{"", "", "", "unknown server", false},
	} {
		s := parseServer(c.info)
		if s.Name != c.name || s.Version != c.version || s.String() != c.str {
			t.Errorf("parseServer(%q) = %+v (%s), want %s %s (%s)", c.info, s, s, c.name, c.version, c.str)
		}
		err := s.Unsafe()
		if refused := errors.Is(err, ErrUnsafeServer); refused != c.refused {
			t.Errorf("%s: Unsafe() = %v, want refused %v", s, err, c.refused)
		}
		if err != nil && s.Name == "redis" {
			for _, want := range []string{"Redis " + s.Version, "6.2 or later", "PXAT", "docs/compatibility.md"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal %q does not say %q", err, want)
				}
			}
		}
		if err != nil && s.Name == "keydb" {
			for _, want := range []string{"KeyDB", "Snapchat/KeyDB#928", "docs/compatibility.md", "AllowUnsafeServer", "WEIR_ALLOW_UNSAFE_SERVER=1"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal %q does not say %q", err, want)
				}
			}
		}
	}
}

// A store on a server whose INFO says KeyDB refuses its first call, and
// every call after, with ErrUnsafeServer, writing nothing;
// Options.AllowUnsafeServer runs it. A server whose INFO says Redis,
// Valkey or Dragonfly, or says nothing (miniredis), is not refused.
func TestUnsafeServerRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, info string
		refused    bool
	}{
		{"keydb", infoKeyDB, true},
		{"keydb6.2", infoKeyDB62, true},
		{"redis6.0", infoRedis60, true},
		{"redis6.2", infoRedis62, false},
		{"redis", infoRedis74, false},
		{"valkey", infoValkey8, false},
		{"dragonfly", infoDragonfly, false},
		{"miniredis", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := redistest.Mini(t)
			if c.info != "" {
				m = redistest.MiniAs(t, c.info)
			}
			rdb := redistest.Client(t, m.Options)
			srv, err := IdentifyServer(ctx, rdb)
			if err != nil {
				t.Fatal(err)
			}
			if want := parseServer(c.info); srv != want && c.info != "" {
				t.Errorf("IdentifyServer = %+v, want %+v", srv, want)
			}
			s, err := New(rdb, Options{Namespace: "srv"})
			if err != nil {
				t.Fatal(err)
			}
			job := engine.EnqueueParams{Job: engine.JobSpec{ID: "j1", Queue: "q"}}
			_, err = s.Enqueue(ctx, job)
			if !c.refused {
				if err != nil {
					t.Fatalf("enqueue on %s: %v", c.name, err)
				}
				return
			}
			if !errors.Is(err, ErrUnsafeServer) {
				t.Fatalf("enqueue on %s: %v, want ErrUnsafeServer", c.name, err)
			}
			if _, err := s.Claim(ctx, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Second, Wait: time.Second}); !errors.Is(err, ErrUnsafeServer) {
				t.Fatalf("a blocking claim after the refusal: %v, want ErrUnsafeServer", err)
			}
			if ks := m.Mini.Keys(); len(ks) != 0 {
				t.Fatalf("the refused store wrote %v", ks)
			}
			s, err = New(rdb, Options{Namespace: "srv", AllowUnsafeServer: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Enqueue(ctx, job); err != nil {
				t.Fatalf("enqueue with AllowUnsafeServer: %v", err)
			}
		})
	}
}

// A server that refuses INFO (an ACL without +info) is not refused: the
// store cannot tell what it is, and runs.
func TestServerWithoutInfo(t *testing.T) {
	m := redistest.MiniAs(t, "-NOPERM User weir has no permissions to run the 'info' command")
	rdb := redistest.Client(t, m.Options)
	srv, err := IdentifyServer(context.Background(), rdb)
	if err != nil || srv != (Server{}) {
		t.Fatalf("IdentifyServer with INFO refused = %+v, %v; want the zero Server", srv, err)
	}
	s, err := New(rdb, Options{Namespace: "srv"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(context.Background(), engine.EnqueueParams{Job: engine.JobSpec{ID: "j1", Queue: "q"}}); err != nil {
		t.Fatal(err)
	}
}

// TestServerCheck runs on the server of WEIR_REDIS_URL, whatever it is
// (.ci/servers runs it on each): it is identified by name (the one
// WEIR_REDIS_SERVER_NAME gives, when set) and version; a KeyDB is refused
// at the store's first call with ErrUnsafeServer and nothing is written,
// and a store with AllowUnsafeServer makes a call that does not block; any
// other server runs the store.
func TestServerCheck(t *testing.T) {
	url := os.Getenv("WEIR_REDIS_URL")
	if url == "" {
		t.Skip("needs a real server (WEIR_REDIS_URL)")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rdb := redistest.Client(t, opt)
	srv, err := IdentifyServer(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Name == "" || srv.Version == "" {
		t.Fatalf("IdentifyServer = %+v: the server's INFO did not say what it is", srv)
	}
	t.Logf("WEIR_REDIS_URL is %s", srv)
	if want := os.Getenv("WEIR_REDIS_SERVER_NAME"); want != "" && srv.Name != want {
		t.Fatalf("WEIR_REDIS_URL is %s, WEIR_REDIS_SERVER_NAME says %s", srv, want)
	}
	ns := redistest.Namespace(t, rdb, "srvcheck")
	s, err := New(rdb, Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	job := engine.EnqueueParams{Job: engine.JobSpec{ID: "j1", Queue: "q"}}
	_, err = s.Enqueue(ctx, job)
	if srv.Name != "keydb" {
		if err != nil {
			t.Fatalf("enqueue on %s: %v", srv, err)
		}
		return
	}
	if !errors.Is(err, ErrUnsafeServer) {
		t.Fatalf("enqueue on %s: %v, want ErrUnsafeServer", srv, err)
	}
	if ks, err := rdb.Keys(ctx, "weir:{"+ns+":*").Result(); err != nil || len(ks) != 0 {
		t.Fatalf("the refused store wrote %v (%v)", ks, err)
	}
	s, err = New(rdb, Options{Namespace: ns, AllowUnsafeServer: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetJob(ctx, "j1"); !errors.Is(err, weir.ErrNotFound) {
		t.Fatalf("get job with AllowUnsafeServer on %s: %v, want ErrNotFound", srv, err)
	}
}
