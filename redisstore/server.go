package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Server is what a Redis-protocol server says it is in its INFO reply
// (docs/compatibility.md).
type Server struct {
	// Name is the server's kind: "redis", "valkey", "keydb" or
	// "dragonfly"; empty when its INFO did not say (miniredis, a server
	// that refuses INFO).
	Name string
	// Version is the server's own version: valkey_version or
	// dragonfly_version where the server has one, else redis_version
	// (where KeyDB gives its own; a build of its main branch says
	// 255.255.255).
	Version string
	// RedisVersion is redis_version: the Redis version the server says it
	// is compatible with (Valkey 8 says 7.2.4).
	RedisVersion string
}

// String is "valkey 8.0.1 (redis_version 7.2.4)", "redis 7.4.1", or
// "unknown server" when the INFO reply did not say.
func (s Server) String() string {
	switch {
	case s.Name == "":
		return "unknown server"
	case s.RedisVersion != "" && s.RedisVersion != s.Version:
		return fmt.Sprintf("%s %s (redis_version %s)", s.Name, s.Version, s.RedisVersion)
	}
	return s.Name + " " + s.Version
}

// ErrUnsafeServer is matched by the error of every call of a store on a
// server known to break what weir relies on (docs/compatibility.md):
// today KeyDB, whose served blocking pops deadlock or crash it and whose
// snapshot reads bring back deleted keys, and Redis before 6.2, which
// lacks commands the scripts use. A store checks its server (INFO)
// at its first call and refuses it, writing nothing;
// Options.AllowUnsafeServer runs on it anyway.
var ErrUnsafeServer = errors.New("weir: unsafe server")

// IdentifyServer asks the server of client (any node of a cluster) what it
// is, with one INFO. A server that refuses INFO (an ACL without +info, a
// managed service that renamed it) or gives a reply that names no server
// is the zero Server, not an error; a connection that fails is an error.
func IdentifyServer(ctx context.Context, client redis.UniversalClient) (Server, error) {
	info, err := client.Info(ctx).Result()
	if err != nil {
		var rerr redis.Error
		if errors.As(err, &rerr) {
			return Server{}, nil
		}
		return Server{}, mapErr(err)
	}
	return parseServer(info), nil
}

// parseServer reads an INFO reply (the default sections).
func parseServer(info string) Server {
	fields := map[string]string{}
	keydb := false
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") {
			// KeyDB 6.3 and later: a section of its own
			keydb = keydb || strings.EqualFold(strings.TrimSpace(line[1:]), "KeyDB")
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = v
		}
	}
	s := Server{RedisVersion: fields["redis_version"], Version: fields["redis_version"]}
	// KeyDB 6.0 and later: the client thread a connection runs on, in the
	// Clients section
	_, thread := fields["current_client_thread"]
	switch {
	case keydb || thread:
		s.Name = "keydb"
	case fields["valkey_version"] != "":
		s.Name, s.Version = "valkey", fields["valkey_version"]
	case fields["dragonfly_version"] != "":
		s.Name, s.Version = "dragonfly", fields["dragonfly_version"]
	case fields["server_name"] != "":
		s.Name = fields["server_name"]
	case s.RedisVersion != "":
		s.Name = "redis"
	}
	return s
}

// Unsafe returns an error matching ErrUnsafeServer, saying why and what to
// do, when weir refuses s (a store does at its first call unless
// Options.AllowUnsafeServer); else nil.
func (s Server) Unsafe() error {
	if s.Name == "redis" && olderThan(s.Version, 6, 2) {
		return fmt.Errorf("%w: the server is Redis %s, and weir needs Redis 6.2 or later: its scripts use SET … PXAT and "+
			"XTRIM … MINID, which 6.2 added, and a script that fails there after a write leaves that write behind. "+
			"Upgrade the server (docs/compatibility.md)", ErrUnsafeServer, s.Version)
	}
	if s.Name != "keydb" {
		return nil
	}
	return fmt.Errorf("%w: the server is KeyDB %s, which weir refuses: a BLPOP with a timeout that a push serves stays in "+
		"KeyDB's timeout table and, once its client has gone, deadlocks or crashes the server (Snapchat/KeyDB#928, #659); "+
		"every blocking claim is such a BLPOP. And a key unlinked while a SCAN or KEYS runs is read back, so deleted records return. "+
		"Use Redis or Valkey (docs/compatibility.md), or accept the risk: redisstore.Options.AllowUnsafeServer, "+
		"WEIR_ALLOW_UNSAFE_SERVER=1 for the weir commands", ErrUnsafeServer, s.Version)
}

// checkServer refuses an unsafe server (Server.Unsafe) unless the options
// allow it.
func (s *Store) checkServer(ctx context.Context) error {
	if s.opts.AllowUnsafeServer {
		return nil
	}
	srv, err := IdentifyServer(ctx, s.client)
	if err != nil {
		return err
	}
	return srv.Unsafe()
}

// olderThan reports whether version ("6.0.16") is before major.minor; a
// version that does not parse is not.
func olderThan(version string, major, minor int) bool {
	f := strings.SplitN(version, ".", 3)
	if len(f) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(f[0])
	mi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma < major || ma == major && mi < minor
}
