package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/internal/rediskeys"
	"github.com/weirflow/weir/redisstore"
)

// master is one master of a cluster and the slots it serves.
type master struct {
	// addr is the address the bench's client reaches it at, the key of
	// its nodeInfo.
	addr      string
	firstSlot int
	ranges    [][2]int // [start, end], inclusive, as CLUSTER SLOTS
}

// serves reports whether m serves slot.
func (m master) serves(slot int) bool {
	for _, r := range m.ranges {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// clusterMasters returns the cluster's masters sorted by their first slot:
// CLUSTER SLOTS names each range's master by node ID, and CLUSTER MYID on
// each master the bench's client reaches ties that ID to the address of its
// INFO.
func (s *server) clusterMasters(ctx context.Context) ([]master, error) {
	var mu sync.Mutex
	addrOf := map[string]string{} // node ID → address
	err := rediskeys.ForEachNode(ctx, s.admin, func(ctx context.Context, c *redis.Client) error {
		id, err := c.ClusterMyID(ctx).Result()
		if err != nil {
			return fmt.Errorf("CLUSTER MYID on %s: %w", c.Options().Addr, err)
		}
		mu.Lock()
		addrOf[id] = c.Options().Addr
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	slots, err := s.admin.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS: %w", err)
	}
	return mastersOf(slots, addrOf)
}

// mastersOf groups the slot ranges of CLUSTER SLOTS by master (the first
// node of each range), naming each by its address in addrOf (node ID →
// address), sorted by first slot. A range whose master is not in addrOf
// is an error: the cluster changed under the bench.
func mastersOf(slots []redis.ClusterSlot, addrOf map[string]string) ([]master, error) {
	byAddr := map[string]*master{}
	for _, r := range slots {
		if len(r.Nodes) == 0 {
			return nil, fmt.Errorf("CLUSTER SLOTS: slots %d-%d have no node", r.Start, r.End)
		}
		addr, ok := addrOf[r.Nodes[0].ID]
		if !ok {
			return nil, fmt.Errorf("CLUSTER SLOTS: the master %s (%s) of slots %d-%d is not among the masters the client reaches", r.Nodes[0].ID, r.Nodes[0].Addr, r.Start, r.End)
		}
		m := byAddr[addr]
		if m == nil {
			m = &master{addr: addr, firstSlot: r.Start}
			byAddr[addr] = m
		}
		m.firstSlot = min(m.firstSlot, r.Start)
		m.ranges = append(m.ranges, [2]int{r.Start, r.End})
	}
	out := make([]master, 0, len(byAddr))
	for _, m := range byAddr {
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b master) int { return a.firstSlot - b.firstSlot })
	return out, nil
}

// partitionSlots returns the slot of each of the n partitions of namespace
// ns: CLUSTER KEYSLOT of its key prefix (redisstore.PartitionPrefix).
func (s *server) partitionSlots(ctx context.Context, ns string, n int) ([]int, error) {
	out := make([]int, n)
	for p := range n {
		slot, err := s.admin.ClusterKeySlot(ctx, redisstore.PartitionPrefix(ns, p, n)).Result()
		if err != nil {
			return nil, fmt.Errorf("CLUSTER KEYSLOT of partition %d: %w", p, err)
		}
		out[p] = int(slot)
	}
	return out, nil
}

// partitionsPerMaster counts the partitions whose slot each master of ms
// serves, in the order of ms. A slot no master serves is an error.
func partitionsPerMaster(slots []int, ms []master) ([]int, error) {
	out := make([]int, len(ms))
next:
	for p, slot := range slots {
		for i, m := range ms {
			if m.serves(slot) {
				out[i]++
				continue next
			}
		}
		return nil, fmt.Errorf("slot %d of partition %d: no master serves it", slot, p)
	}
	return out, nil
}

// cpuMicros is used_cpu_user + used_cpu_sys of one INFO cpu section, in
// µs.
func cpuMicros(fields map[string]string) (int64, error) {
	var sum int64
	for _, k := range []string{"used_cpu_user", "used_cpu_sys"} {
		v, err := strconv.ParseFloat(strings.TrimSpace(fields[k]), 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu: %s %q", k, fields[k])
		}
		sum += int64(v*1e6 + 0.5)
	}
	return sum, nil
}

// masterCounters is one master's counters at one moment.
type masterCounters struct {
	cpuUs   int64
	scripts cmdStats
}

// perMaster reads INFO cpu and INFO commandstats of every master, by
// address.
func (s *server) perMaster(ctx context.Context) (map[string]masterCounters, error) {
	cpu, err := s.infoAll(ctx, "cpu")
	if err != nil {
		return nil, err
	}
	cs, err := s.infoAll(ctx, "commandstats")
	if err != nil {
		return nil, err
	}
	out := map[string]masterCounters{}
	for _, n := range cpu {
		us, err := cpuMicros(n.fields)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.addr, err)
		}
		out[n.addr] = masterCounters{cpuUs: us}
	}
	for _, n := range cs {
		c, ok := out[n.addr]
		if !ok {
			return nil, fmt.Errorf("master %s answered INFO commandstats but not INFO cpu: the cluster changed", n.addr)
		}
		c.scripts = scriptStats(n.fields)
		out[n.addr] = c
	}
	return out, nil
}
