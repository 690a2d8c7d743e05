package scenario

import (
	"fmt"

	"github.com/weirflow/weir/engine"
)

type outcomeArg struct {
	o     engine.Outcome
	token word
}

type opFinish struct {
	outs  []outcomeArg
	claim *engine.ClaimParams
}

func (*opFinish) needsReply() bool { return true }

func parseFinish(args []word) (operation, error) {
	op := &opFinish{}
	if len(args) > 0 {
		if err := op.outcome(args); err != nil {
			return nil, err
		}
	}
	return op, nil
}

func (op *opFinish) more(ws []word) error {
	if ws[0].key != "" {
		return fmt.Errorf("a finish continues with 'outcome ...' or 'claim ...' lines")
	}
	switch ws[0].val {
	case "add":
		if op.claim != nil || len(op.outs) == 0 {
			return fmt.Errorf("an 'add <task> q=<queue> ...' line follows its outcome")
		}
		t, err := parseTask(ws[1:])
		if err != nil {
			return err
		}
		o := &op.outs[len(op.outs)-1].o
		o.Add = append(o.Add, t)
		return nil
	case "outcome":
		if op.claim != nil {
			return fmt.Errorf("outcomes come before the claim")
		}
		return op.outcome(ws[1:])
	case "claim":
		if op.claim != nil {
			return fmt.Errorf("one claim per finish")
		}
		c, err := parseClaim(ws[1:])
		if err != nil {
			return err
		}
		op.claim = &c
		return nil
	}
	return fmt.Errorf("a finish continues with 'outcome ...', 'add ...' or 'claim ...' lines")
}

const outcomeUsage = "<job> <token> completed|failed|cancelled|released [result=] [error=] [non_retryable] [retry_after=] [gate]"

func (op *opFinish) outcome(ws []word) error {
	if len(ws) < 3 || ws[0].key != "" || ws[0].isVar || ws[1].key != "" || ws[2].key != "" {
		return fmt.Errorf("usage: %s", outcomeUsage)
	}
	o, err := parseOpts(ws[3:], map[string]kind{"result": kStr, "error": kStr, "non_retryable": kBool, "retry_after": kDur, "gate": kBool})
	if err != nil {
		return err
	}
	k := engine.OutcomeKind(ws[2].val)
	if ws[2].isVar {
		return fmt.Errorf("usage: %s", outcomeUsage)
	}
	op.outs = append(op.outs, outcomeArg{
		token: ws[1],
		o: engine.Outcome{
			JobID: ws[0].val, Kind: k, Result: o.bytes("result"), Error: o.str("error"),
			NonRetryable: o.bool("non_retryable", false), RetryAfter: o.dur("retry_after", 0),
			GateDependents: o.bool("gate", false),
		},
	})
	return nil
}

func (op *opFinish) exec(r *runner, st *Step) error {
	p := engine.FinishParams{Claim: op.claim}
	for _, o := range op.outs {
		tok, err := r.value(st, o.token)
		if err != nil {
			return err
		}
		oc := o.o
		oc.Token = tok
		p.Outcomes = append(p.Outcomes, oc)
	}
	res, err := r.store(st).Finish(r.ctx, p)
	if err != nil {
		return r.compare(st, []line{errLine(err)})
	}
	if len(res.Settled) != len(p.Outcomes) {
		return r.mismatch(st, fmt.Sprintf("%d outcomes settled, want one per outcome (%d)", len(res.Settled), len(p.Outcomes)), nil, nil)
	}
	var got []line
	for i, s := range res.Settled {
		if s.JobID != p.Outcomes[i].JobID {
			return r.mismatch(st, fmt.Sprintf("settled #%d is job %q, want %q", i+1, s.JobID, p.Outcomes[i].JobID), nil, nil)
		}
		got = append(got, settledLine(s))
	}
	if op.claim != nil {
		for _, c := range res.Claimed {
			if d := checkClaimed(c, r.at, op.claim.Lease); d != "" {
				return r.mismatch(st, d, nil, nil)
			}
		}
		got = append(got, claimLines(res.Claimed, []field{{"", "claimed"}})...)
	} else if len(res.Claimed) > 0 {
		return r.mismatch(st, "jobs claimed by a finish that asked for no claim", nil, nil)
	}
	return r.compare(st, got)
}
