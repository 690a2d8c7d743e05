-- weir3_rate_limit_queue: Sets how many jobs of a queue may start in any
-- window of a period across every worker (making the queue known when it
-- is not); its concurrency limit stays as it is. A new period, or no
-- limit, deletes the starts counted so far (q:<queue>:starts); a new limit
-- of the same period keeps them. Any change pushes wake-up tokens for the
-- jobs ready in the queue, so blocked claims learn the new limit.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  queue name
-- ARGV[5]  the limit, 1 to engine.MaxRateLimit, or "0" for none
-- ARGV[6]  the period in ms (engine.MinRatePeriod to MaxRatePeriod), or
--          "0" with no limit
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
local old = qstate(q).rl
local new = ARGV[5] ~= '0' and (ARGV[5] .. ':' .. ARGV[6]) or false
if old ~= new then
  qs_set(q, 'rl', new)
  -- "<n>:<period>[:<held until>]": a new period, or none, counts afresh
  if not new or not old or string.match(old, '^%d+:(%d+)') ~= ARGV[6] then
    redis.call('DEL', qkey(q, 'starts'))
  end
  local n = READY.count(q)
  if n > 0 then wake(q, n) end
end
finalize()
return {'OK'}
