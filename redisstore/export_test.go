package redisstore

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// What the package's own tests hold that its external tests (package
// redisstore_test: the ones that import packages built on this one, such
// as faults) use too.

// P2T0 is the protocol 2 fixture's clock at its start (p2T0).
var P2T0 = p2T0

// P2Namespace is one namespace of the protocol 2 fixture and its
// partition count.
type P2Namespace struct {
	NS string
	N  int
}

// P2Namespaces are the fixture's namespaces (p2Namespaces).
func P2Namespaces() []P2Namespace {
	out := make([]P2Namespace, len(p2Namespaces))
	for i, x := range p2Namespaces {
		out[i] = P2Namespace{x.ns, x.n}
	}
	return out
}

// P2Records are the records of a namespace of the protocol 2 fixture.
type P2Records struct {
	Jobs      map[string]string // plain job ID: its state
	Workflows map[string]string // workflow ID: its state
	Tokens    map[string]string // running job or task ID: its lease's token
	Queues    []string          // the queues that hold jobs, by name
}

// LoadP2 writes the fixture's namespace ns into rdb as protocol 2 wrote it
// (loadP2), with emptyQueues more queues in partition 0 that ran empty
// (p2EmptyQueues), and returns its records as protocol 2 left them.
func LoadP2(t testing.TB, rdb redis.UniversalClient, ns string, emptyQueues int) P2Records {
	t.Helper()
	f := readP2Fixture(t)
	r := P2Records{Jobs: map[string]string{}, Workflows: map[string]string{}, Tokens: map[string]string{}}
	qs := map[string]bool{}
	for k, v := range f.of(ns) {
		if strings.HasSuffix(k, "}:queues") {
			for q := range v.Hash {
				qs[q] = true
			}
		}
	}
	r.Queues = slices.Sorted(maps.Keys(qs))
	f = p2EmptyQueues(f, ns, emptyQueues)
	loadP2(t, rdb, f, ns)
	for k, v := range f.of(ns) {
		if id, ok := p2Record(k, "j:"); ok {
			r.Jobs[id] = v.Hash["s"]
			if tk := v.Hash["tk"]; tk != "" {
				r.Tokens[id] = tk
			}
		}
		if id, ok := p2Record(k, "w:"); ok && v.Type == "hash" {
			r.Workflows[id] = v.Hash["st"]
			for i, name := range strings.Split(v.Hash["names"], "\n") {
				if tk := v.Hash[fmt.Sprintf("t%d.tk", i+1)]; tk != "" {
					r.Tokens[id+"/"+name] = tk
				}
			}
		}
	}
	return r
}

// DiffMigratedP2 describes how namespace ns of rdb differs from what weir
// migrate makes of LoadP2(ns, emptyQueues) (migratedP2: exactly protocol
// 3's keys), "" when it does not.
func DiffMigratedP2(t testing.TB, rdb redis.UniversalClient, ns string, emptyQueues int) string {
	t.Helper()
	want, _, _, _, _ := migratedP2(p2EmptyQueues(readP2Fixture(t), ns, emptyQueues), ns)
	return diffNS(dumpNS(t, rdb, ns), want)
}

// p2EmptyQueues returns f with k more queues in partition 0 of its
// namespace ns, p2-empty-0000 and on, as protocol 2 leaves a queue that
// ran empty and whose records are gone: its entry in P queues and its
// state hash. weir migrate looks at each (one call a queue with a step
// of 1).
func p2EmptyQueues(f p2Fixture, ns string, k int) p2Fixture {
	if k == 0 {
		return f
	}
	out := maps.Clone(f)
	n := 0
	for _, x := range p2Namespaces {
		if x.ns == ns {
			n = x.n
		}
	}
	P := PartitionPrefix(ns, 0, n)
	qs := out[P+"queues"]
	qs.Hash = maps.Clone(qs.Hash)
	for i := range k {
		q := fmt.Sprintf("p2-empty-%04d", i)
		qs.Hash[q] = "0"
		out[P+"q:"+q+":s"] = p2Key{Key: P + "q:" + q + ":s", Type: "hash", Hash: map[string]string{"k": "1", "push": "1", "w": "0"}}
	}
	out[P+"queues"] = qs
	return out
}

// p2Record returns the ID of a record key of the fixture (infix "j:" a
// plain job's hash, "w:" a workflow's hash; false for other keys, such as
// a workflow's w:<id>:s).
func p2Record(key, infix string) (string, bool) {
	_, id, ok := strings.Cut(key, "}:"+infix)
	return id, ok && !strings.Contains(id, ":")
}
