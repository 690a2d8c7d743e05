-- trace.lua: the trace context stored with a workflow or a plain job
-- (field tp, spec/keys.md), handed back with each claim of its jobs.
--
--!include call.lua

-- put_trace ends a Claimed (lease.lua) with "@t<traceparent>" when the job
-- has a trace context (tp, from the hash the claim read anyway), and with
-- nothing otherwise: a job without one costs no read and no reply value.
-- No job ID starts with "@", so the reader tells it from the next Claimed.
local function put_trace(out, tp)
  if tp then out[#out + 1] = '@t' .. tp end
end
