package client_test

import (
	"bytes"
	"context"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
)

// One namespace over every shard of a Redis Cluster. (Not run: it needs a
// Redis Cluster.)
func ExampleNew_cluster() {
	// A go-redis ClusterClient: the seed addresses of some of the masters.
	rdb := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: []string{"redis-1:6379", "redis-2:6379", "redis-3:6379"},
	})
	defer rdb.Close()
	// Config.Partitions spreads the namespace over 12 hash slots (so over
	// the masters that serve them); it is fixed when the namespace is first
	// written. A store opened with 0 (a worker, a tool) takes the
	// namespace's count.
	store, err := redisstore.New(rdb, redisstore.Options{
		Namespace: "shop",
		Config:    engine.Config{Partitions: 12},
	})
	if err != nil {
		log.Fatal(err)
	}
	emails := client.NewQueue[string, string]("emails")
	job, err := client.Enqueue(context.Background(), client.New(store), emails, "welcome")
	if err != nil {
		log.Fatal(err)
	}
	log.Println("enqueued", job.ID())
}

// TestReadmeCluster: the README's Redis Cluster block is ExampleNew_cluster.
func TestReadmeCluster(t *testing.T) {
	src, err := os.ReadFile("example_cluster_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, fn, _ := bytes.Cut(src, []byte("func ExampleNew_cluster() {\n"))
	fn, _, _ = bytes.Cut(fn, []byte("\n}\n"))
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- cluster: client/example_cluster_test.go ExampleNew_cluster -->\n```go\n"
	_, block, ok := bytes.Cut(readme, []byte(marker))
	if !ok {
		t.Fatalf("README.md has no block after %q", marker)
	}
	block, _, _ = bytes.Cut(block, []byte("```\n"))
	// The README shows the body, unindented once.
	var want strings.Builder
	for _, l := range strings.Split(string(fn), "\n") {
		want.WriteString(strings.TrimPrefix(l, "\t") + "\n")
	}
	if string(block) != want.String() {
		t.Errorf("README.md's cluster block differs from ExampleNew_cluster's body; copy it:\n%s", want.String())
	}
}
