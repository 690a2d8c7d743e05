-- weir3_pause: Pauses or resumes a queue (making it known when it is not).
-- Resuming pushes wake-up tokens for the jobs ready in it.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  queue name
-- ARGV[5]  "1" pause, "0" resume
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
redis.call('HSET', K_QUEUES, q, ARGV[5])
if ARGV[5] == '1' then
  qs_set(q, 'p', '1')
else
  qs_set(q, 'p', false)
  local n = READY.count(q) + redis.call('ZCARD', qkey(q, 'kr'))
  if n > 0 then wake(q, n) end
end
finalize()
return {'OK'}
