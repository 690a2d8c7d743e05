package redisstore

import (
	"bytes"
	"errors"
	"github.com/weirflow/weir"
	"slices"
	"testing"
)

// fuzzReply turns fuzz bytes into a script reply: values separated by
// 0x1f (every reply is a flat array of strings).
func fuzzReply(data []byte) []string {
	var out []string
	for _, f := range bytes.Split(data, []byte{0x1f}) {
		out = append(out, string(f))
	}
	return out
}

func replySeed(vals ...string) []byte {
	var b []byte
	for i, v := range vals {
		if i > 0 {
			b = append(b, 0x1f)
		}
		b = append(b, v...)
	}
	return b
}

// protocolErr reports whether err is nil or matches ErrProtocol.
func protocolErr(err error) bool { return err == nil || errors.Is(err, weir.ErrProtocol) }

// FuzzReplyDecoders feeds arbitrary replies to every decoder of script
// replies (job snapshots, claims, settles, pushes, lists, workflow
// records): none panics, every error is ErrProtocol, and what a decoder
// returns is bounded by the reply (a count never allocates past the values
// that follow it).
func FuzzReplyDecoders(f *testing.F) {
	job := []string{"j1", "q|0|3|1000|0", "1700000000000", "1", "payload", "running", "1", "0",
		"tok", "1700000060000", "", "", "", "", "0", "0"}
	f.Add(replySeed(job...))
	f.Add(replySeed("1", "w/b\nb|q|0|1|1000|0|A|\n1700000000000\n1\n5\n1700000060000\n0\npe\n1\na|q|0|1|1000|0||\ncompleted\nr"+
		"\nr1700000000000:1699999999999", "payload", "error", "r"))
	f.Add(replySeed("2", "j1\nq|0|3|1000|0\n1700000000000\n1\ntok\n1700000060000\n0\nc\n0", "ck", "w/c\nc|q|0|1|1000|0||\n0\n1\nt\n0\n\nL1,2"))
	f.Add(replySeed("j1\n\ncompleted\n0\ncompleted\n1\n2\nw/b\nq\nw/c\nq"))
	f.Add(replySeed("j1\nLEASELOST\n\n0\n\n\n0"))
	f.Add(replySeed("2", "a", "b", "1", "x", "q"))
	f.Add(replySeed("id", "w1", "st", "running", "n", "2", "S", "cw", "t1", "a|q|0|1|1000|0||",
		"t2", "b|q|0|1|1000|0|AU|u", "t2.dp", "1", "t1.r", "ok", "u2.s", "pending", "c", "1700000000000"))
	f.Add(replySeed("1", "q", "", "3", "0", "0"))
	f.Add(replySeed("\x01999999999999", "\x02", "\x03", "-1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			t.Skip()
		}
		v := fuzzReply(data)
		limit := len(v)

		r := newReader(v)
		j := r.job()
		if !protocolErr(r.err) || (j.Lease != nil && j.State != weir.Running) {
			t.Fatalf("job: %+v, %v", j, r.err)
		}

		r = newReader(v)
		cs := r.claimed()
		if !protocolErr(r.err) || len(cs) > limit {
			t.Fatalf("claimed: %d jobs from %d values, %v", len(cs), limit, r.err)
		}
		for _, c := range cs {
			// (dependencies are packed: bounded by the reply's bytes)
			if len(c.Deps) > len(data) {
				t.Fatalf("%d deps from %d bytes", len(c.Deps), len(data))
			}
		}

		r = newReader(v)
		s := r.settled()
		// (a Settled is packed: its pushes are bounded by the reply's bytes)
		if !protocolErr(r.err) || len(s.Pushed) > len(data) {
			t.Fatalf("settled: %+v, %v", s, r.err)
		}
		if s.Err != nil && !errors.Is(s.Err, weir.ErrLeaseLost) && weir.Sentinel(s.Err) == nil {
			t.Fatalf("settled error %v carries no sentinel", s.Err)
		}

		r = newReader(v)
		ss := r.strings()
		if !protocolErr(r.err) || len(ss) > limit {
			t.Fatalf("strings: %d from %d values, %v", len(ss), limit, r.err)
		}

		r = newReader(v)
		qs := queuesReply(r)
		if !protocolErr(r.err) || len(qs) > limit {
			t.Fatalf("queues: %d from %d values, %v", len(qs), limit, r.err)
		}

		r = newReader(v)
		ps := r.pushed()
		if !protocolErr(r.err) || len(ps) > limit {
			t.Fatalf("pushed: %d from %d values, %v", len(ps), limit, r.err)
		}

		w, err := workflowFromHash(v)
		if err != nil {
			if !errors.Is(err, weir.ErrProtocol) {
				t.Fatalf("workflowFromHash: %v is not ErrProtocol", err)
			}
			return
		}
		if len(w.Tasks) == 0 || len(w.Tasks) > limit || w.ID == "" {
			t.Fatalf("workflow %q with %d tasks from %d values", w.ID, len(w.Tasks), limit)
		}
		names := make([]string, len(w.Tasks))
		for i, tk := range w.Tasks {
			names[i] = tk.Name
		}
		for _, tk := range w.Tasks {
			for _, a := range tk.After {
				if !slices.Contains(names, a) {
					t.Fatalf("task %q after %q, not a task of the workflow", tk.Name, a)
				}
			}
		}
	})
}
