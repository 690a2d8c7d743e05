package redisstore

import (
	"errors"
	"github.com/weirflow/weir"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// TestDurable: with Durable a transition returns only once a replica has
// it; on a primary whose replica is gone it returns ErrNotReplicated after
// Durable.Timeout, having taken effect on the primary (and a repeat is
// safe). Reads are not held up.
func TestDurable(t *testing.T) {
	// a replica's first sync starts at once, not after the default 5 s
	primary := redistest.Client(t, redistest.Private(t, "--repl-diskless-sync-delay", "0"))
	ropt := redistest.Private(t, "--replicaof", "127.0.0.1", strings.TrimPrefix(primary.Options().Addr, "127.0.0.1:"))
	replica := redistest.Client(t, ropt)
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, _ := replica.Info(bg, "replication").Result()
		if strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not connect: %s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// a long timeout while the replica is there (a busy CI machine may take
	// its time to acknowledge), a short one once it left
	s, err := New(primary, Options{Namespace: "durable", Durable: Durable{Replicas: 1, Timeout: 2 * time.Second}}) // under the client's 3 s ReadTimeout
	if err != nil {
		t.Fatal(err)
	}
	short, err := New(primary, Options{Namespace: "durable", Durable: Durable{Replicas: 1, Timeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "j1", Queue: "q"}}); err != nil {
		t.Fatalf("enqueue with a replica: %v", err)
	}
	// acknowledged: the replica has it
	if n, err := replica.Exists(bg, "weir:{durable:0}:j:j1").Result(); err != nil || n != 1 {
		t.Fatalf("the replica lacks the job after the acknowledged enqueue: %d %v", n, err)
	}
	c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"q"}, Max: 1, Lease: time.Minute})
	if err != nil || len(c) != 1 {
		t.Fatalf("claim: %+v %v", c, err)
	}

	// The replica leaves: writes take effect but are not acknowledged.
	if err := replica.ReplicaOf(bg, "no", "one").Err(); err != nil {
		t.Fatal(err)
	}
	for {
		info, _ := primary.Info(bg, "replication").Result()
		if strings.Contains(info, "connected_slaves:0") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	p := engine.FinishParams{Outcomes: []engine.Outcome{{JobID: "j1", Token: c[0].Lease.Token, Kind: engine.OutcomeCompleted}}}
	start := time.Now()
	_, err = short.Finish(bg, p)
	if !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("finish without a replica: %v, want ErrNotReplicated", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("finish returned after %v, before Durable.Timeout", d)
	}
	if j, err := s.GetJob(bg, "j1"); err != nil || j.State != weir.Completed {
		t.Fatalf("the finish did not take effect on the primary: %+v %v", j, err)
	}
	// a repeat changes nothing more and still says so
	if _, err := short.Finish(bg, p); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("repeated finish: %v", err)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer cc.Close()
	if _, err := New(cc, Options{Durable: Durable{Replicas: 1}}); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("Durable on a cluster client: %v, want ErrInvalid", err)
	}
}
