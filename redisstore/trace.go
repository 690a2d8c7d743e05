package redisstore

import (
	"strings"

	"github.com/weirflow/weir/engine"
)

// traceField is the hash field of a plain job or a workflow that holds the
// traceparent of its enqueue or submit (F_TRACE in lua/include/fields.lua).
const traceField = "tp"

// appendTraceField appends the workflow field of traceparent tp to a
// submit's workflow fields, when there is one.
func appendTraceField(fields []any, tp string) []any {
	if tp == "" {
		return fields
	}
	return append(fields, traceField, tp)
}

// appendEnqueueTraced validates p and appends its enqueue.lua arguments
// to args: appendEnqueue's, then the traceparent ("" for none).
func (pt *part) appendEnqueueTraced(args []any, p engine.EnqueueParams) ([]any, error) {
	if err := engine.ValidateTraceParent(p.TraceParent); err != nil {
		return nil, err
	}
	args, err := pt.appendEnqueue(args, p.Job)
	if err != nil {
		return nil, err
	}
	return append(args, p.TraceParent), nil
}

// claimedTail reads the optional fields that end a Claimed's packed
// value (codec.go's claimed), each starting with a letter:
// "t<traceparent>" (lua/include/trace.lua), "r<ready-at ms>[:<dependency
// end ms>]" (lua/include/ready.lua).
func (r *reader) claimedTail(c *engine.Claimed) {
	for r.more() {
		v := r.str()
		switch {
		case strings.HasPrefix(v, "t"):
			c.TraceParent = v[1:]
		case strings.HasPrefix(v, "r"):
			// "<ms>", or "<ms>:<ms>" for a promotion (ready.lua)
			rd, dep, promoted := strings.Cut(v[1:], ":")
			ms, err := parseInt(rd)
			dms := int64(0)
			if err == nil && promoted {
				dms, err = parseInt(dep)
			}
			if err != nil {
				r.fail("ready-at %q is not <ms> or <ms>:<ms>", v[1:])
			}
			c.ReadyAt, c.PromotedAfter = toTime(ms), toTime(dms)
		default:
			r.fail("unknown field %q at the end of a Claimed", v)
		}
	}
}
