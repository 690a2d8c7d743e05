-- weir3_drain: Goes on with the cascade an earlier call left when it ran
-- out of its budget (spec/scripts.md, Cascades in bounded steps), within
-- this call's.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4 ..] none
-- Reply:   "1" when some is still left else "", workflow ID, its state,
--          "1" when this call ended it, nPushed, (id, queue)*,
--          nCancelled, id*
--
--!include call.lua
--!include drain.lua
--!include reply.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
allow_full()
-- removals are left to other calls (finalize.lua)
CALL.no_gc = true
local out = {'', '', '', ''}
if PENDING then
  local fx = {}
  local w = drain_work(fx)
  out[1] = PENDING and '1' or ''
  if w then
    out[2], out[3], out[4] = w.id, wget(w, W_STATE), fx.wf_ended and '1' or ''
  end
  finalize()
  put_list(out, fx.pushed, 2)
  put_list(out, fx.cancelled, 1)
  return out
end
finalize()
out[5], out[6] = '0', '0'
return out
