package redisstore

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirflow/weir/engine"
)

// TestSubmitPlainRootsWriteAsEachPush: a submit whose roots are all
// plain (pushed ready, unkeyed, of priority 0) pushes them in one batch
// (lua/scripts/submit.lua); it writes every key as the general path
// does, root by root (taken here by a step budget below the number of
// roots, drain calls pushing the rest): the workflow's hashes and state
// string, the queues' lists and states, the events. With and without a
// deadline and a payload.
func TestSubmitPlainRootsWriteAsEachPush(t *testing.T) {
	plan := func(deadline bool) engine.Plan {
		p := engine.Plan{ID: "fan"}
		var after []string
		for i := range 10 {
			ts := engine.TaskSpec{Name: fmt.Sprintf("t%d", i), Queue: []string{"qa", "qb"}[i%3/2]}
			if i == 4 {
				ts.Payload = []byte(`{"x":1}`)
			}
			p.Tasks = append(p.Tasks, ts)
			after = append(after, ts.Name)
		}
		p.Tasks = append(p.Tasks, engine.TaskSpec{Name: "join", Queue: "qa", After: after})
		if deadline {
			p.DeadlineIn = time.Hour
		}
		return p
	}
	for _, deadline := range []bool{false, true} {
		dump := func(budget int) map[string]string {
			e := newEnv(t, engine.DefaultConfig())
			if budget > 0 {
				if err := e.store.SetStepBudget(bg, budget); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.store.Submit(bg, engine.SubmitParams{Plan: plan(deadline)}); err != nil {
				t.Fatal(err)
			}
			if budget > 0 && e.store.drainCalls.Load() == 0 {
				t.Fatal("no drain call: the budget did not cut the roots")
			}
			return dumpNamespace(t, e)
		}
		fast, general := dump(0), dump(3)
		for _, k := range slices.Sorted(maps.Keys(general)) {
			if fast[k] != general[k] {
				t.Errorf("deadline %v: key %s\n fast    %s\n general %s", deadline, k, fast[k], general[k])
			}
		}
		for k := range fast {
			if _, ok := general[k]; !ok {
				t.Errorf("deadline %v: key %s written by the batch only", deadline, k)
			}
		}
	}
}

// dumpNamespace returns e's keys (without the namespace's prefix) and
// their values as text, but for the seq hash (the step budget's) and the
// event stream's entries (its events are listed in order).
func dumpNamespace(t *testing.T, e *testEnv) map[string]string {
	t.Helper()
	out := map[string]string{}
	keys, err := e.rdb.Keys(bg, "weir:{"+e.ns+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		_, name, _ := strings.Cut(k, "}:")
		if strings.HasPrefix(name, "seq") {
			continue
		}
		typ := e.rdb.Type(bg, k).Val()
		var v any
		switch typ {
		case "string":
			v = e.rdb.Get(bg, k).Val()
		case "hash":
			v = e.rdb.HGetAll(bg, k).Val()
		case "zset":
			v = e.rdb.ZRangeWithScores(bg, k, 0, -1).Val()
		case "list":
			v = e.rdb.LRange(bg, k, 0, -1).Val()
		case "stream":
			// the events in order (a drain call writes its own entry)
			var vs []string
			for _, m := range e.rdb.XRange(bg, k, "-", "+").Val() {
				for _, ev := range strings.Split(fmt.Sprint(m.Values["e"]), "\n") {
					vs = append(vs, strings.TrimSpace(ev))
				}
			}
			v = vs
		default:
			v = typ
		}
		out[name] = fmt.Sprint(v)
	}
	return out
}
