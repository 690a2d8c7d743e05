package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/weirflow/weir/engine"
)

// The protocol 2 fixture (testdata/protocol2.json) is the keyspace that
// protocol 2 of weir (commit ade9685, before the protocol marker) wrote for
// p2Scenario, in two namespaces: p2one (one partition) and p2four (four).
// The migration tests load it into a server as it was written, so that
// they convert what an older build wrote, not what this one would.
//
// To write it again, at a commit of protocol 2:
//
//	git worktree add /tmp/p2 ade9685
//	cp redisstore/protocol2_fixture_test.go /tmp/p2/redisstore/
//	(cd /tmp/p2 && WEIR_WRITE_P2_FIXTURE=$PWD/redisstore/testdata/protocol2.json \
//	    go test -count=1 ./redisstore -run TestWriteProtocol2Fixture)

// p2T0 is the fixture's clock at its start.
var p2T0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// p2Namespaces are the fixture's namespaces and their partition counts.
var p2Namespaces = []struct {
	ns string
	n  int
}{{"p2one", 1}, {"p2four", 4}}

// p2Key is one key of the fixture: its name, type and content (a hash's
// fields, a zset's members with their scores in ascending order, a list's
// elements, a string's value, a stream's entries).
type p2Key struct {
	Key    string            `json:"key"`
	Type   string            `json:"type"`
	String string            `json:"string,omitempty"`
	Hash   map[string]string `json:"hash,omitempty"`
	Zset   [][2]string       `json:"zset,omitempty"` // member, score
	List   []string          `json:"list,omitempty"`
	Stream [][]string        `json:"stream,omitempty"` // id, field, value, ...
}

// TestWriteProtocol2Fixture writes the fixture (see above) when
// WEIR_WRITE_P2_FIXTURE names the file; it is meant to run at a commit of
// protocol 2 only.
func TestWriteProtocol2Fixture(t *testing.T) {
	path := os.Getenv("WEIR_WRITE_P2_FIXTURE")
	if path == "" {
		t.Skip("WEIR_WRITE_P2_FIXTURE not set: the fixture is written at a commit of protocol 2 (protocol2_fixture_test.go)")
	}
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	for _, x := range p2Namespaces {
		now := p2T0
		s, err := New(rdb, Options{Namespace: x.ns, Config: engine.Config{Partitions: x.n}, Clock: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if err := p2Scenario(ctx, s, func(d time.Duration) { now = now.Add(d) }); err != nil {
			t.Fatalf("%s: %v", x.ns, err)
		}
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	var out []p2Key
	for _, k := range keys {
		typ, err := rdb.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		e := p2Key{Key: k, Type: typ}
		switch typ {
		case "string":
			e.String, err = rdb.Get(ctx, k).Result()
		case "hash":
			e.Hash, err = rdb.HGetAll(ctx, k).Result()
		case "list":
			e.List, err = rdb.LRange(ctx, k, 0, -1).Result()
		case "zset":
			var zs []redis.Z
			zs, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
			for _, z := range zs {
				e.Zset = append(e.Zset, [2]string{z.Member.(string), strconv.FormatFloat(z.Score, 'f', -1, 64)})
			}
		case "stream":
			var ms []redis.XMessage
			ms, err = rdb.XRange(ctx, k, "-", "+").Result()
			for _, msg := range ms {
				entry := []string{msg.ID}
				fs := make([]string, 0, len(msg.Values))
				for f := range msg.Values {
					fs = append(fs, f)
				}
				slices.Sort(fs)
				for _, f := range fs {
					entry = append(entry, f, fmt.Sprint(msg.Values[f]))
				}
				e.Stream = append(e.Stream, entry)
			}
		default:
			t.Fatalf("key %s of type %s", k, typ)
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d keys to %s", len(out), path)
}

// p2Scenario writes jobs and workflows in every state into s, moving its
// clock with advance: ready jobs of several priorities (FIFO among equal
// ones) in several queues, ready jobs with a concurrency key, a paused
// queue, delayed jobs (a run-at, a retry's backoff), running jobs,
// completed, failed and cancelled jobs, and workflows running (a chain
// with its second task ready, a fan-in with one root done), completed,
// failed and cancelled.
func p2Scenario(ctx context.Context, s *Store, advance func(time.Duration)) error {
	enq := func(id, queue string, prio int, mod func(*engine.JobSpec)) error {
		j := engine.JobSpec{ID: id, Queue: queue, Priority: prio}
		if mod != nil {
			mod(&j)
		}
		_, err := s.Enqueue(ctx, engine.EnqueueParams{Job: j})
		advance(time.Millisecond)
		return err
	}
	// ready jobs: priorities mixed, FIFO among equals
	mixed := []int{0, 5, 0, -3, 0, 0, 2, 0, -3, 0, 5, 0}
	for i, p := range mixed {
		if err := enq(fmt.Sprintf("m%02d", i+1), "mixed", p, nil); err != nil {
			return err
		}
	}
	for i := range 5 {
		if err := enq(fmt.Sprintf("z%02d", i+1), "zero", 0, nil); err != nil {
			return err
		}
	}
	for i, p := range []int{4, -1, 4} {
		if err := enq(fmt.Sprintf("o%d", i+1), "other", p, nil); err != nil {
			return err
		}
	}
	for i, k := range []string{"acct", "", "acct", "bank"} {
		if err := enq(fmt.Sprintf("k%d", i+1), "keyed", 0, func(j *engine.JobSpec) { j.Key = k }); err != nil {
			return err
		}
	}
	for i := range 3 {
		if err := enq(fmt.Sprintf("p%d", i+1), "paused", i%2, nil); err != nil {
			return err
		}
	}
	if err := s.PauseQueue(ctx, "paused"); err != nil {
		return err
	}
	// delayed: a run-at, and a retry's backoff below
	if err := enq("d1", "mixed", 0, func(j *engine.JobSpec) { j.RunAt = p2T0.Add(time.Hour) }); err != nil {
		return err
	}
	// running, completed, failed, cancelled, retrying
	for _, id := range []string{"r1", "r2", "c1", "f1", "x1", "b1"} {
		if err := enq(id, "run", 0, func(j *engine.JobSpec) {
			if id == "b1" {
				j.MaxAttempts, j.Backoff = 3, time.Minute
			}
		}); err != nil {
			return err
		}
	}
	if err := enq("x2", "run", 0, nil); err != nil {
		return err
	}
	if _, err := s.CancelJob(ctx, engine.CancelJobParams{ID: "x2"}); err != nil {
		return err
	}
	tokens := map[string]string{}
	for len(tokens) < 6 {
		got, err := s.Finish(ctx, engine.FinishParams{Claim: &engine.ClaimParams{Queues: []string{"run"}, Max: 6, Lease: time.Hour}})
		if err != nil {
			return err
		}
		if len(got.Claimed) == 0 {
			return fmt.Errorf("claimed %d of queue run, want 6", len(tokens))
		}
		for _, c := range got.Claimed {
			tokens[c.Job.ID] = c.Lease.Token
		}
	}
	advance(time.Second)
	fin := engine.FinishParams{Outcomes: []engine.Outcome{
		{JobID: "c1", Token: tokens["c1"], Kind: engine.OutcomeCompleted, Result: []byte("done")},
		{JobID: "f1", Token: tokens["f1"], Kind: engine.OutcomeFailed, Error: "boom"},
		{JobID: "b1", Token: tokens["b1"], Kind: engine.OutcomeFailed, Error: "again"},
	}}
	if _, err := s.Finish(ctx, fin); err != nil {
		return err
	}
	if _, err := s.CancelJob(ctx, engine.CancelJobParams{ID: "x1"}); err != nil {
		return err
	}
	// workflows
	plans := []engine.Plan{
		{ID: "wchain", Tasks: []engine.TaskSpec{{Name: "a", Queue: "wf"}, {Name: "b", Queue: "wf", After: []string{"a"}}, {Name: "c", Queue: "wf", After: []string{"b"}}}},
		{ID: "wfan", Tasks: []engine.TaskSpec{{Name: "r1", Queue: "wf", Priority: 1}, {Name: "r2", Queue: "wf"}, {Name: "r3", Queue: "wf", Priority: -1}, {Name: "join", Queue: "wf", After: []string{"r1", "r2", "r3"}}}},
		{ID: "wdone", Tasks: []engine.TaskSpec{{Name: "only", Queue: "wend"}}},
		{ID: "wfail", Tasks: []engine.TaskSpec{{Name: "only", Queue: "wend"}}},
		{ID: "wcancel", Tasks: []engine.TaskSpec{{Name: "a", Queue: "wend"}, {Name: "b", Queue: "wend", After: []string{"a"}}}},
	}
	for _, p := range plans {
		if _, err := s.Submit(ctx, engine.SubmitParams{Plan: p}); err != nil {
			return err
		}
		advance(time.Millisecond)
	}
	if _, err := s.CancelWorkflow(ctx, engine.CancelWorkflowParams{ID: "wcancel"}); err != nil {
		return err
	}
	// end wdone and wfail, and the first task of wchain and wfan
	want := map[string]engine.OutcomeKind{"wdone/only": engine.OutcomeCompleted, "wfail/only": engine.OutcomeFailed, "wchain/a": engine.OutcomeCompleted, "wfan/r2": engine.OutcomeCompleted}
	var outs []engine.Outcome
	for _, q := range []string{"wend", "wf"} {
		for {
			got, err := s.Finish(ctx, engine.FinishParams{Claim: &engine.ClaimParams{Queues: []string{q}, Max: 1, Lease: time.Hour}})
			if err != nil {
				return err
			}
			if len(got.Claimed) == 0 {
				break
			}
			c := got.Claimed[0]
			if k, ok := want[c.Job.ID]; ok {
				o := engine.Outcome{JobID: c.Job.ID, Token: c.Lease.Token, Kind: k}
				if k == engine.OutcomeFailed {
					o.Error = "no"
				}
				outs = append(outs, o)
				delete(want, c.Job.ID)
			}
			if len(want) == 0 {
				break
			}
		}
	}
	if len(want) != 0 {
		return fmt.Errorf("workflow tasks not claimed: %v", want)
	}
	advance(time.Second)
	if _, err := s.Finish(ctx, engine.FinishParams{Outcomes: outs}); err != nil {
		return err
	}
	// the finishes pushed wchain/b; a late ready job goes after it
	return enq("m13", "mixed", 0, nil)
}
