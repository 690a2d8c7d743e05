package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
	"github.com/weirflow/weir/internal/redistest"
	"github.com/weirflow/weir/internal/testclock"
)

// TestFastPathsWriteTheSame replays every golden scenario twice on one
// server, in two namespaces, with the fast paths on and off
// (spec/scripts.md, Fast paths), and requires the two namespaces to hold
// the same keys with the same contents at the end: a fast path writes
// exactly what the general code writes. The scenarios' own checks hold
// the answers of both runs.
func TestFastPathsWriteTheSame(t *testing.T) {
	rdb := diffClient(t)
	for _, sc := range goldenScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			var snaps [2]map[string]string
			for i, fast := range []bool{true, false} {
				ns, err := replayGolden(t, rdb, "fastpath", sc, func(s *Store) error { return s.SetFastPaths(bg, fast) })
				if err != nil {
					t.Fatalf("fast paths %v: %v", fast, err)
				}
				snaps[i] = namespaceContents(t, rdb, ns)
			}
			if d := diffContents(snaps[0], snaps[1]); d != "" {
				t.Errorf("the namespaces differ (fast paths on / off):\n%s", d)
			}
		})
	}
}

// hexNonce matches a claim call's nonce (claim.go), which differs from one
// run to the other wherever it is written.
var hexNonce = regexp.MustCompile(`[0-9a-f]{16}`)

// saltedTag matches the partition number and salt that begin a key's
// name after its namespace.
var saltedTag = regexp.MustCompile(`^(\d+)\.\d+}`)

// namespaceContents reads every key of namespace ns: by its name without
// the namespace, what it holds as one comparable text (a hash's fields
// and a set's members sorted, a stream's entries without their IDs, and
// whether it expires, and when, in whole seconds, but for the claim
// records), claim nonces masked (the claim records, whose names differ by
// nonce alone, as one set). The seq hash's fast field, the
// switch itself, is left out.
func namespaceContents(t *testing.T, rdb redis.UniversalClient, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	prefix := "weir:{" + ns + ":"
	out := map[string]string{}
	err := forEachKey(ctx, rdb, prefix+"*", func(c *redis.Client, key string) error {
		// a partition's tag, salted per namespace (partition_tag.go)
		name := saltedTag.ReplaceAllString(strings.TrimPrefix(key, prefix), "$1}")
		if _, rest, ok := strings.Cut(name, "}:"); ok && strings.HasPrefix(rest, "claim:") {
			name = hexNonce.ReplaceAllString(name, "<nonce>")
		}
		typ, err := c.Type(ctx, key).Result()
		if err != nil {
			return err
		}
		var v string
		switch typ {
		case "string":
			v, err = c.Get(ctx, key).Result()
		case "hash":
			var h map[string]string
			h, err = c.HGetAll(ctx, key).Result()
			if strings.HasSuffix(key, ":seq3") {
				delete(h, "fast")
			}
			var lines []string
			for f, x := range h {
				lines = append(lines, f+"="+x)
			}
			slices.Sort(lines)
			v = strings.Join(lines, "\n")
		case "list":
			var l []string
			l, err = c.LRange(ctx, key, 0, -1).Result()
			if strings.Contains(name, "}:xb:") {
				// a retention bucket: a set that nothing reads in order (a
				// call's fast outcomes join it before its general ones)
				slices.Sort(l)
			}
			v = strings.Join(l, "\n")
		case "set":
			var l []string
			l, err = c.SMembers(ctx, key).Result()
			slices.Sort(l)
			v = strings.Join(l, "\n")
		case "zset":
			var l []redis.Z
			l, err = c.ZRangeWithScores(ctx, key, 0, -1).Result()
			var lines []string
			for _, z := range l {
				lines = append(lines, fmt.Sprintf("%v %v", z.Score, z.Member))
			}
			v = strings.Join(lines, "\n")
		case "stream":
			var l []redis.XMessage
			l, err = c.XRange(ctx, key, "-", "+").Result()
			var lines []string
			for _, m := range l {
				var fs []string
				for f, x := range m.Values {
					fs = append(fs, fmt.Sprintf("%s=%v", f, x))
				}
				slices.Sort(fs)
				lines = append(lines, strings.Join(fs, " "))
			}
			v = strings.Join(lines, "\n")
		default:
			v = "type " + typ
		}
		if err != nil {
			return err
		}
		ttl, err := c.PTTL(ctx, key).Result()
		if err != nil {
			return err
		}
		switch {
		case ttl > 0 && strings.Contains(name, "}:claim:"):
			// a claim record's TTL runs from its call on the server's
			// clock: whole seconds of two runs differ by their timing
			v += "\n(expires)"
		case ttl > 0:
			v += fmt.Sprintf("\n(expires in %v)", ttl.Round(1e9))
		}
		v = typ + "\n" + hexNonce.ReplaceAllString(v, "<nonce>")
		if o, ok := out[name]; ok && typ == "hash" && strings.HasPrefix(o, "hash\n") {
			// partition 0's seq hash and the key that holds np, one key
			// or two as the namespace's name salts the tag: their fields
			lines := append(strings.Split(o, "\n")[1:], strings.Split(v, "\n")[1:]...)
			slices.Sort(lines)
			v = "hash\n" + strings.Join(lines, "\n")
		} else if ok && strings.HasSuffix(name, "}:seq") && o == v {
			// the protocol marker of partition 0 and of the key that holds
			// np, one key or two as above: the same string
		} else if ok {
			// claim records, one per call: the set of them
			all := strings.Split(o, "\n\n")
			all = append(all, v)
			slices.Sort(all)
			v = strings.Join(all, "\n\n")
		}
		out[name] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// forEachKey calls f with every key matching pattern, on every primary of
// a cluster.
func forEachKey(ctx context.Context, rdb redis.UniversalClient, pattern string, f func(*redis.Client, string) error) error {
	each := func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for it.Next(ctx) {
			if err := f(c, it.Val()); err != nil {
				return err
			}
		}
		return it.Err()
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, each)
	}
	return each(ctx, rdb.(*redis.Client))
}

// expiresIn matches the time to live namespaceContents writes.
var expiresIn = regexp.MustCompile(`\(expires in ([^)]*)\)`)

// sameButTTLs says whether two keys' contents are the same but for their
// times to live, each within ttlSlack of the other's: a TTL set in real
// time (a claim record's, PX the lease) has run down further in the
// namespace read later, by as long as the second run took.
func sameButTTLs(x, y string) bool {
	if expiresIn.ReplaceAllString(x, "(expires)") != expiresIn.ReplaceAllString(y, "(expires)") {
		return false
	}
	a, b := expiresIn.FindAllStringSubmatch(x, -1), expiresIn.FindAllStringSubmatch(y, -1)
	for i := range a {
		da, erra := time.ParseDuration(a[i][1])
		db, errb := time.ParseDuration(b[i][1])
		if erra != nil || errb != nil || (da-db).Abs() > ttlSlack {
			return false
		}
	}
	return true
}

// ttlSlack is how far apart sameButTTLs lets two times to live be: more
// than two runs of a scenario on a loaded machine take apart, less than
// any lease a scenario sets differs from another.
const ttlSlack = 5 * time.Second

// diffContents says how two namespaces' contents differ, "" when they do
// not (times to live within ttlSlack of each other count as the same).
func diffContents(a, b map[string]string) string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out strings.Builder
	for _, k := range keys {
		x, okx := a[k]
		y, oky := b[k]
		switch {
		case !okx:
			fmt.Fprintf(&out, "%s: only with the fast paths off:\n%s\n", k, y)
		case !oky:
			fmt.Fprintf(&out, "%s: only with the fast paths on:\n%s\n", k, x)
		case x != y && !sameButTTLs(x, y):
			fmt.Fprintf(&out, "%s:\n  on:  %q\n  off: %q\n", k, x, y)
		}
	}
	return out.String()
}

// TestFastPathsBatches runs batches that the golden scenarios do not make
// (an enqueue of 100 plain jobs in one call, claims of 50 at once, plain
// jobs mixed with a workflow's tasks in one queue, a released job claimed
// again by its own finish, a retried one, expired leases, a checkpoint)
// twice, with the fast paths on and off, and requires the same replies
// and the same namespace contents: the enqueue's and the claim's fast
// paths (fast_enqueue.lua, fast_claim.lua) write what the general code
// writes.
func TestFastPathsBatches(t *testing.T) {
	rdb := diffClient(t)
	var logs [2][]string
	var snaps [2]map[string]string
	for i, fast := range []bool{true, false} {
		ns := redistest.Namespace(t, rdb, "fastbatch")
		clk := testclock.New()
		s, err := New(rdb, Options{Namespace: ns, Clock: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetFastPaths(bg, fast); err != nil {
			t.Fatal(err)
		}
		logs[i] = fastBatches(t, s, clk)
		snaps[i] = namespaceContents(t, rdb, ns)
	}
	if len(logs[0]) != len(logs[1]) {
		t.Fatalf("%d replies with the fast paths on, %d off", len(logs[0]), len(logs[1]))
	}
	for k := range logs[0] {
		if logs[0][k] != logs[1][k] {
			a, b := logs[0][k], logs[1][k]
			at := 0
			for at < min(len(a), len(b)) && a[at] == b[at] {
				at++
			}
			from := max(0, at-300)
			t.Errorf("reply %d differs at byte %d:\n  on:  ...%s\n  off: ...%s", k, at, a[from:min(len(a), at+100)], b[from:min(len(b), at+100)])
		}
	}
	if d := diffContents(snaps[0], snaps[1]); d != "" {
		t.Errorf("the namespaces differ (fast paths on / off):\n%s", d)
	}
}

// fastBatches is TestFastPathsBatches's sequence on s; it returns every
// reply, formatted, claim nonces masked.
func fastBatches(t *testing.T, s *Store, clk *testclock.Clock) []string {
	t.Helper()
	var log []string
	note := func(v any, err error) {
		t.Helper()
		b, jerr := json.Marshal(v)
		if jerr != nil {
			t.Fatal(jerr)
		}
		log = append(log, hexNonce.ReplaceAllString(fmt.Sprintf("%s %v", b, err), "<nonce>"))
	}
	// a workflow whose two roots and join run in queue q, with the jobs
	p := engine.Plan{ID: "wf", Tasks: []engine.TaskSpec{
		{Name: "a", Queue: "q"}, {Name: "b", Queue: "q", Priority: -1},
		{Name: "c", Queue: "q", After: []string{"a", "b"}},
	}}
	note(s.Submit(bg, engine.SubmitParams{Plan: p}))
	batch := func(prefix string, n int) []engine.EnqueueParams {
		var ps []engine.EnqueueParams
		for k := range n {
			j := engine.JobSpec{ID: prefix + strconv.Itoa(k), Queue: "q", Priority: k%3 - 1, MaxAttempts: 1 + k%3}
			if k%2 == 0 {
				j.Payload = []byte("payload " + strconv.Itoa(k))
			}
			if k%5 == 0 {
				j.Payload = []byte{}
			}
			ps = append(ps, engine.EnqueueParams{Job: j})
		}
		return ps
	}
	// 100 new jobs in one call; the same again (every one there); a batch
	// with one ID twice and one in another queue
	note(s.EnqueueBatch(bg, batch("j", 100)))
	note(s.EnqueueBatch(bg, batch("j", 100)))
	dup := batch("d", 4)
	dup[3].Job.ID = "d1"
	dup = append(dup, engine.EnqueueParams{Job: engine.JobSpec{ID: "other", Queue: "q2"}})
	note(s.EnqueueBatch(bg, dup))
	// a new queue's first batch
	note(s.EnqueueBatch(bg, batch("n", 3)[:1]))
	clk.Advance(time.Second)
	cp := engine.ClaimParams{Queues: []string{"q", "q2"}, Max: 50, Lease: time.Minute}
	claimed, err := s.Claim(bg, cp)
	note(claimed, err)
	// a checkpoint on the first claimed plain job, released below
	for _, c := range claimed {
		if !strings.Contains(c.Job.ID, "/") {
			note(nil, s.Progress(bg, engine.ProgressParams{JobID: c.Job.ID, Token: c.Lease.Token, Checkpoint: []byte("ck")}))
			break
		}
	}
	clk.Advance(time.Second)
	// released, failed (retried while attempts remain) and completed
	// outcomes, with a claim of 100 that takes the released ones again
	var outs []engine.Outcome
	for k, c := range claimed {
		o := engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted}
		switch k % 4 {
		case 0:
			o.Kind = engine.OutcomeReleased
		case 1:
			o.Kind, o.Error = engine.OutcomeFailed, "boom"
		}
		outs = append(outs, o)
	}
	cp.Max = 100
	res, err := s.Finish(bg, engine.FinishParams{Outcomes: outs, Claim: &cp})
	note(res, err)
	// the leases expire; the retried jobs fall due: the claim sweeps
	clk.Advance(2 * time.Minute)
	cp.Max = 50
	for range 4 {
		claimed, err = s.Claim(bg, cp)
		note(claimed, err)
		outs = outs[:0]
		for _, c := range claimed {
			outs = append(outs, engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: engine.OutcomeCompleted})
		}
		if len(outs) > 0 {
			clk.Advance(time.Second)
			note(s.Finish(bg, engine.FinishParams{Outcomes: outs, Claim: &cp}))
		}
		clk.Advance(time.Minute)
	}
	return log
}

// TestSameButTTLs holds the comparison of TestFastPathsWriteTheSame to
// letting real-time TTLs differ by how long a run took, and no more.
func TestSameButTTLs(t *testing.T) {
	for _, c := range []struct {
		x, y string
		same bool
	}{
		{"string\nj 1-<nonce>\n(expires in 29s)", "string\nj 1-<nonce>\n(expires in 30s)", true},
		{"string\nj 1-<nonce>\n(expires in 29s)", "string\nj 1-<nonce>\n(expires in 1m0s)", false},
		{"string\nj 1-<nonce>\n(expires in 30s)", "string\nj 2-<nonce>\n(expires in 30s)", false},
		{"string\nj 1-<nonce>\n(expires in 30s)", "string\nj 1-<nonce>", false},
	} {
		if got := sameButTTLs(c.x, c.y); got != c.same {
			t.Errorf("sameButTTLs(%q, %q) = %v, want %v", c.x, c.y, got, c.same)
		}
	}
}
