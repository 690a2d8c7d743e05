-- weir3_limit_queue: Sets how many jobs of a queue may be leased at once
-- across every worker (making the queue known when it is not). Raising or
-- removing the limit pushes wake-up tokens for the jobs ready in it.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  queue name
-- ARGV[5]  the limit, 1 to engine.MaxConcurrency, or "0" for none
-- Reply:   "OK" (a one-item array)
--
--!include call.lua
--!include queue.lua
--!include finalize.lua

begin(KEYS, ARGV)
local q = ARGV[4]
read_clock()
allow_full()
register_queue(q)
local old = tonumber(qstate(q).c) or 0
local new = tonumber(ARGV[5])
qs_set(q, 'c', new > 0 and ARGV[5] or false)
if old > 0 and (new == 0 or new > old) then
  local n = READY.count(q) + redis.call('ZCARD', qkey(q, 'kr'))
  if n > 0 then wake(q, n) end
end
finalize()
return {'OK'}
