package redisstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/weirflow/weir"
	"time"

	"github.com/redis/go-redis/v9"
)

// Durable makes a store acknowledge a transition only once replicas have
// it. With Replicas > 0, every write call is sent with a Redis WAIT for
// that many replicas on the same connection, waiting up to Timeout
// (default 1 s): a transition is then lost by a failover to one of those
// replicas only if the replica lost it too. The zero Durable waits for no
// replica: a failover may lose the transitions of the last moments before
// it (spec/scripts.md, Durability).
type Durable struct {
	// Replicas is how many replicas must have a transition's writes before
	// it returns; 0 turns waiting off.
	Replicas int
	// Timeout is how long a call waits for them, beyond the transition
	// itself (at most the client's ReadTimeout less the call's own time);
	// 0 means 1 s.
	Timeout time.Duration
}

// ErrNotReplicated is matched by the error of a write call that took
// effect on the primary but reached fewer replicas than Durable.Replicas
// within Durable.Timeout: a failover now could lose it. Every transition is
// safe to repeat (a repeated finish, enqueue, submit or cancel changes
// nothing more; a claim leases other jobs, and the leases of the first
// expire), so the caller may repeat it until it returns without this error.
var ErrNotReplicated = errors.New("weir: not replicated")

// timeout is d's Timeout with its default.
func (d Durable) timeout() time.Duration {
	if d.Timeout <= 0 {
		return time.Second
	}
	return d.Timeout
}

// validate reports a Durable that New cannot honour for client.
func (d Durable) validate(client redis.UniversalClient) error {
	if d.Replicas < 0 {
		return fmt.Errorf("%w: Durable.Replicas %d is negative", weir.ErrInvalid, d.Replicas)
	}
	if d.Replicas == 0 {
		return nil
	}
	if _, ok := client.(*redis.ClusterClient); ok {
		// WAIT waits for the writes of its own connection, and a cluster
		// pipeline sends a command without keys to any node
		return fmt.Errorf("%w: Durable is not supported with a cluster client", weir.ErrInvalid)
	}
	return nil
}

// waitCmd is the WAIT sent after a write call's command(s).
func (d Durable) waitCmd(ctx context.Context) *redis.IntCmd {
	return redis.NewIntCmd(ctx, "wait", d.Replicas, d.timeout().Milliseconds())
}

// replicated returns nil when the WAIT after a write call saw enough
// replicas, else an error matching ErrNotReplicated (or the WAIT's own).
func (d Durable) replicated(wait *redis.IntCmd) error {
	n, err := wait.Result()
	if err != nil {
		return fmt.Errorf("%w: WAIT failed (%w); the transition took effect on the primary: repeat it", ErrNotReplicated, err)
	}
	if int(n) < d.Replicas {
		return fmt.Errorf("%w: %d of %d replicas acknowledged it within %v; the transition took effect on the primary: repeat it, "+
			"or check the replicas (INFO replication) or raise Durable.Timeout", ErrNotReplicated, n, d.Replicas, d.timeout())
	}
	return nil
}
