package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/redisstore"
	"github.com/weirflow/weir/worker"
)

// A store over Redis Sentinel that acknowledges a transition only once a
// replica has it, so that a failover loses nothing acknowledged. (Not run:
// it needs a Sentinel deployment.)
func ExampleDurable() {
	rdb := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    "weir",
		SentinelAddrs: []string{"sentinel-1:26379", "sentinel-2:26379", "sentinel-3:26379"},
	})
	defer rdb.Close()
	store, err := redisstore.New(rdb, redisstore.Options{Durable: redisstore.Durable{Replicas: 1, Timeout: time.Second}})
	if err != nil {
		log.Fatal(err)
	}
	c := client.New(store)
	q := client.NewQueue[string, string]("emails")
	ctx := context.Background()
	for {
		_, err := client.Enqueue(ctx, c, q, "welcome", client.ID("welcome-42"))
		if !errors.Is(err, redisstore.ErrNotReplicated) {
			if err != nil {
				log.Fatal(err)
			}
			break
		}
		// it took effect on the primary only: sending it again is safe
		time.Sleep(100 * time.Millisecond)
	}
}

// Opening the Redis store: any go-redis client (here an embedded
// miniredis; a redis-server, Sentinel or Cluster alike) and a namespace.
// Every process that shares the namespace shares the queues and
// workflows.
func ExampleNew() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	store, err := redisstore.New(rdb, redisstore.Options{Namespace: "shop"})
	if err != nil {
		log.Fatal(err) // an invalid namespace or option says what is wrong
	}
	ctx := context.Background()
	q := client.NewQueue[string, string]("greet")
	w := worker.New(store, worker.Config{})
	worker.Handle(w, q, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return "hello, " + j.Payload, nil
	})
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer w.Stop(ctx)
	job, err := client.Enqueue(ctx, client.New(store), q, "redis")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(job.Wait(ctx))
	// Output: hello, redis <nil>
}

// A namespace of 8 partitions (spec/partitions.md): each job and workflow
// lives in the partition of its ID, and on a Redis Cluster the partitions
// spread over its masters. The namespace keeps its count: a store opened
// with Partitions 0 (a worker, a tool) takes it, one opened with another
// count is refused at its first call.
func ExampleNew_partitions() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	store, err := redisstore.New(rdb, redisstore.Options{Namespace: "shop", Config: engine.Config{Partitions: 8}})
	if err != nil {
		log.Fatal(err)
	}
	q := client.NewQueue[string, string]("greet")
	w := worker.New(store, worker.Config{})
	worker.Handle(w, q, func(ctx context.Context, j *worker.Job[string]) (string, error) {
		return "hello, " + j.Payload, nil
	})
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer w.Stop(ctx)
	for _, name := range []string{"ada", "bob", "cy"} {
		job, err := client.Enqueue(ctx, client.New(store), q, name, client.ID("greet-"+name))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(job.Wait(ctx))
	}
	tool, _ := redisstore.New(rdb, redisstore.Options{Namespace: "shop"})
	fmt.Println(tool.Partitions(ctx))
	wrong, _ := redisstore.New(rdb, redisstore.Options{Namespace: "shop", Config: engine.Config{Partitions: 4}})
	_, err = wrong.Queues(ctx)
	fmt.Println(err)
	// Output:
	// hello, ada <nil>
	// hello, bob <nil>
	// hello, cy <nil>
	// 8 <nil>
	// weir: invalid input: namespace "shop" has 8 partitions, this store was opened with 4 (open it with 8, or 0 to take the namespace's: Options.Config.Partitions in Go, --partitions or WEIR_PARTITIONS for weir; a namespace keeps the count it was first written with)
}

// Upgrading a namespace from protocol 2 (docs/upgrading.md): a store of
// this build refuses it with ErrNeedsMigration until Migrate converted it.
// (Here the namespace is one that protocol 2 would have left with a
// single ready job.)
func ExampleStore_Migrate() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	// what protocol 2 wrote: its seq hash under P seq, a ready job of the
	// default priority in the queue's ready zset
	const P = "weir:{shop:0}:"
	rdb.HSet(ctx, P+"seq", "now", "1793534402040")
	rdb.HSet(ctx, P+"queues", "emails", "0")
	rdb.HSet(ctx, P+"q:emails:s", "w", "0", "push", "1")
	rdb.ZAdd(ctx, P+"q:emails:r", redis.Z{Member: "welcome-42", Score: 1000<<40 + 1})

	store, err := redisstore.New(rdb, redisstore.Options{Namespace: "shop"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = store.Queues(ctx)
	fmt.Println("before:", errors.Is(err, redisstore.ErrNeedsMigration))
	res, err := store.Migrate(ctx, redisstore.MigrateParams{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("from protocol %d: done %v\n", res.From, res.Done)
	_, err = store.Queues(ctx)
	fmt.Println("after:", err)
	// Output:
	// before: true
	// from protocol 2: done true
	// after: <nil>
}
