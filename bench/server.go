package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/internal/redisflag"
	"github.com/weirflow/weir/internal/rediskeys"
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
	url string // what worker processes connect to (empty on a cluster)
	// cluster is the cluster's seed addresses (Options.Cluster), what
	// worker processes connect to; empty on a single server
	cluster   string
	masters   int // the cluster's masters when the run began; 0 on a single server
	embedded  *miniredis.Miniredis
	rdb       redis.UniversalClient // the measured client (round trips counted)
	admin     redis.UniversalClient // measurement and cleanup (not counted)
	trips     *atomic.Int64
	infoCalls atomic.Int64 // INFO commands sent (miniredis counts them)
	version   string       // redis_version; empty on the embedded server
	lite      bool         // no INFO server, commandstats or memory (miniredis)
	namespace string
}

// openServer connects to the cluster whose seed addresses cluster lists,
// else to url, or starts an embedded miniredis when both are empty.
func openServer(ctx context.Context, url, cluster string) (*server, error) {
	s := &server{trips: new(atomic.Int64), namespace: newNamespace()}
	if cluster != "" {
		return s, s.openCluster(ctx, cluster)
	}
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
	rdb := redis.NewClient(opt)
	rdb.AddHook(tripHook{s.trips})
	s.rdb = rdb
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

// openCluster connects to the Redis Cluster of the seed addresses cluster
// (redisflag.ClusterOptions). Its figures are those of every master
// summed; its version that of the masters (they must agree).
func (s *server) openCluster(ctx context.Context, cluster string) error {
	opt, err := redisflag.ClusterOptions(cluster)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	s.cluster = cluster
	opt.PoolSize = max(opt.PoolSize, poolSize)
	rdb := redis.NewClusterClient(opt)
	rdb.AddHook(tripHook{s.trips})
	s.rdb = rdb
	aopt := *opt
	aopt.PoolSize = 4
	s.admin = redis.NewClusterClient(&aopt)
	if err := s.admin.Ping(ctx).Err(); err != nil {
		s.close()
		return fmt.Errorf("connect to cluster %s: %w", strings.Join(opt.Addrs, ","), err)
	}
	infos, err := s.infoAll(ctx, "server")
	if err != nil {
		s.close()
		return err
	}
	versions := map[string]bool{}
	for _, m := range infos {
		versions[m.fields["redis_version"]] = true
		s.version = m.fields["redis_version"]
	}
	if len(versions) != 1 || s.version == "" {
		s.close()
		return fmt.Errorf("cluster %s: the masters' redis_version differ or are missing (%d versions)", strings.Join(opt.Addrs, ","), len(versions))
	}
	s.masters = len(infos)
	return nil
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
		_ = s.rdb.Close()
	}
	if s.admin != nil {
		_ = s.admin.Close()
	}
	if s.embedded != nil {
		s.embedded.Close()
	}
}

// info returns the fields of one INFO section (of a single server).
func (s *server) info(ctx context.Context, section string) (map[string]string, error) {
	s.infoCalls.Add(1)
	txt, err := s.admin.Info(ctx, section).Result()
	if err != nil {
		return nil, fmt.Errorf("INFO %s: %w", section, err)
	}
	return parseInfo(txt), nil
}

// nodeInfo is one INFO section of one server: a cluster master's, or the
// single server's.
type nodeInfo struct {
	// addr is the address the bench's client reaches the server at (its
	// go-redis Options.Addr).
	addr   string
	fields map[string]string
}

// infoAll returns one INFO section of every master of a cluster, sorted by
// address, or of the single server.
func (s *server) infoAll(ctx context.Context, section string) ([]nodeInfo, error) {
	if s.cluster == "" {
		m, err := s.info(ctx, section)
		if err != nil {
			return nil, err
		}
		addr := ""
		if c, ok := s.admin.(*redis.Client); ok {
			addr = c.Options().Addr
		}
		return []nodeInfo{{addr: addr, fields: m}}, nil
	}
	var (
		mu  sync.Mutex
		out []nodeInfo
	)
	err := rediskeys.ForEachNode(ctx, s.admin, func(ctx context.Context, c *redis.Client) error {
		s.infoCalls.Add(1)
		txt, err := c.Info(ctx, section).Result()
		if err != nil {
			return fmt.Errorf("INFO %s on %s: %w", section, c.Options().Addr, err)
		}
		mu.Lock()
		out = append(out, nodeInfo{addr: c.Options().Addr, fields: parseInfo(txt)})
		mu.Unlock()
		return nil
	})
	slices.SortFunc(out, func(a, b nodeInfo) int { return strings.Compare(a.addr, b.addr) })
	return out, err
}

// parseInfo reads the "field:value" lines of an INFO reply.
func parseInfo(txt string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(txt, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			m[k] = v
		}
	}
	return m
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
	// On a cluster: the sum over its masters.
	ms, err := s.infoAll(ctx, "commandstats")
	if err != nil {
		return st, err
	}
	for _, m := range ms {
		st = st.add(scriptStats(m.fields))
	}
	return st, nil
}

// scriptStats reads the counters of one server's INFO commandstats.
func scriptStats(fields map[string]string) cmdStats {
	var st cmdStats
	for k, v := range fields {
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
	return st
}

// add is the sum of st and o.
func (st cmdStats) add(o cmdStats) cmdStats {
	return cmdStats{calls: st.calls + o.calls, scriptCall: st.scriptCall + o.scriptCall, scriptUsec: st.scriptUsec + o.scriptUsec}
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

// serverCPU returns the server's CPU time so far in µs: INFO cpu
// used_cpu_user + used_cpu_sys of the whole server process (every client's
// work and its own background work), summed over a cluster's masters.
func (s *server) serverCPU(ctx context.Context) (int64, error) {
	ms, err := s.infoAll(ctx, "cpu")
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, m := range ms {
		us, err := cpuMicros(m.fields)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", m.addr, err)
		}
		sum += us
	}
	return sum, nil
}

// usedMemory returns INFO memory used_memory (summed over a cluster's
// masters), or ok false on miniredis (which has none).
func (s *server) usedMemory(ctx context.Context) (int64, bool, error) {
	if s.lite {
		return 0, false, nil
	}
	ms, err := s.infoAll(ctx, "memory")
	if err != nil {
		return 0, false, err
	}
	var sum int64
	for _, m := range ms {
		n, err := strconv.ParseInt(m.fields["used_memory"], 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("INFO memory of %s: used_memory %q", m.addr, m.fields["used_memory"])
		}
		sum += n
	}
	return sum, true, nil
}

// keysLeft counts the keys of the run's namespace (every partition, every
// master of a cluster).
func (s *server) keysLeft(ctx context.Context) (int, error) {
	n, err := rediskeys.Count(ctx, s.admin, s.keyPattern())
	if err != nil {
		return 0, fmt.Errorf("SCAN: %w", err)
	}
	return n, nil
}

// clean deletes every key of the run's namespace.
func (s *server) clean(ctx context.Context) error {
	if err := rediskeys.Delete(ctx, s.admin, s.keyPattern()); err != nil {
		return fmt.Errorf("SCAN and DEL: %w", err)
	}
	return nil
}

// keyPattern matches every key of the run's namespace, of any partition.
func (s *server) keyPattern() string { return scanPattern("weir:{"+s.namespace+":") + "*" }

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
