package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir"
	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
)

// p2Fixture is testdata/protocol2.json by key.
type p2Fixture map[string]p2Key

// readP2Fixture reads the protocol 2 fixture (protocol2_fixture_test.go).
func readP2Fixture(t testing.TB) p2Fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/protocol2.json")
	if err != nil {
		t.Fatal(err)
	}
	var l []p2Key
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	out := p2Fixture{}
	for _, k := range l {
		out[k.Key] = k
	}
	return out
}

// of returns the fixture's keys of namespace ns.
func (f p2Fixture) of(ns string) p2Fixture {
	out := p2Fixture{}
	for k, v := range f {
		if strings.HasPrefix(k, "weir:{"+ns+":") {
			out[k] = v
		}
	}
	return out
}

// loadP2 writes the fixture's namespace ns into rdb as protocol 2 wrote
// it, after deleting whatever the namespace held (and again when t ends).
func loadP2(t testing.TB, rdb redis.UniversalClient, f p2Fixture, ns string) {
	t.Helper()
	ctx := context.Background()
	clean := func() { redistest.Clean(context.Background(), rdb, ns) }
	clean()
	t.Cleanup(clean)
	for k, v := range f.of(ns) {
		var err error
		switch v.Type {
		case "string":
			err = rdb.Set(ctx, k, v.String, 0).Err()
		case "hash":
			err = rdb.HSet(ctx, k, v.Hash).Err()
		case "list":
			err = rdb.RPush(ctx, k, anyOf(v.List)...).Err()
		case "zset":
			zs := make([]redis.Z, len(v.Zset))
			for i, m := range v.Zset {
				sc, perr := strconv.ParseFloat(m[1], 64)
				if perr != nil {
					t.Fatal(perr)
				}
				zs[i] = redis.Z{Member: m[0], Score: sc}
			}
			err = rdb.ZAdd(ctx, k, zs...).Err()
		case "stream":
			for _, e := range v.Stream {
				if err = rdb.XAdd(ctx, &redis.XAddArgs{Stream: k, ID: e[0], Values: e[1:]}).Err(); err != nil {
					break
				}
			}
		default:
			t.Fatalf("fixture key %s of type %s", k, v.Type)
		}
		if err != nil {
			t.Fatalf("load %s: %v", k, err)
		}
	}
}

func anyOf(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// dumpNS reads every key of namespace ns in the fixture's form.
func dumpNS(t testing.TB, rdb redis.UniversalClient, ns string) p2Fixture {
	t.Helper()
	ctx := context.Background()
	out := p2Fixture{}
	var mu sync.Mutex
	err := forEachKey(ctx, rdb, "weir:{"+ns+":*", func(c *redis.Client, k string) error {
		typ, err := c.Type(ctx, k).Result()
		if err != nil {
			return err
		}
		e := p2Key{Key: k, Type: typ}
		switch typ {
		case "string":
			e.String, err = c.Get(ctx, k).Result()
		case "hash":
			e.Hash, err = c.HGetAll(ctx, k).Result()
		case "list":
			e.List, err = c.LRange(ctx, k, 0, -1).Result()
		case "zset":
			var zs []redis.Z
			zs, err = c.ZRangeWithScores(ctx, k, 0, -1).Result()
			for _, z := range zs {
				e.Zset = append(e.Zset, [2]string{z.Member.(string), strconv.FormatFloat(z.Score, 'f', -1, 64)})
			}
		case "stream":
			var ms []redis.XMessage
			ms, err = c.XRange(ctx, k, "-", "+").Result()
			for _, m := range ms {
				entry := []string{m.ID}
				fs := slices.Sorted(maps.Keys(m.Values))
				for _, f := range fs {
					entry = append(entry, f, fmt.Sprint(m.Values[f]))
				}
				e.Stream = append(e.Stream, entry)
			}
		}
		if err != nil {
			return err
		}
		mu.Lock()
		out[k] = e
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// p2Prio0 tells a protocol 2 ready score of the default priority.
func p2Prio0(score string) bool {
	v, err := strconv.ParseInt(score, 10, 64)
	return err == nil && v >= 1000<<40 && v < 1001<<40
}

// migratedP2 is what weir migrate makes of the fixture's namespace ns
// (spec/keys.md): each partition's seq hash under seq3, its seq the
// marker "3"; each queue's ready jobs of priority 0, in score order, in
// its ready list, the others left in its ready zset, and z = 1 in its
// state where some are; each partition's index of workflow IDs (wf:id,
// the IDs of its wf members) and ix = 1 in its seq hash where it has now;
// every other key as it was. It also returns the number of jobs moved, of
// queues, of queues flagged and of IDs indexed.
func migratedP2(f p2Fixture, ns string) (out p2Fixture, moved, queues, flagged, indexed int) {
	out = p2Fixture{}
	src := f.of(ns)
	for k, v := range src {
		out[k] = v
	}
	for k, v := range src {
		switch {
		case strings.HasSuffix(k, "}:seq"):
			h := maps.Clone(v.Hash)
			if h["now"] != "" {
				h["ix"] = "1"
			}
			out[k+"3"] = p2Key{Key: k + "3", Type: "hash", Hash: h}
			out[k] = p2Key{Key: k, Type: "string", String: "3"}
		case strings.HasSuffix(k, "}:wf"):
			var ids [][2]string
			for _, m := range v.Zset {
				ids = append(ids, [2]string{m[0][16:], "0"})
			}
			slices.SortFunc(ids, func(x, y [2]string) int { return strings.Compare(x[0], y[0]) })
			out[k+":id"] = p2Key{Key: k + ":id", Type: "zset", Zset: ids}
			indexed += len(ids)
		case strings.HasSuffix(k, "}:queues"):
			queues += len(v.Hash)
		case strings.Contains(k, "}:q:") && strings.HasSuffix(k, ":r"):
			var l []string
			var rest [][2]string
			for _, m := range v.Zset {
				if p2Prio0(m[1]) {
					l = append(l, m[0])
				} else {
					rest = append(rest, m)
				}
			}
			base := strings.TrimSuffix(k, ":r")
			if len(l) > 0 {
				out[base+":l"] = p2Key{Key: base + ":l", Type: "list", List: l}
				moved += len(l)
			}
			if len(rest) == 0 {
				delete(out, k)
				continue
			}
			out[k] = p2Key{Key: k, Type: "zset", Zset: rest}
			st := maps.Clone(src[base+":s"].Hash)
			st["z"] = "1"
			out[base+":s"] = p2Key{Key: base + ":s", Type: "hash", Hash: st}
			flagged++
		}
	}
	return out, moved, queues, flagged, indexed
}

// diffNS describes how two dumps differ ("" when they do not).
func diffNS(got, want p2Fixture) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			fmt.Fprintf(&b, "missing %s\n", k)
		} else if !reflect.DeepEqual(g, want[k]) {
			fmt.Fprintf(&b, "%s:\n  got  %+v\n  want %+v\n", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "extra %s: %+v\n", k, got[k])
		}
	}
	return b.String()
}

// p2Store opens a store of this protocol on the fixture's namespace ns,
// with a clock after the fixture's (its leases still held, its delayed
// jobs not due).
func p2Store(t testing.TB, rdb redis.UniversalClient, ns string) *Store {
	t.Helper()
	return p2StoreOn(t, rdb, ns, PathAuto)
}

// p2StoreOn is p2Store on call path path.
func p2StoreOn(t testing.TB, rdb redis.UniversalClient, ns string, path CallPath) *Store {
	t.Helper()
	s, err := New(rdb, Options{Namespace: ns, Path: path, Clock: func() time.Time { return p2T0.Add(10 * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wantNeedsMigration fails t unless err is the refusal of a namespace
// that needs weir migrate.
func wantNeedsMigration(t testing.TB, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrNeedsMigration) || !errors.Is(err, weir.ErrProtocol) || !strings.Contains(err.Error(), "weir migrate") {
		t.Fatalf("%s: %v, want ErrNeedsMigration (ErrProtocol, naming weir migrate)", what, err)
	}
}

// refusedEverything tries calls of every kind on s and wants each refused.
func refusedEverything(t testing.TB, s *Store) {
	t.Helper()
	_, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"mixed", "zero", "wf"}, Max: 5, Lease: time.Minute})
	wantNeedsMigration(t, "claim", err)
	_, err = s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "new", Queue: "zero"}})
	wantNeedsMigration(t, "enqueue", err)
	_, err = s.Submit(bg, engine.SubmitParams{Plan: engine.Plan{ID: "wnew", Tasks: []engine.TaskSpec{{Name: "a", Queue: "wf"}}}})
	wantNeedsMigration(t, "submit", err)
	_, err = s.GetJob(bg, "m01")
	wantNeedsMigration(t, "get job", err)
	_, err = s.Queues(bg)
	wantNeedsMigration(t, "queues", err)
	wantNeedsMigration(t, "set fast paths", s.SetFastPaths(bg, false))
	_, err = s.ExpireLeases(bg, engine.ExpireParams{Max: 10})
	wantNeedsMigration(t, "expire", err)
}

// refusedEarly wants calls of a store that began on the namespace before
// protocol 2 wrote it (its first call read no marker, so only its Lua reads
// the partition's) refused: partition 0, which weir migrate converts last,
// is protocol 2's or under way.
func refusedEarly(t testing.TB, s *Store) {
	t.Helper()
	_, err := s.Queues(bg)
	wantNeedsMigration(t, "queues of a store begun before", err)
	_, err = s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "late", Queue: "zero"}})
	wantNeedsMigration(t, "enqueue of a store begun before", err)
	_, err = s.Claim(bg, engine.ClaimParams{Queues: []string{"zero"}, Max: 1, Lease: time.Minute})
	wantNeedsMigration(t, "claim of a store begun before", err)
	wantNeedsMigration(t, "worker removal of a store begun before", s.RemoveWorker(bg, "w1"))
}

// TestStoreRefusesProtocol2: a store of protocol 3 refuses every call to
// a namespace that protocol 2 wrote (the fixture), with ErrNeedsMigration
// naming weir migrate, and writes nothing: at its first call (the
// namespace's marker, read with np), and at a later call of a store that
// began on the namespace before protocol 2 wrote it (the Lua's read of
// the partition's marker). A protocol 2 process's first read of a
// namespace this protocol wrote fails (WRONGTYPE): its every call starts
// with HMGET of P seq, now the marker string.
func TestStoreRefusesProtocol2(t *testing.T) {
	f := readP2Fixture(t)
	rdb := diffClient(t)
	for _, x := range p2Namespaces {
		t.Run(x.ns, func(t *testing.T) {
			// a store that began on the namespace while it was empty
			early := p2Store(t, rdb, x.ns)
			redistest.Clean(bg, rdb, x.ns)
			if _, err := early.Queues(bg); err != nil {
				t.Fatal(err)
			}
			loadP2(t, rdb, f, x.ns)
			before := dumpNS(t, rdb, x.ns)
			if d := diffNS(before, f.of(x.ns)); d != "" {
				t.Fatalf("the fixture did not load as written:\n%s", d)
			}
			refusedEverything(t, p2Store(t, rdb, x.ns))
			refusedEarly(t, early)
			if d := diffNS(dumpNS(t, rdb, x.ns), before); d != "" {
				t.Fatalf("a refused call wrote:\n%s", d)
			}
		})
	}
	t.Run("protocol 2 on protocol 3", func(t *testing.T) {
		ns := redistest.Namespace(t, rdb, "p3")
		s, err := New(rdb, Options{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Enqueue(bg, engine.EnqueueParams{Job: engine.JobSpec{ID: "a", Queue: "q"}}); err != nil {
			t.Fatal(err)
		}
		// a new namespace is written as protocol 3 at once
		if v, err := rdb.Get(bg, s.keys.marker).Result(); err != nil || v != "3" {
			t.Fatalf("marker %q, %v; want 3", v, err)
		}
		// what every protocol 2 call starts with (call.lua read_clock at
		// ade9685), and its store's first read (readCount)
		err = rdb.Eval(bg, "return redis.call('HMGET', KEYS[1], 'now', 'gc', 'lease', 'off', 'pend', 'cb', 'ev', 'fast')", []string{s.keys.marker}).Err()
		if !isWrongType(err) {
			t.Fatalf("protocol 2's read of P seq: %v, want WRONGTYPE", err)
		}
		if err := rdb.HGet(bg, s.keys.marker, "np").Err(); !isWrongType(err) {
			t.Fatalf("protocol 2's read of np: %v, want WRONGTYPE", err)
		}
	})
}

// TestMigrateProtocol2 migrates the fixture's namespaces in small steps,
// stopped twice (after a number of calls, and by its context), and checks
// that a store refuses the namespace until it is done, that the keys are
// then exactly protocol 3's (each ready list in the old score order, each
// ready zset with the other priorities only, z where they are, the seq
// hash renamed, the marker 3; every other key as it was), that a store
// opens it (checkMigrated), and that a second run does nothing.
func TestMigrateProtocol2(t *testing.T) {
	rdb := diffClient(t)
	for _, path := range []CallPath{PathAuto, PathScripts} {
		t.Run(path.String(), func(t *testing.T) { migrateP2(t, rdb, path) })
	}
}

// TestMigrateProtocol2OnCluster is TestMigrateProtocol2 on a Redis
// Cluster (WEIR_REDIS_CLUSTER): each partition's keys in its own slot.
func TestMigrateProtocol2OnCluster(t *testing.T) {
	migrateP2(t, redistest.Cluster(t), PathAuto)
}

// migrateP2 is TestMigrateProtocol2 on rdb, with stores on path.
func migrateP2(t *testing.T, rdb redis.UniversalClient, path CallPath) {
	f := readP2Fixture(t)
	for _, x := range p2Namespaces {
		t.Run(x.ns, func(t *testing.T) {
			// a store that began on the namespace while it was empty
			early := p2StoreOn(t, rdb, x.ns, path)
			redistest.Clean(bg, rdb, x.ns)
			if _, err := early.Queues(bg); err != nil {
				t.Fatal(err)
			}
			loadP2(t, rdb, f, x.ns)
			want, moved, queues, flagged, indexed := migratedP2(f, x.ns)
			s := p2StoreOn(t, rdb, x.ns, path)

			// a dry run says what a run does and writes nothing
			dry, err := s.Migrate(bg, MigrateParams{DryRun: true, Step: 3})
			if err != nil {
				t.Fatal(err)
			}
			if dry.From != 2 || dry.Done || dry.Moved != int64(moved) || dry.Queues != queues || dry.Flagged != flagged || dry.Partitions != x.n || dry.Indexed != int64(indexed) {
				t.Fatalf("dry run %+v, want from 2, %d partitions, %d moved, %d queues, %d flagged, %d indexed", dry, x.n, moved, queues, flagged, indexed)
			}
			if d := diffNS(dumpNS(t, rdb, x.ns), f.of(x.ns)); d != "" {
				t.Fatalf("the dry run wrote:\n%s", d)
			}

			// stopped after 3 calls: refused by both protocols meanwhile
			r1, err := s.Migrate(bg, MigrateParams{Step: 2, MaxCalls: 3})
			if err != nil || r1.Done || r1.Calls != 3 || r1.From != 2 || r1.Resumed {
				t.Fatalf("first run: %+v, %v", r1, err)
			}
			refusedEverything(t, p2Store(t, rdb, x.ns))
			refusedEarly(t, early)
			for _, k := range f.of(x.ns) {
				if strings.HasSuffix(k.Key, "}:seq") {
					err := rdb.HMGet(bg, k.Key, "now", "gc", "lease").Err()
					if !isWrongType(err) && !errors.Is(err, redis.Nil) {
						// a partition not reached yet is still protocol 2's
						if v, _ := rdb.Type(bg, k.Key).Result(); v != "hash" {
							t.Fatalf("%s during the migration: %v", k.Key, err)
						}
					}
				}
			}

			// stopped by its context after 2 more calls
			ctx, cancel := context.WithCancel(bg)
			calls := 0
			r2, err := s.Migrate(ctx, MigrateParams{Step: 2, Progress: func(MigrateResult) {
				if calls++; calls == 2 {
					cancel()
				}
			}})
			cancel()
			if !errors.Is(err, context.Canceled) || r2.Done || r2.Calls != 2 || !r2.Resumed {
				t.Fatalf("second run: %+v, %v", r2, err)
			}
			refusedEverything(t, p2Store(t, rdb, x.ns))

			// to the end
			r3, err := s.Migrate(bg, MigrateParams{Step: 2})
			if err != nil || !r3.Done || !r3.Resumed {
				t.Fatalf("third run: %+v, %v", r3, err)
			}
			if got := r1.Moved + r2.Moved + r3.Moved; got != int64(moved) {
				t.Fatalf("moved %d in all, want %d", got, moved)
			}
			if got := r1.Indexed + r2.Indexed + r3.Indexed; got != int64(indexed) {
				t.Fatalf("indexed %d IDs in all, want %d", got, indexed)
			}
			if d := diffNS(dumpNS(t, rdb, x.ns), want); d != "" {
				t.Fatalf("the migrated namespace differs from protocol 3's layout:\n%s", d)
			}

			// again: nothing to do
			r4, err := s.Migrate(bg, MigrateParams{})
			if err != nil || r4.From != 3 || !r4.Done || r4.Calls != 0 || r4.Moved != 0 {
				t.Fatalf("a run on protocol 3: %+v, %v", r4, err)
			}
			if d := diffNS(dumpNS(t, rdb, x.ns), want); d != "" {
				t.Fatalf("a run on protocol 3 wrote:\n%s", d)
			}
			checkMigrated(t, p2Store(t, rdb, x.ns), f, x.ns, x.n)
		})
	}
}

// TestMigrateEmptyNamespace: nothing under the namespace, nothing written.
func TestMigrateEmptyNamespace(t *testing.T) {
	rdb := diffClient(t)
	ns := redistest.Namespace(t, rdb, "empty")
	s, err := New(rdb, Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Migrate(bg, MigrateParams{})
	if err != nil || r.From != 0 || r.Done || r.Calls != 0 {
		t.Fatalf("%+v, %v", r, err)
	}
	if got := dumpNS(t, rdb, ns); len(got) != 0 {
		t.Fatalf("wrote %v", got)
	}
	if _, err := s.Migrate(bg, MigrateParams{Step: 1001}); !errors.Is(err, weir.ErrInvalid) {
		t.Fatalf("step 1001: %v", err)
	}
}

// checkMigrated checks a store of this protocol on the migrated fixture
// namespace ns (of n partitions): its calls work, Queues counts every ready job
// and claims take every ready job of each unpaused queue, each
// partition's in protocol 2's order (priority, then FIFO).
func checkMigrated(t *testing.T, s *Store, f p2Fixture, ns string, n int) {
	t.Helper()
	got, err := s.Partitions(bg)
	if err != nil || got != n {
		t.Fatalf("partitions %d, %v; want %d", got, err, n)
	}
	qs, err := s.Queues(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetJob(bg, "m01"); err != nil {
		t.Fatal(err)
	}
	// the ready jobs each queue held, per partition in score order
	ready := map[string]map[int][]string{} // queue -> partition -> IDs
	counts := map[string]int{}
	for k, v := range f.of(ns) {
		if !strings.Contains(k, "}:q:") || !(strings.HasSuffix(k, ":r") || strings.HasSuffix(k, ":kr")) {
			continue
		}
		q := k[strings.Index(k, "}:q:")+4 : strings.LastIndex(k, ":")]
		counts[q] += len(v.Zset)
		if strings.HasSuffix(k, ":kr") {
			continue // the key rotation orders these
		}
		if ready[q] == nil {
			ready[q] = map[int][]string{}
		}
		for _, m := range v.Zset {
			p := engine.Partition(strings.Split(m[0], "/")[0], n)
			ready[q][p] = append(ready[q][p], m[0])
		}
	}
	for _, qi := range qs {
		if qi.Ready != counts[qi.Name] {
			t.Errorf("queue %s: %d ready, want %d", qi.Name, qi.Ready, counts[qi.Name])
		}
	}
	for q, byPart := range ready {
		if q == "paused" {
			continue
		}
		claimed := map[int][]string{}
		for {
			c, err := s.Claim(bg, engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if len(c) == 0 {
				break
			}
			id := c[0].Job.ID
			p := engine.Partition(strings.Split(id, "/")[0], n)
			if slices.Contains(byPart[p], id) {
				claimed[p] = append(claimed[p], id)
			}
		}
		for p, ids := range byPart {
			if !slices.Equal(claimed[p], ids) {
				t.Errorf("queue %s partition %d: claimed %v, want protocol 2's order %v", q, p, claimed[p], ids)
			}
		}
	}
}

// TestMigrateUnderLoad: stores of protocol 3 claim while weir migrate
// runs, one call at a time; every claim before the end is refused with
// ErrNeedsMigration and writes nothing (the namespace ends as a migration
// alone leaves it, but for the clock that claims after the end store),
// and claims succeed once it is done.
func TestMigrateUnderLoad(t *testing.T) {
	f := readP2Fixture(t)
	rdb := diffClient(t)
	const ns = "p2four"
	loadP2(t, rdb, f, ns)
	want, _, _, _, _ := migratedP2(f, ns)
	m := p2Store(t, rdb, ns)
	marker := keysOf(ns + ":0").marker
	var claimers sync.WaitGroup
	finished := make(chan struct{})
	var mu sync.Mutex
	refused, succeeded := 0, 0
	var failure error
	for w := range 3 {
		claimers.Go(func() {
			s := p2Store(t, rdb, ns)
			for {
				select {
				case <-finished:
					return
				default:
				}
				_, err := s.Claim(bg, engine.ClaimParams{Queues: []string{"nothing-" + strconv.Itoa(w)}, Max: 5, Lease: time.Minute})
				mu.Lock()
				switch {
				case errors.Is(err, ErrNeedsMigration):
					refused++
				case err != nil:
					failure = cmp.Or(failure, err)
				default:
					// a claim may succeed only once the namespace's
					// marker says 3, which it says from the last step on
					if v, _ := rdb.Get(bg, marker).Result(); v != "3" {
						failure = cmp.Or(failure, fmt.Errorf("a claim succeeded during the migration (marker %q)", v))
					}
					succeeded++
				}
				mu.Unlock()
			}
		})
	}
	calls := 0
	for {
		r, err := m.Migrate(bg, MigrateParams{Step: 1, MaxCalls: 1})
		if err != nil {
			t.Fatal(err)
		}
		calls++
		if r.Done {
			break
		}
		if calls > 1000 {
			t.Fatal("the migration does not end")
		}
	}
	close(finished)
	claimers.Wait()
	if failure != nil {
		t.Fatalf("a claim during the migration: %v", failure)
	}
	got := dumpNS(t, rdb, ns)
	for k, v := range got {
		if _, ok := v.Hash["now"]; ok && strings.HasSuffix(k, "}:seq3") && succeeded > 0 {
			// the claims after the end store their clock
			v.Hash = maps.Clone(v.Hash)
			v.Hash["now"] = want[k].Hash["now"]
			got[k] = v
		}
	}
	if d := diffNS(got, want); d != "" {
		t.Fatalf("claims during the migration wrote:\n%s", d)
	}
	s := p2Store(t, rdb, ns)
	for _, q := range []string{"mixed", "zero", "other", "wf"} {
		if _, err := s.Claim(bg, engine.ClaimParams{Queues: []string{q}, Max: 50, Lease: time.Minute}); err != nil {
			t.Fatalf("claim of %s after the migration: %v", q, err)
		}
	}
	t.Logf("%d migrate calls; claims: %d refused during them, %d succeeded after", calls, refused, succeeded)
}

// TestMigrateRefusals: a migration that cannot be exact writes nothing: a
// queue whose push counter passed 2^40 (its scores no longer tell the
// default priority apart), and a store opened with another partition
// count than the namespace's.
func TestMigrateRefusals(t *testing.T) {
	f := readP2Fixture(t)
	rdb := diffClient(t)
	loadP2(t, rdb, f, "p2one")
	if err := rdb.HSet(bg, "weir:{p2one:0}:q:zero:s", "push", strconv.FormatInt(1<<40, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	before := dumpNS(t, rdb, "p2one")
	_, err := p2Store(t, rdb, "p2one").Migrate(bg, MigrateParams{})
	if !errors.Is(err, weir.ErrProtocol) || !strings.Contains(err.Error(), `queue "zero"`) || !strings.Contains(err.Error(), "2^40") {
		t.Fatalf("a push counter past 2^40: %v", err)
	}
	if d := diffNS(dumpNS(t, rdb, "p2one"), before); d != "" {
		t.Fatalf("the refused migration wrote:\n%s", d)
	}

	loadP2(t, rdb, f, "p2four")
	s, err := New(rdb, Options{Namespace: "p2four", Config: engine.Config{Partitions: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Migrate(bg, MigrateParams{}); !errors.Is(err, weir.ErrInvalid) || !strings.Contains(err.Error(), "has 4 partitions") {
		t.Fatalf("a store of 2 partitions on a namespace of 4: %v", err)
	}
	if d := diffNS(dumpNS(t, rdb, "p2four"), f.of("p2four")); d != "" {
		t.Fatalf("the refused migration wrote:\n%s", d)
	}
}
