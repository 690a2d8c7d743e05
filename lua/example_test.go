package lua_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/client"
	"github.com/weirflow/weir/lua"
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
	store, err := lua.New(rdb, lua.Options{Durable: lua.Durable{Replicas: 1, Timeout: time.Second}})
	if err != nil {
		log.Fatal(err)
	}
	c := client.New(store)
	q := client.NewQueue[string, string]("emails")
	ctx := context.Background()
	for {
		_, err := client.Enqueue(ctx, c, q, "welcome", client.ID("welcome-42"))
		if !errors.Is(err, lua.ErrNotReplicated) {
			if err != nil {
				log.Fatal(err)
			}
			break
		}
		// it took effect on the primary only: sending it again is safe
		time.Sleep(100 * time.Millisecond)
	}
}
