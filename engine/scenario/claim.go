package scenario

import (
	"fmt"
	"github.com/weirflow/weir"
	"strconv"
	"time"

	"github.com/weirflow/weir/engine"
)

// DefaultLease and DefaultMax are what claim uses when a line does not say.
const (
	DefaultLease = 30 * time.Second
	DefaultMax   = 1
)

type opClaim struct {
	noMore
	p engine.ClaimParams
}

func (*opClaim) needsReply() bool { return true }

func parseClaim(args []word) (engine.ClaimParams, error) {
	pos, rest, err := positional(args, 1, "claim <queue>[,<queue>...] [max=N] [lease=30s]")
	if err != nil {
		return engine.ClaimParams{}, err
	}
	o, err := parseOpts(rest, map[string]kind{"max": kInt, "lease": kDur})
	if err != nil {
		return engine.ClaimParams{}, err
	}
	return engine.ClaimParams{Queues: splitList(pos[0]), Max: o.int("max", DefaultMax), Lease: o.dur("lease", DefaultLease)}, nil
}

// claimedLines renders one claimed job: "<id> attempt=N token=T
// [payload=P] [checkpoint=C]", then one "dep <task> <state> [result=R] [error=E]" line per
// dependency outcome handed with it.
func claimedLines(c engine.Claimed, prefix []field) []line {
	l := append(line{}, prefix...)
	l = append(l, field{"", c.Job.ID}, field{"attempt", strconv.Itoa(c.Job.Attempt)}, field{"token", c.Lease.Token})
	if len(c.Job.Payload) > 0 {
		l = append(l, field{"payload", string(c.Job.Payload)})
	}
	if c.Checkpoint != nil {
		l = append(l, field{"checkpoint", string(c.Checkpoint)})
	}
	out := []line{l}
	for _, d := range c.Deps {
		dl := line{{"", "dep"}, {"", d.Task}, {"", string(d.State)}}
		if len(d.Result) > 0 {
			dl = append(dl, field{"result", string(d.Result)})
		}
		if d.Error != "" {
			dl = append(dl, field{"error", d.Error})
		}
		out = append(out, dl)
	}
	return out
}

// checkClaimed verifies what a claimed job's line does not show: it is
// running under the lease it was handed, and the lease ends at now + lease.
func checkClaimed(c engine.Claimed, now time.Time, lease time.Duration) string {
	want := now.Add(lease)
	switch {
	case !c.Lease.Deadline.Equal(want):
		return fmt.Sprintf("job %s: lease deadline %s, want now+lease = %s", c.Job.ID, ms(c.Lease.Deadline), ms(want))
	case c.Job.State != weir.Running:
		return fmt.Sprintf("job %s: claimed in state %s, want running", c.Job.ID, c.Job.State)
	case c.Job.Lease == nil || c.Job.Lease.Token != c.Lease.Token || !c.Job.Lease.Deadline.Equal(c.Lease.Deadline):
		return fmt.Sprintf("job %s: the job snapshot's lease differs from the lease handed out", c.Job.ID)
	}
	return ""
}

func claimLines(cs []engine.Claimed, prefix []field) []line {
	if len(cs) == 0 {
		return []line{append(append(line{}, prefix...), field{"", "none"})}
	}
	var out []line
	for _, c := range cs {
		out = append(out, claimedLines(c, prefix)...)
	}
	return out
}

func (op *opClaim) exec(r *runner, st *Step) error {
	cs, err := r.store(st).Claim(r.ctx, op.p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	for _, c := range cs {
		if d := checkClaimed(c, r.at, op.p.Lease); d != "" {
			return r.mismatch(st, d, nil, nil)
		}
	}
	return r.compare(st, claimLines(cs, nil))
}
