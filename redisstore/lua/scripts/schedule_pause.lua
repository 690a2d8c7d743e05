-- weir3_schedule_pause: Pauses or resumes a schedule. A paused schedule
-- leaves the due part of the index (score '+inf'); a resumed one goes
-- back at its next tick, which may have passed (the missed-tick policy
-- then applies at its fire).
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  schedule name
-- ARGV[5]  "1" pause, "0" resume
-- A resume publishes the name on P schedules (redisstore.Store.WatchSchedules).
-- Reply:   "OK" (a one-item array)
-- Errors:  NOTFOUND
--
--!include call.lua
--!include finalize.lua

begin(KEYS, ARGV)
local name, key = ARGV[4], P .. 's:' .. ARGV[4]
read_clock()
allow_full()
local n = redis.call('HGET', key, 'n')
if not n then
  return redis.error_reply('NOTFOUND schedule "' .. name .. '"')
end
if ARGV[5] == '1' then
  redis.call('HSET', key, 'p', '1')
else
  redis.call('HDEL', key, 'p')
end
redis.call('ZADD', P .. 'sched', ((ARGV[5] == '1' or n == '0') and '+inf' or n), name)
finalize()
if ARGV[5] == '0' then
  -- workers sleeping until their earliest tick read the schedules again
  redis.call('PUBLISH', P .. 'schedules', name)
end
return {'OK'}
