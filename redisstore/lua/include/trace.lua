-- trace.lua: the trace context stored with a workflow or a plain job
-- (field tp, spec/keys.md), handed back with each claim of its jobs.
--
--!include call.lua

-- trace_tail is the end of a packed Claimed (lease.lua's put_claimed)
-- that gives the job's trace context: "\nt<traceparent>" when it has one
-- (tp, from the hash the claim read anyway), else "": a job without one
-- costs no read and no reply value.
local function trace_tail(tp)
  if tp then return '\nt' .. tp end
  return ''
end
