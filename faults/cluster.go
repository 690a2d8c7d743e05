//go:build unix

package faults

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of redis-server processes owned by a test,
// masters only: master i serves the i-th of equal contiguous slot ranges
// (as `redis-cli --cluster create` splits them). With
// cluster-require-full-coverage off, the masters that are up keep serving
// their slots while another is down.
type Cluster struct {
	Masters []*RedisProc
	IDs     []string // node IDs, by master
}

// StartCluster starts n cluster-enabled redis-servers in directories under
// dir (extra config pairs in args, such as "--appendonly", "yes"), assigns
// the slots, joins them and waits until every node reports
// cluster_state:ok.
func StartCluster(ctx context.Context, dir string, n int, args ...string) (*Cluster, error) {
	c := &Cluster{}
	base := []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", "1000",
		"--cluster-require-full-coverage", "no",
	}
	for i := range n {
		var p *RedisProc
		var err error
		for range 10 { // the bus port (port + 10000) may be taken
			p, err = StartRedis(filepath.Join(dir, "node"+strconv.Itoa(i)), append(base, args...)...)
			if err == nil && p.Port+10000 <= 65535 {
				break
			}
			if p != nil {
				p.Stop()
				p = nil
			}
		}
		if p == nil {
			c.Stop()
			return nil, fmt.Errorf("faults: start cluster node %d: %v", i, err)
		}
		c.Masters = append(c.Masters, p)
	}
	for i, p := range c.Masters {
		rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), Protocol: 2})
		id, err := rdb.Do(ctx, "CLUSTER", "MYID").Text()
		if err == nil {
			lo, hi := i*16384/n, (i+1)*16384/n-1
			err = rdb.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err()
		}
		if err == nil && i > 0 {
			err = rdb.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", c.Masters[0].Port).Err()
		}
		_ = rdb.Close()
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("faults: set up cluster node %d: %w", i, err)
		}
		c.IDs = append(c.IDs, id)
	}
	if err := c.WaitOK(ctx, 30*time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// StartClusterT starts a cluster for a test (StartCluster) in t.TempDir
// and stops it in t.Cleanup.
func StartClusterT(t testing.TB, n int, args ...string) *Cluster {
	t.Helper()
	c, err := StartCluster(context.Background(), t.TempDir(), n, args...)
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// Addrs returns the masters' addresses.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, p := range c.Masters {
		out = append(out, p.Addr())
	}
	return out
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, p := range c.Masters {
		p.Stop()
	}
}

// do runs a command on master i over a connection of its own (RESP2).
func (c *Cluster) do(ctx context.Context, i int, args ...any) (any, error) {
	rdb := redis.NewClient(&redis.Options{Addr: c.Masters[i].Addr(), Protocol: 2, DialTimeout: time.Second, ReadTimeout: 5 * time.Second})
	defer func() { _ = rdb.Close() }()
	return rdb.Do(ctx, args...).Result()
}

// WaitOK waits until every running master reports cluster_state:ok and
// knows every other master as connected (not failed), at most limit.
func (c *Cluster) WaitOK(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ok := true
		for i, p := range c.Masters {
			if p.Pid() == 0 {
				ok = false
				break
			}
			info, err := c.do(ctx, i, "CLUSTER", "INFO")
			s, _ := info.(string)
			if err != nil || !strings.Contains(s, "cluster_state:ok") || !strings.Contains(s, "cluster_known_nodes:"+strconv.Itoa(len(c.Masters))) {
				ok = false
				break
			}
			nodes, err := c.do(ctx, i, "CLUSTER", "NODES")
			ns, _ := nodes.(string)
			if err != nil || strings.Contains(ns, "fail") || strings.Count(ns, " connected") < len(c.Masters) {
				ok = false
				break
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("faults: cluster not ok after %v", limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitFailed waits until every other running master flags master i as
// failed (fail, not only pfail), at most limit.
func (c *Cluster) WaitFailed(ctx context.Context, i int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ok := true
		for j, p := range c.Masters {
			if j == i || p.Pid() == 0 {
				continue
			}
			nodes, err := c.do(ctx, j, "CLUSTER", "NODES")
			ns, _ := nodes.(string)
			if err != nil || !nodeFlagged(ns, c.IDs[i], "fail") {
				ok = false
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("faults: master %d not flagged failed after %v", i, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nodeFlagged reports whether CLUSTER NODES output nodes gives node id the
// flag.
func nodeFlagged(nodes, id, flag string) bool {
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == id {
			for _, x := range strings.Split(f[2], ",") {
				if x == flag {
					return true
				}
			}
		}
	}
	return false
}

// MasterOfSlot returns the index of the master serving slot, as master 0
// sees it.
func (c *Cluster) MasterOfSlot(ctx context.Context, slot int) (int, error) {
	v, err := c.do(ctx, 0, "CLUSTER", "SHARDS")
	if err != nil {
		return 0, err
	}
	for _, sh := range list(v) {
		m := list(sh)
		var slots []any
		var nodes []any
		for k := 0; k+1 < len(m); k += 2 {
			switch str(m[k]) {
			case "slots":
				slots = list(m[k+1])
			case "nodes":
				nodes = list(m[k+1])
			}
		}
		for k := 0; k+1 < len(slots); k += 2 {
			lo, _ := strconv.Atoi(str(slots[k]))
			hi, _ := strconv.Atoi(str(slots[k+1]))
			if slot < lo || slot > hi {
				continue
			}
			for _, nd := range nodes {
				f := list(nd)
				for q := 0; q+1 < len(f); q += 2 {
					if str(f[q]) == "id" {
						for i, id := range c.IDs {
							if id == str(f[q+1]) {
								return i, nil
							}
						}
					}
				}
			}
		}
	}
	return 0, fmt.Errorf("faults: no master serves slot %d", slot)
}

// MoveSlot moves slot from master from to master to while the cluster is
// up, as a resharding does: IMPORTING and MIGRATING, MIGRATE of every key
// in batches, then the new owner announced to every master. It returns how
// many keys moved.
func (c *Cluster) MoveSlot(ctx context.Context, slot, from, to int) (int, error) {
	if _, err := c.do(ctx, to, "CLUSTER", "SETSLOT", slot, "IMPORTING", c.IDs[from]); err != nil {
		return 0, fmt.Errorf("faults: importing: %w", err)
	}
	if _, err := c.do(ctx, from, "CLUSTER", "SETSLOT", slot, "MIGRATING", c.IDs[to]); err != nil {
		return 0, fmt.Errorf("faults: migrating: %w", err)
	}
	moved := 0
	for {
		v, err := c.do(ctx, from, "CLUSTER", "GETKEYSINSLOT", slot, 100)
		if err != nil {
			return moved, fmt.Errorf("faults: getkeysinslot: %w", err)
		}
		keys := strs(v)
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", "127.0.0.1", c.Masters[to].Port, "", 0, 10000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if _, err := c.do(ctx, from, args...); err != nil {
			return moved, fmt.Errorf("faults: migrate: %w", err)
		}
		moved += len(keys)
	}
	for _, i := range []int{to, from} {
		if _, err := c.do(ctx, i, "CLUSTER", "SETSLOT", slot, "NODE", c.IDs[to]); err != nil {
			return moved, fmt.Errorf("faults: setslot node on %d: %w", i, err)
		}
	}
	for i := range c.Masters {
		if i != to && i != from {
			if _, err := c.do(ctx, i, "CLUSTER", "SETSLOT", slot, "NODE", c.IDs[to]); err != nil {
				return moved, fmt.Errorf("faults: setslot node on %d: %w", i, err)
			}
		}
	}
	return moved, nil
}
