package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// EmbeddedServer is the Report.Server of a run on the embedded miniredis.
const EmbeddedServer = "embedded miniredis"

// RedisServer is the Report.Server of a run on a Redis server.
const RedisServer = "redis"

// LiteServer is the Report.Server of a run on a server at a URL that has no
// INFO server section (a miniredis): like the embedded one, it has no
// memory figures or script timings.
const LiteServer = "redis-protocol server without INFO server (miniredis?)"

// poolSize is the connection pool of the bench's clients: more than the
// ceiling's clients and the largest concurrency, so that the pool never
// throttles a measurement.
const poolSize = 128

// server is the Redis a run measures, with the clients that talk to it.
type server struct {
	url       string // what worker processes connect to
	embedded  *miniredis.Miniredis
	rdb       *redis.Client // the measured client (round trips counted)
	admin     *redis.Client // measurement and cleanup (not counted)
	trips     *atomic.Int64
	infoCalls atomic.Int64 // INFO commands sent (miniredis counts them)
	version   string       // redis_version; empty on the embedded server
	lite      bool         // no INFO server, commandstats or memory (miniredis)
	namespace string
}

// openServer connects to url, or starts an embedded miniredis when url is
// empty.
func openServer(ctx context.Context, url string) (*server, error) {
	s := &server{trips: new(atomic.Int64), namespace: newNamespace()}
	if url == "" {
		m := miniredis.NewMiniRedis()
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("start the embedded server: %w", err)
		}
		s.embedded = m
		url = "redis://" + m.Addr() + "/0"
	}
	s.url = url
	opt, err := redis.ParseURL(url)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("%w: redis URL: %w", ErrUsage, err)
	}
	opt.PoolSize = max(opt.PoolSize, poolSize)
	s.rdb = redis.NewClient(opt)
	s.rdb.AddHook(tripHook{s.trips})
	aopt := *opt
	aopt.PoolSize = 4
	s.admin = redis.NewClient(&aopt)
	if err := s.admin.Ping(ctx).Err(); err != nil {
		s.close()
		return nil, fmt.Errorf("connect to %s: %w", opt.Addr, err)
	}
	s.lite = true
	if s.embedded == nil {
		if info, err := s.info(ctx, "server"); err == nil && info["redis_version"] != "" {
			s.version, s.lite = info["redis_version"], false
		} else if _, err := s.info(ctx, "stats"); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// newNamespace returns bench-<16 random hex digits>.
func newNamespace() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "bench-" + hex.EncodeToString(b)
}

// prefix is the prefix of every key of the run's namespace (redisstore/keys.go:
// weir:{<ns>:<partition>}:).
func (s *server) prefix() string { return "weir:{" + s.namespace + ":0}:" }

func (s *server) close() {
	if s.rdb != nil {
		s.rdb.Close()
	}
	if s.admin != nil {
		s.admin.Close()
	}
	if s.embedded != nil {
		s.embedded.Close()
	}
}

// info returns the fields of one INFO section.
func (s *server) info(ctx context.Context, section string) (map[string]string, error) {
	s.infoCalls.Add(1)
	txt, err := s.admin.Info(ctx, section).Result()
	if err != nil {
		return nil, fmt.Errorf("INFO %s: %w", section, err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(txt, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			m[k] = v
		}
	}
	return m, nil
}

// cmdStats is a snapshot of the server's command counters.
type cmdStats struct {
	calls      int64 // every command, those run inside Lua included, but INFO
	scriptCall int64 // EVAL and EVALSHA calls (Redis only)
	scriptUsec int64 // microseconds spent in EVAL and EVALSHA (Redis only)
}

// commandStats reads the counters: INFO commandstats on Redis (commands
// inside scripts are counted there too), INFO stats
// total_commands_processed on miniredis (which dispatches the commands of
// its scripts like any other, so counts them as well).
func (s *server) commandStats(ctx context.Context) (cmdStats, error) {
	var st cmdStats
	if s.lite {
		m, err := s.info(ctx, "stats")
		if err != nil {
			return st, err
		}
		n, err := strconv.ParseInt(m["total_commands_processed"], 10, 64)
		if err != nil {
			return st, fmt.Errorf("INFO stats: total_commands_processed %q", m["total_commands_processed"])
		}
		// miniredis counts the INFO commands of the measurement too.
		st.calls = n - s.infoCalls.Load()
		return st, nil
	}
	m, err := s.info(ctx, "commandstats")
	if err != nil {
		return st, err
	}
	for k, v := range m {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok || name == "info" {
			continue
		}
		calls, usec := statField(v, "calls"), statField(v, "usec")
		st.calls += calls
		if name == "evalsha" || name == "eval" || name == "fcall" || name == "fcall_ro" {
			st.scriptCall += calls
			st.scriptUsec += usec
		}
	}
	return st, nil
}

// statField reads one field of a commandstats value
// ("calls=3,usec=12,usec_per_call=4.00,...").
func statField(v, field string) int64 {
	for _, kv := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(kv, "=")
		if k == field {
			n, _ := strconv.ParseInt(val, 10, 64)
			return n
		}
	}
	return 0
}

// usedMemory returns INFO memory used_memory, or ok false on miniredis
// (which has none).
func (s *server) usedMemory(ctx context.Context) (int64, bool, error) {
	if s.lite {
		return 0, false, nil
	}
	m, err := s.info(ctx, "memory")
	if err != nil {
		return 0, false, err
	}
	n, err := strconv.ParseInt(m["used_memory"], 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("INFO memory: used_memory %q", m["used_memory"])
	}
	return n, true, nil
}

// keysLeft counts the keys of the run's namespace.
func (s *server) keysLeft(ctx context.Context) (int, error) {
	n := 0
	err := s.scanNamespace(ctx, func(keys []string) error { n += len(keys); return nil })
	return n, err
}

// clean deletes every key of the run's namespace.
func (s *server) clean(ctx context.Context) error {
	return s.scanNamespace(ctx, func(keys []string) error {
		return s.admin.Unlink(ctx, keys...).Err()
	})
}

func (s *server) scanNamespace(ctx context.Context, f func([]string) error) error {
	var cursor uint64
	for {
		keys, next, err := s.admin.Scan(ctx, cursor, scanPattern(s.prefix())+"*", 1000).Result()
		if err != nil {
			return fmt.Errorf("SCAN: %w", err)
		}
		if len(keys) > 0 {
			if err := f(keys); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// scanPattern escapes the glob characters of s.
func scanPattern(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ErrUsage marks an error in the Options (a bad URL, scenario or size).
var ErrUsage = errors.New("bench: bad options")

// tripHook counts client round trips: each Process and each
// ProcessPipeline is one.
type tripHook struct{ n *atomic.Int64 }

func (h tripHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h tripHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h tripHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}
