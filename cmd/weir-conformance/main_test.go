package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/conformance"
)

// bin is the weir-conformance binary, built on first use by binary (with
// -race when the tests run with it): the tests run the command as a user
// does, outside go test's process (flags unparsed, package testing not
// initialised).
var (
	bin        string
	buildFlags []string
	buildOnce  sync.Once
	buildErr   error
	binDir     string
)

// binary returns the path of the binary, building it once.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "weir-conformance-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		bin = filepath.Join(dir, "weir-conformance")
		if runtime.GOOS == "windows" {
			bin += ".exe"
		}
		build := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", bin, ".")...)
		var out bytes.Buffer
		build.Stdout, build.Stderr = &out, &out
		if err := build.Run(); err != nil {
			buildErr = fmt.Errorf("build weir-conformance: %v\n%s", err, out.String())
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// result is what one run of the binary did.
type result struct {
	code           int
	stdout, stderr string
}

// weirConformance runs the binary with args in dir (a new temporary
// directory when empty), with WEIR_REDIS_URL cleared, and returns its exit
// status and output.
func weirConformance(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), binary(t), args...)
	cmd.Dir = dir
	if dir == "" {
		cmd.Dir = t.TempDir()
	}
	cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("weir-conformance %v: %v", args, err)
	}
	return r
}

// wantCode fails the test when r did not exit with code.
func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// decodeConformance decodes `weir-conformance --json` strictly.
func decodeConformance(t *testing.T, r result) conformanceReport {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	var rep conformanceReport
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("decode the report: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
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
// the run's namespaces are gone.
func checkPassingRun(t *testing.T, url string, rdb *redis.Client) {
	prefix := confPrefix()
	r := weirConformance(t, "", "--redis", url, "--namespace", prefix, "--sequences", "20", "--json")
	r.wantCode(t, 0)
	rep := decodeConformance(t, r)
	if rep.Failed != 0 || rep.Passed < 50 || !rep.Removed || rep.Namespace != prefix {
		t.Fatalf("report: %d passed, %d failed, removed %v, namespace %q:\n%s", rep.Passed, rep.Failed, rep.Removed, rep.Namespace, r.stdout)
	}
	if rep.Sequences < 20 {
		t.Errorf("%d sequences ran, want at least 20", rep.Sequences)
	}
	if strings.Contains(r.stdout, "@") || strings.Contains(r.stdout, "redis://") {
		t.Errorf("the report shows the URL:\n%s", r.stdout)
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
	r.wantCode(t, 0)
	for _, want := range []string{"PASS Scenarios/chain.txt", "PASS Sequences/batches/0", "failed 0,", "namespaces removed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, r.stdout)
		}
	}
	if ks := keysOf(t, rdb, prefix); len(ks) > 0 {
		t.Fatalf("%d keys left in the run's namespaces", len(ks))
	}
}

// TestConformanceCmdMiniredis: weir-conformance passes on miniredis and
// removes its namespaces.
func TestConformanceCmdMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	checkPassingRun(t, "redis://"+m.Addr()+"/0", rdb)
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
	checkPassingRun(t, url, rdb)
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
				if i%3 == 0 && !strings.HasSuffix(k, ":seq") {
					rdb.Del(ctx, k)
				}
			}
			time.Sleep(time.Millisecond)
		}
	})
	r := weirConformance(t, "", "--redis", "redis://"+m.Addr(), "--namespace", prefix, "--sequences", "300", "--json")
	cancel()
	wg.Wait()
	r.wantCode(t, 1)
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
		t.Errorf("no random sequence failed:\n%s", r.stdout)
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
	weirConformance(t, "").wantCode(t, exitUsage)
	weirConformance(t, "", "--redis", "redis://127.0.0.1:1", "--sequences", "-1").wantCode(t, exitUsage)
	weirConformance(t, "", "--redis", "redis://127.0.0.1:1", "--namespace", "bad name").wantCode(t, exitUsage)
	r := weirConformance(t, "", "--redis", "redis://127.0.0.1:1", "--path", "eval")
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, "auto, functions or scripts") {
		t.Errorf("--path eval: %q", r.stderr)
	}
}
