package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redisflag"
	"github.com/weirflow/weir/internal/rediskeys"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/redisstore"
)

// clearRedisEnv clears the variables that name a Redis and the partitions
// (the tests that call it set what they need).
func clearRedisEnv(t *testing.T) {
	t.Helper()
	for _, v := range []string{"WEIR_REDIS_URL", "WEIR_REDIS_CLUSTER", "WEIR_PARTITIONS"} {
		t.Setenv(v, "")
	}
}

// TestClusterFlagErrors: --redis with --cluster, a bad --cluster and
// partitions outside [0, engine.MaxPartitions] are usage errors naming
// the flag (or the variable), for every kind of command; dev takes
// neither --redis nor --cluster.
func TestClusterFlagErrors(t *testing.T) {
	clearRedisEnv(t)
	both := []string{"--redis", "redis://127.0.0.1:1/0", "--cluster", "127.0.0.1:2"}
	for _, c := range []struct {
		args []string
		env  string // WEIR_PARTITIONS
		want string
	}{
		{append([]string{"status", "x"}, both...), "", "--redis and --cluster are mutually exclusive"},
		{append([]string{"serve"}, both...), "", "--redis and --cluster are mutually exclusive"},
		{append([]string{"worker"}, both...), "", "--redis and --cluster are mutually exclusive"},
		{append([]string{"bench", "--quick"}, both...), "", "--redis and --cluster are mutually exclusive"},
		{append([]string{"run", "examples/pipeline.yaml"}, both...), "", "--redis and --cluster are mutually exclusive"},
		{[]string{"status", "x", "--cluster", "nohostport"}, "", `--cluster: cluster address "nohostport": want host:port`},
		{[]string{"status", "x", "--cluster", ",,"}, "", "want host:port,..."},
		{[]string{"status", "x", "--cluster", "redis://[::1"}, "", "--cluster: cluster URL"},
		{[]string{"bench", "--quick", "--cluster", "nohostport"}, "", "want host:port"},
		{[]string{"status", "x", "--partitions", "-1"}, "", "--partitions -1: want a number in [0, 1024]"},
		{[]string{"status", "x", "--partitions", "1025"}, "", "--partitions 1025"},
		{[]string{"bench", "--quick", "--partitions", "1025"}, "", "--partitions 1025"},
		{[]string{"status", "x", "--partitions", "two"}, "", "--partitions"},
		{[]string{"status", "x"}, "2000", "WEIR_PARTITIONS 2000"},
		{[]string{"status", "x"}, "two", `WEIR_PARTITIONS "two"`},
		{[]string{"status", "x"}, "", "no Redis: give --redis URL or set WEIR_REDIS_URL (or --cluster / WEIR_REDIS_CLUSTER"},
		{[]string{"dev", "--cluster", "127.0.0.1:1"}, "", "dev runs its own embedded server: --cluster is for the other commands"},
		{[]string{"dev", "--redis", "redis://127.0.0.1:1/0"}, "", "dev runs its own embedded server"},
	} {
		t.Setenv("WEIR_PARTITIONS", c.env)
		var out, errb bytes.Buffer
		if code := run(t.Context(), c.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q (WEIR_PARTITIONS=%q): status %d, stderr %q, want %d and %q", c.args, c.env, code, errb.String(), exitUsage, c.want)
		}
	}
	// A flag beats the variable: a good --partitions with a bad
	// WEIR_PARTITIONS is not an error about the partitions.
	t.Setenv("WEIR_PARTITIONS", "two")
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"status", "x", "--partitions", "1"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "no Redis") {
		t.Errorf("--partitions 1 with WEIR_PARTITIONS=two: status %d, stderr %q", code, errb.String())
	}
}

// TestTarget: which Redis a command uses, from the flags and the
// environment.
func TestTarget(t *testing.T) {
	for _, c := range []struct {
		flagURL, flagCluster, envURL, envCluster string
		url, cluster                             string
		err                                      error
	}{
		{url: "", cluster: ""},
		{flagURL: "redis://a", envCluster: "c:1", url: "redis://a"},
		{flagCluster: "c:1", envURL: "redis://b", cluster: "c:1"},
		{envURL: "redis://b", url: "redis://b"},
		{envCluster: "c:1", cluster: "c:1"},
		{envURL: "redis://b", envCluster: "c:1", url: "redis://b"}, // the URL wins
		{flagURL: "redis://a", flagCluster: "c:1", err: redisflag.ErrBoth},
	} {
		t.Setenv("WEIR_REDIS_URL", c.envURL)
		t.Setenv("WEIR_REDIS_CLUSTER", c.envCluster)
		g := &globalFlags{redisURL: c.flagURL, cluster: c.flagCluster}
		url, cluster, err := g.target()
		if url != c.url || cluster != c.cluster || !errors.Is(err, c.err) {
			t.Errorf("%+v: %q %q %v", c, url, cluster, err)
		}
	}
}

// TestPartitionsReachStore: --partitions (and WEIR_PARTITIONS) is the
// Config.Partitions of the store a command opens, on a Redis and on the
// embedded server. A count above one reaches redisstore.New: it either
// opens a store of that count or refuses it naming the count (as the
// store on main did before partitions were built).
func TestPartitionsReachStore(t *testing.T) {
	clearRedisEnv(t)
	m := miniredis.RunT(t)
	url := "redis://" + m.Addr() + "/0"
	for _, embedded := range []bool{false, true} {
		for _, n := range []int{0, 1, 4} {
			g := &globalFlags{partitions: n}
			if !embedded {
				g.redisURL = url
			}
			if err := g.check(true); err != nil {
				t.Fatal(err)
			}
			cn, err := g.open(t.Context(), embedded)
			if err != nil {
				if n <= 1 || !strings.Contains(err.Error(), "partitions 4") {
					t.Errorf("embedded %v, %d partitions: %v", embedded, n, err)
				}
				continue
			}
			if got := cn.store.Config().Partitions; got != n {
				t.Errorf("embedded %v: the store has %d partitions, want %d", embedded, got, n)
			}
			cn.Close()
		}
	}
	// From the environment when the flag is not given.
	t.Setenv("WEIR_PARTITIONS", "1")
	g := &globalFlags{redisURL: url}
	if err := g.check(false); err != nil || g.cfg != (engine.Config{Partitions: 1}) {
		t.Errorf("WEIR_PARTITIONS=1: %+v, %v", g.cfg, err)
	}
	// The CLI says so when the store refuses a count.
	r := weir(t, "", []string{"WEIR_PARTITIONS=4"}, "status", "x", "--redis", url)
	if r.Code == exitUsage && !strings.Contains(r.Stderr, "partitions 4") {
		t.Errorf("WEIR_PARTITIONS=4: status %d, stderr %q", r.Code, r.Stderr)
	}
	// A namespace of 4 partitions opened with 8: refused, and the error
	// says which count to give and how.
	if r := weir(t, "", nil, "queues", "--redis", url, "--namespace", "p4", "--partitions", "4"); r.Code != 0 {
		t.Fatalf("queues with --partitions 4: status %d, stderr %q", r.Code, r.Stderr)
	}
	r = weir(t, "", nil, "queues", "--redis", url, "--namespace", "p4", "--partitions", "8")
	if r.Code != exitUsage || !strings.Contains(r.Stderr, `"p4" has 4 partitions`) || !strings.Contains(r.Stderr, "--partitions or WEIR_PARTITIONS") {
		t.Errorf("queues with --partitions 8 on a namespace of 4: status %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestClusterCommands runs commands on the Redis Cluster of
// WEIR_REDIS_CLUSTER (skipped when unset): a workflow file run with
// --cluster, read back with status through the variable, a job enqueued
// and listed, queue settings and the event stream's switch.
func TestClusterCommands(t *testing.T) {
	t.Parallel()
	rdb := redistest.Cluster(t)
	addrs := os.Getenv("WEIR_REDIS_CLUSTER")
	ns := redistest.Namespace(t, rdb, "clicluster-")
	env := []string{"WEIR_REDIS_CLUSTER=" + addrs}

	r := weir(t, "", nil, "run", "--cluster", addrs, "--partitions", "1", "--namespace", ns, "--json", "examples/pipeline.yaml")
	r.WantCode(t, exitOK)
	id := decodeRecord(t, r).ID
	r = weir(t, "", env, "status", "--namespace", ns, id, "--json")
	r.WantCode(t, exitOK)
	if rec := decodeRecord(t, r); rec.State != "completed" || rec.ID != id {
		t.Errorf("status after run: %+v", rec)
	}
	// The keys are on the cluster, in the namespace.
	if n, err := rediskeys.Count(t.Context(), rdb, rediskeys.Namespace(ns)); err != nil || n == 0 {
		t.Errorf("%d keys of namespace %s on the cluster (%v)", n, ns, err)
	}

	dir := t.TempDir()
	job := filepath.Join(dir, "job.json")
	if err := os.WriteFile(job, []byte(`{"id": "cj1", "queue": "cq", "payload": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := weir(t, dir, env, "enqueue", "--namespace", ns, job); r.Code != 0 || r.Stdout != "cj1\n" {
		t.Fatalf("enqueue: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := weir(t, "", env, "jobs", "cq", "--namespace", ns); r.Code != 0 || !strings.Contains(r.Stdout, "cj1") {
		t.Errorf("jobs: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := weir(t, "", env, "queue", "limit", "cq", "3", "--namespace", ns); r.Code != 0 {
		t.Errorf("queue limit: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := weir(t, "", env, "queues", "--namespace", ns); r.Code != 0 || !strings.Contains(r.Stdout, "cq") {
		t.Errorf("queues: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := weir(t, "", env, "events", "--namespace", ns); r.Code != 0 {
		t.Errorf("events: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	// --redis given beats WEIR_REDIS_CLUSTER: a wrong URL fails to connect.
	if r := weir(t, "", env, "status", "x", "--redis", "redis://127.0.0.1:1/0"); r.Code != exitEnded || !strings.Contains(r.Stderr, "127.0.0.1:1") {
		t.Errorf("--redis over WEIR_REDIS_CLUSTER: %d %q", r.Code, r.Stderr)
	}
}

// TestClusterServeAndWorker: weir serve and weir worker on the Redis
// Cluster of WEIR_REDIS_CLUSTER (skipped when unset): a workflow
// submitted on the cluster is run by a worker started with --cluster,
// and the REST API served with --cluster answers /healthz and pauses a
// queue that weir queues then shows paused.
func TestClusterServeAndWorker(t *testing.T) {
	t.Parallel()
	rdb := redistest.Cluster(t)
	addrs := os.Getenv("WEIR_REDIS_CLUSTER")
	ns := redistest.Namespace(t, rdb, "cliclusterw-")
	env := []string{"WEIR_REDIS_CLUSTER=" + addrs}

	r := weir(t, "", env, "submit", "--namespace", ns, "examples/pipeline.yaml")
	r.WantCode(t, exitOK)
	id := strings.TrimSpace(r.Stdout)
	w := startInProcess(t, "worker", "--cluster", addrs, "--namespace", ns, "--concurrency", "4")
	r = weir(t, "", env, "wait", "--namespace", ns, id, "--json")
	r.WantCode(t, exitOK)
	if rec := decodeRecord(t, r); rec.State != "completed" || recordTask(t, rec, "words").Result != "24\n" {
		t.Errorf("waited record: %+v", rec)
	}
	if code := w.stop(t); code != exitOK {
		t.Errorf("worker ended with status %d\n%s", code, w.stderr.String())
	}

	const token = "tok-0123456789abcdef"
	s := startInProcess(t, "serve", "--cluster", addrs, "--namespace", ns, "--http", "127.0.0.1:0", "--token", token)
	u := s.printed(t, "WEIR_HTTP_URL")
	if code, body := get(t, "GET", u+"/healthz", ""); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("healthz: %d %s", code, body)
	}
	if code, body := get(t, "POST", u+"/v1/queues/cq/pause", token); code != 200 {
		t.Errorf("pause: %d %s", code, body)
	}
	if r := weir(t, "", env, "queues", "--namespace", ns); r.Code != 0 || !regexp.MustCompile(`(?m)^cq\s+true\s`).MatchString(r.Stdout) {
		t.Errorf("queues after a pause over REST: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if code := s.stop(t); code != exitOK {
		t.Errorf("serve ended with status %d\n%s", code, s.stderr.String())
	}
}

// TestClusterSchedules: weir schedule on a namespace of 8 partitions on
// the Redis Cluster of WEIR_REDIS_CLUSTER (skipped when unset): schedules
// whose names land in different partitions are added, listed, paused,
// resumed and removed; a worker started with --cluster fires one, and its
// tick's workflow, "<name>@<seconds>", completes and is read by status.
func TestClusterSchedules(t *testing.T) {
	t.Parallel()
	rdb := redistest.Cluster(t)
	addrs := os.Getenv("WEIR_REDIS_CLUSTER")
	ns := redistest.Namespace(t, rdb, "cliclusters-")
	cli := func(args ...string) result {
		t.Helper()
		return weir(t, "", nil, append(args, "--cluster", addrs, "--partitions", "8", "--namespace", ns)...)
	}
	// report: partition 3 of 8, tick: 4
	cli("schedule", "add", "report", "--cron", "0 30 2 * * *", "--queue", "reports").WantCode(t, exitOK)
	flow := writeFile(t, "tick.yaml", "tasks:\n  - name: hello\n    run: echo tick\n")
	cli("schedule", "add", "tick", "--every", "1s", "--workflow", flow).WantCode(t, exitOK)
	r := cli("schedule", "ls")
	r.WantCode(t, exitOK)
	if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], "report") || !strings.HasPrefix(lines[2], "tick") {
		t.Errorf("ls:\n%s", r.Stdout)
	}
	cli("schedule", "pause", "report").WantCode(t, exitOK)
	cli("schedule", "resume", "report").WantCode(t, exitOK)
	cli("schedule", "rm", "report").WantCode(t, exitOK)
	if r := cli("schedule", "rm", "report"); r.Code != exitEnded || !strings.Contains(r.Stderr, "schedule report: not found") {
		t.Errorf("rm twice: %d %q", r.Code, r.Stderr)
	}

	w := startInProcess(t, "worker", "--cluster", addrs, "--namespace", ns, "--concurrency", "2")
	s, err := redisstore.New(rdb, redisstore.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	id := firstFire(t, s, "tick")
	if !strings.HasPrefix(id, "tick@") {
		t.Fatalf("fired %q", id)
	}
	cli("schedule", "rm", "tick").WantCode(t, exitOK)
	r = cli("wait", id, "--json")
	r.WantCode(t, exitOK)
	if rec := decodeRecord(t, r); rec.State != "completed" || rec.ID != id {
		t.Errorf("the tick's workflow: %+v", rec)
	}
	if r := cli("status", id); r.Code != exitOK || !strings.Contains(r.Stdout, id) {
		t.Errorf("status %s: %d %q %q", id, r.Code, r.Stdout, r.Stderr)
	}
	if code := w.stop(t); code != exitOK {
		t.Errorf("worker ended with status %d\n%s", code, w.stderr.String())
	}
}
