//go:build unix

package redisstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/internal/clitest"
	"github.com/weirflow/weir/redisstore"
)

// emptyQueues is how many queues that ran empty TestMigrateKilled adds to
// partition 0 of the fixture: with a step of 1, weir migrate makes a call
// for each, so that it is still converting partition 0 when it is killed.
const emptyQueues = 500

// TestMigrateKilled: weir migrate, the command a user runs, SIGKILLed
// halfway (after its first steps, partition 0 under way, most likely with
// a call in flight), leaves the namespace refused by this protocol's
// stores; a second run goes on where the first stopped and ends with
// exactly protocol 3's keys; then the namespace holds the invariants and
// runs to its end (runMigrated). On one server and on a Redis Cluster,
// one and four partitions.
func TestMigrateKilled(t *testing.T) {
	weir := clitest.NewFrom("weir", "../cmd/weir")
	t.Cleanup(weir.Cleanup)
	bin := weir.Path(t)
	ctx := context.Background()
	for _, srv := range migrateServers(t) {
		t.Run(srv.name, func(t *testing.T) {
			for _, x := range redisstore.P2Namespaces() {
				t.Run(x.NS, func(t *testing.T) {
					recs := redisstore.LoadP2(t, srv.rdb, x.NS, emptyQueues)
					run := func(args ...string) *exec.Cmd {
						cmd := exec.Command(bin, append(append(srv.args, "migrate", "--namespace", x.NS), args...)...)
						cmd.Env = append(os.Environ(), "WEIR_REDIS_URL=", "WEIR_REDIS_CLUSTER=", "WEIR_PARTITIONS=", "WEIR_ALLOW_UNSAFE_SERVER=")
						return cmd
					}

					// the first run, killed once partition 0, converted last,
					// is under way among the empty queues
					first := run("--step", "1")
					var out bytes.Buffer
					first.Stdout, first.Stderr = &out, &out
					if err := first.Start(); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = first.Process.Kill() })
					exited := make(chan error, 1)
					go func() { exited <- first.Wait() }()
					p0 := redisstore.PartitionPrefix(x.NS, 0, x.N)
					waitFor(t, exited, &out, func() bool {
						mq, err := srv.rdb.HGet(ctx, p0+"mig", "mq").Result()
						return err == nil && strings.HasPrefix(mq, "p2-empty-")
					})
					if err := first.Process.Signal(os.Kill); err != nil {
						t.Fatal(err)
					}
					var ee *exec.ExitError
					if err := <-exited; !errors.As(err, &ee) || ee.ExitCode() != -1 {
						t.Fatalf("weir migrate killed: %v, want killed by a signal\n%s", err, out.String())
					}

					// halfway: partition 0 under way, the others converted,
					// and the namespace refused
					if n, err := srv.rdb.Exists(ctx, p0+"mig").Result(); err != nil || n != 1 {
						t.Fatalf("partition 0's %smig after the kill: %d, %v; want the migration under way", p0, n, err)
					}
					for p := 1; p < x.N; p++ {
						if v, err := srv.rdb.Get(ctx, redisstore.PartitionPrefix(x.NS, p, x.N)+"seq").Result(); err != nil || v != "3" {
							t.Errorf("partition %d's marker after the kill: %q, %v; want 3 (converted before partition 0)", p, v, err)
						}
					}
					c := newP2Clock()
					if _, err := c.store(t, srv.rdb, x.NS).Queues(ctx); !errors.Is(err, redisstore.ErrNeedsMigration) {
						t.Fatalf("a store on the namespace after the kill: %v, want ErrNeedsMigration", err)
					}

					// again, to the end
					second := run("--json")
					b, err := second.Output()
					if err != nil {
						t.Fatalf("weir migrate again: %v\n%s", err, b)
					}
					var res redisstore.MigrateResult
					if err := json.Unmarshal(b, &res); err != nil {
						t.Fatalf("weir migrate --json: %v\n%s", err, b)
					}
					if !res.Done || !res.Resumed || res.From != 2 || res.Partitions != x.N {
						t.Fatalf("weir migrate again: %s, want done, resumed, from 2, %d partitions", b, x.N)
					}
					if d := redisstore.DiffMigratedP2(t, srv.rdb, x.NS, emptyQueues); d != "" {
						t.Fatalf("the namespace migrated by a killed run and a second one differs from protocol 3's layout:\n%s", d)
					}
					runMigrated(t, srv.rdb, x.NS, c, recs)
				})
			}
		})
	}
}

// waitFor polls done until it holds; it fails t when the process whose
// exit exited reports ended first (its output in out), or after a minute.
func waitFor(t *testing.T, exited chan error, out *bytes.Buffer, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !done(); time.Sleep(time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("weir migrate ended (%v) before it was killed:\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("weir migrate did not reach partition 0's empty queues in a minute")
		}
	}
}
