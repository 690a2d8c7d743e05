package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/conformance"
	"github.com/weirflow/weir/internal/clitest"
	"github.com/weirflow/weir/internal/rediskeys"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
)

// binary is the weir-conformance binary, built on first use (with -race
// when the tests run with it): the tests run the command as a user does.
var binary = clitest.New("weir-conformance")

func TestMain(m *testing.M) {
	code := m.Run()
	binary.Cleanup()
	os.Exit(code)
}

// result is what one run of the binary did.
type result = clitest.Result

// weirConformance runs the binary with args in dir (a new temporary
// directory when empty), with WEIR_REDIS_URL and WEIR_REDIS_CLUSTER
// cleared, and returns its exit status and output.
func weirConformance(t *testing.T, dir string, args ...string) result {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	return binary.Run(t, dir, nil, args...)
}

// decodeConformance decodes `weir-conformance --json` strictly.
func decodeConformance(t *testing.T, r result) conformanceReport {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	dec.DisallowUnknownFields()
	var rep conformanceReport
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("decode the report: %v\nstdout:\n%s\nstderr:\n%s", err, r.Stdout, r.Stderr)
	}
	return rep
}

func keysOf(t *testing.T, rdb *redis.Client, prefix string) []string {
	t.Helper()
	ks, err := rdb.Keys(context.Background(), "weir:{"+prefix+"-*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

var confPrefixSeq int

func confPrefix() string {
	confPrefixSeq++
	return fmt.Sprintf("clitest%d-%d", time.Now().UnixNano()%1e9, confPrefixSeq)
}

// checkPassingRun runs the suite on url and checks the report and that
// the run's namespaces are gone; real: the server is not miniredis, and
// says what it is.
func checkPassingRun(t *testing.T, url string, rdb *redis.Client, real bool) {
	prefix := confPrefix()
	r := weirConformance(t, "", "--redis", url, "--namespace", prefix, "--sequences", "20", "--json")
	r.WantCode(t, 0)
	rep := decodeConformance(t, r)
	if rep.Failed != 0 || rep.Passed < 50 || !rep.Removed || rep.Namespace != prefix {
		t.Fatalf("report: %d passed, %d failed, removed %v, namespace %q:\n%s", rep.Passed, rep.Failed, rep.Removed, rep.Namespace, r.Stdout)
	}
	if rep.Sequences < 20 {
		t.Errorf("%d sequences ran, want at least 20", rep.Sequences)
	}
	if rep.Partitions != 0 {
		t.Errorf("without --partitions: partitions %d", rep.Partitions)
	}
	if rep.AskedPath != "auto" || (rep.Path != "functions" && rep.Path != "scripts") {
		t.Errorf("call path %q (--path %q), want functions or scripts (auto)", rep.Path, rep.AskedPath)
	}
	if real != (rep.ServerName != "" && rep.ServerVersion != "") {
		t.Errorf("the report says the server is %q %q (a real server: %v)", rep.ServerName, rep.ServerVersion, real)
	}
	if strings.Contains(r.Stdout, "@") || strings.Contains(r.Stdout, "redis://") {
		t.Errorf("the report shows the URL:\n%s", r.Stdout)
	}
	names := map[string]conformance.Status{}
	for _, res := range rep.Results {
		names[res.Name] = res.Status
	}
	for _, n := range []string{"Scenarios/chain.txt", "Errors/StaleLease", "Concurrency/JoinPromotedOnce", "Sequences/batches/0", "QueueContents"} {
		if names[n] != conformance.Passed {
			t.Errorf("%s: %q, want passed", n, names[n])
		}
	}
	if ks := keysOf(t, rdb, prefix); len(ks) > 0 {
		t.Fatalf("%d keys left in the run's namespaces: %v", len(ks), ks[:min(5, len(ks))])
	}
	// Text output: the counts and a line per test.
	prefix = confPrefix()
	r = weirConformance(t, "", "--redis", url, "--namespace", prefix, "--sequences", "5", "--path", "scripts")
	r.WantCode(t, 0)
	for _, want := range []string{"PASS Scenarios/chain.txt", "PASS Sequences/batches/0", "failed 0,", "namespaces removed"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, r.Stdout)
		}
	}
	// its first line: the server, what it is, the call path
	first, _, _ := strings.Cut(r.Stdout, "\n")
	srv := redisstore.Server{Name: rep.ServerName, Version: rep.ServerVersion, RedisVersion: rep.RedisVersion}
	if want := fmt.Sprintf("server %s: %s; call path scripts (--path scripts)", rep.Server, srv); first != want {
		t.Errorf("text report starts %q, want %q", first, want)
	}
	if ks := keysOf(t, rdb, prefix); len(ks) > 0 {
		t.Fatalf("%d keys left in the run's namespaces", len(ks))
	}
	checkPartitionedRun(t, "--redis", url, func(prefix string) int { return len(keysOf(t, rdb, prefix)) })
}

// checkPartitionedRun runs the suite with --partitions 4 on the server of
// flag and addr: it passes, says so, and leaves no key (left counts them).
func checkPartitionedRun(t *testing.T, flag, addr string, left func(prefix string) int) {
	t.Helper()
	prefix := confPrefix()
	r := weirConformance(t, "", flag, addr, "--namespace", prefix, "--sequences", "5", "--partitions", "4", "--json")
	r.WantCode(t, 0)
	rep := decodeConformance(t, r)
	if rep.Failed != 0 || rep.Passed < 50 || !rep.Removed || rep.Partitions != 4 {
		t.Fatalf("--partitions 4: %d passed, %d failed, removed %v, partitions %d:\n%s",
			rep.Passed, rep.Failed, rep.Removed, rep.Partitions, r.Stdout)
	}
	prefix2 := confPrefix()
	r = weirConformance(t, "", flag, addr, "--namespace", prefix2, "--sequences", "2", "--partitions", "4")
	r.WantCode(t, 0)
	if want := "namespaces of 4 partitions"; !strings.Contains(r.Stdout, want) {
		t.Errorf("text report lacks %q:\n%s", want, r.Stdout)
	}
	if n := left(prefix2); n > 0 {
		t.Fatalf("--partitions 4: %d keys left in the run's namespaces", n)
	}
	if n := left(prefix); n > 0 {
		t.Fatalf("--partitions 4: %d keys left in the run's namespaces", n)
	}
}

// TestConformanceCmdMiniredis: weir-conformance passes on miniredis and
// removes its namespaces.
func TestConformanceCmdMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	checkPassingRun(t, "redis://"+m.Addr()+"/0", rdb, false)
}

// TestConformanceCmdRedis: the same on the redis-server of WEIR_REDIS_URL.
func TestConformanceCmdRedis(t *testing.T) {
	url := os.Getenv("WEIR_REDIS_URL")
	if url == "" {
		t.Skip("WEIR_REDIS_URL is not set")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	checkPassingRun(t, url, rdb, true)
}

// TestConformanceCmdCatchesBrokenServer: on a server whose data changes
// behind the store's back (a goroutine deletes the run's keys at random),
// weir-conformance exits 1 and reports failures with the sequence, and
// still removes its namespaces.
func TestConformanceCmdCatchesBrokenServer(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	prefix := confPrefix()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			ks, _ := rdb.Keys(ctx, "weir:{"+prefix+"-*").Result()
			for i, k := range ks {
				if i%3 == 0 && !strings.HasSuffix(k, ":seq") && !strings.HasSuffix(k, ":seq3") {
					rdb.Del(ctx, k)
				}
			}
			time.Sleep(time.Millisecond)
		}
	})
	r := weirConformance(t, "", "--redis", "redis://"+m.Addr(), "--namespace", prefix, "--sequences", "300", "--json")
	cancel()
	wg.Wait()
	r.WantCode(t, 1)
	rep := decodeConformance(t, r)
	if rep.Failed == 0 || rep.OK() {
		t.Fatalf("a broken server passed: %d passed, %d failed", rep.Passed, rep.Failed)
	}
	var seqFail bool
	for _, res := range rep.Results {
		if res.Status == conformance.Failed && strings.HasPrefix(res.Name, "Sequences/batches/") {
			out := strings.Join(res.Output, "\n")
			if !strings.Contains(out, "regression tape") {
				t.Errorf("%s failed without the reproducing tape:\n%s", res.Name, out)
			}
			seqFail = true
		}
	}
	if !seqFail {
		t.Errorf("no random sequence failed:\n%s", r.Stdout)
	}
	if !rep.Removed {
		t.Errorf("the run's namespaces were not removed")
	}
	if ks := keysOf(t, rdb, prefix); len(ks) > 0 {
		t.Fatalf("%d keys left in the run's namespaces", len(ks))
	}
}

// TestConformanceCmdUsage: bad flags are usage errors.
func TestConformanceCmdUsage(t *testing.T) {
	weirConformance(t, "").WantCode(t, exitUsage)
	weirConformance(t, "", "--redis", "redis://127.0.0.1:1", "--sequences", "-1").WantCode(t, exitUsage)
	weirConformance(t, "", "--redis", "redis://127.0.0.1:1", "--namespace", "bad name").WantCode(t, exitUsage)
	r := weirConformance(t, "", "--redis", "redis://127.0.0.1:1", "--path", "eval")
	r.WantCode(t, exitUsage)
	if !strings.Contains(r.Stderr, "auto, functions or scripts") {
		t.Errorf("--path eval: %q", r.Stderr)
	}
	for args, want := range map[[4]string]string{
		{"--redis", "redis://127.0.0.1:1", "--cluster", "127.0.0.1:2"}: "--redis and --cluster are mutually exclusive",
		{"--cluster", "nohostport", "--sequences", "1"}:                `--cluster: cluster address "nohostport": want host:port`,
		{"--redis", "redis://127.0.0.1:1", "--partitions", "1025"}:     "--partitions 1025: want 0 (each case's own, one) to 1024",
		{"--redis", "redis://127.0.0.1:1", "--partitions", "-1"}:       "--partitions -1: want 0",
	} {
		r := weirConformance(t, "", args[:]...)
		r.WantCode(t, exitUsage)
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("%q: %q, want %q", args, r.Stderr, want)
		}
	}
}

// TestConformanceCmdCluster: weir-conformance --cluster passes on the
// Redis Cluster of WEIR_REDIS_CLUSTER (skipped when unset), names the
// seed addresses as its server and removes its namespaces from every
// master.
func TestConformanceCmdCluster(t *testing.T) {
	rdb := redistest.Cluster(t)
	addrs := os.Getenv("WEIR_REDIS_CLUSTER")
	prefix := confPrefix()
	r := weirConformance(t, "", "--cluster", addrs, "--namespace", prefix, "--sequences", "5", "--json")
	r.WantCode(t, 0)
	rep := decodeConformance(t, r)
	if rep.Failed != 0 || rep.Passed < 50 || !rep.Removed || rep.Server != addrs {
		t.Fatalf("report: %d passed, %d failed, removed %v, server %q:\n%s", rep.Passed, rep.Failed, rep.Removed, rep.Server, r.Stdout)
	}
	if n, err := rediskeys.Count(t.Context(), rdb, "weir:{"+prefix+"-*"); err != nil || n != 0 {
		t.Errorf("%d keys left in the run's namespaces (%v)", n, err)
	}
	checkPartitionedRun(t, "--cluster", addrs, func(prefix string) int {
		n, err := rediskeys.Count(t.Context(), rdb, "weir:{"+prefix+"-*")
		if err != nil {
			t.Fatal(err)
		}
		return n
	})
}

// infoKeyDB is what KeyDB's INFO says (cut to the lines that tell it).
const infoKeyDB = "# Server\r\nredis_version:6.3.4\r\nredis_mode:standalone\r\n\r\n# Clients\r\nconnected_clients:1\r\n" +
	"current_client_thread:0\r\nthread_0_clients:1\r\n\r\n# KeyDB\r\nmvcc_depth:0\r\n"

// TestConformanceCmdRefusesKeyDB: on a server whose INFO says KeyDB,
// weir-conformance stops before any test with exit status 1 and the
// store's refusal, leaving no key; WEIR_ALLOW_UNSAFE_SERVER=1 runs the
// suite there, and the report says what the server is.
func TestConformanceCmdRefusesKeyDB(t *testing.T) {
	m := redistest.MiniAs(t, infoKeyDB)
	r := weirConformance(t, "", "--redis", m.URL, "--sequences", "2")
	r.WantCode(t, exitFail)
	for _, want := range []string{"server " + m.Options.Addr + " (keydb 6.3.4), --path auto: weir: unsafe server", "Snapchat/KeyDB#928", "WEIR_ALLOW_UNSAFE_SERVER=1"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("the refusal does not say %q: %q", want, r.Stderr)
		}
	}
	if r.Stdout != "" {
		t.Errorf("the refused run printed a report:\n%s", r.Stdout)
	}
	if ks := m.Mini.Keys(); len(ks) != 0 {
		t.Fatalf("the refused run wrote %v", ks)
	}
	r = binary.Run(t, t.TempDir(), []string{"WEIR_ALLOW_UNSAFE_SERVER=1"}, "--redis", m.URL, "--sequences", "2", "--json")
	r.WantCode(t, exitOK)
	rep := decodeConformance(t, r)
	if rep.ServerName != "keydb" || rep.ServerVersion != "6.3.4" || rep.Path != "scripts" || rep.Failed != 0 || rep.Passed < 50 {
		t.Fatalf("with WEIR_ALLOW_UNSAFE_SERVER=1: server %q %q, path %q, %d passed, %d failed", rep.ServerName, rep.ServerVersion, rep.Path, rep.Passed, rep.Failed)
	}
}
