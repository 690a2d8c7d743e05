package conformance

import (
	"github.com/weirflow/weir"
	"time"

	"github.com/weirflow/weir/engine"
)

// genWebhook gives plan p a webhook (spec/states.md, Webhooks), one plan in
// two: its delivery on q3, which claims take from, or on the default
// queue, which none does (the delivery stays queued).
func (d *differ) genWebhook(p *engine.Plan) {
	switch d.intRange(0, 3, "webhook") {
	case 0:
		p.Webhook = &weir.Webhook{
			URL: sampled(d, []string{"http://127.0.0.1:1/hook", "https://example.invalid/h?a=1"}, "hookurl"), Queue: "q3",
			Secret:      sampled(d, []string{"", "s1"}, "hooksecret"),
			MaxAttempts: d.intRange(0, 2, "hookattempts"),
			Backoff:     time.Duration(sampled(d, []int{0, 10}, "hookbackoff")) * time.Millisecond,
		}
	case 1:
		p.Webhook = &weir.Webhook{URL: "http://127.0.0.1:1/hook"}
	}
}

// webhookJobIDs lists the delivery job IDs of workflow id's plan, if it
// has a webhook: one per run the model's record has had (RerunWorkflow).
func (d *differ) webhookJobIDs(id string) []string {
	p := d.plans[id]
	if p.Webhook == nil {
		return nil
	}
	runs := 1
	if w, err := d.m.GetWorkflow(d.clock(), id); err == nil {
		runs = w.Run
	}
	out := make([]string, runs)
	for r := range out {
		out[r] = weir.WebhookRunJobID(p.ID, r+1)
	}
	return out
}
