-- weir3_schedule_put: Creates a schedule, or replaces the spec of one
-- (which keeps its paused flag and its last tick); its next tick becomes
-- the one given.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  schedule name
-- ARGV[5]  spec (JSON, engine.EncodeScheduleSpec; stored, never read here)
-- ARGV[6]  "j" a job schedule, "w" a workflow schedule
-- ARGV[7]  next tick, ms
-- ARGV[8]  most schedules a partition holds (engine.MaxSchedules)
-- ARGV[9]  overlap policy ("allow" or "skip", resolved)
-- Publishes the name on P schedules (redisstore.Store.WatchSchedules).
-- Reply:   created ("1" or ""), revision; or "LIMIT" when the partition
--          holds the most schedules already (nothing written)
--
--!include call.lua
--!include finalize.lua

begin(KEYS, ARGV)
local name, key = ARGV[4], P .. 's:' .. ARGV[4]
read_clock()
local v = redis.call('HMGET', key, 'r', 'p')
if not v[1] and redis.call('ZCARD', P .. 'sched') >= tonumber(ARGV[8]) then
  return {'LIMIT'}
end
local rev = (tonumber(v[1]) or 0) + 1
redis.call('HSET', key, 'd', ARGV[5], 'k', ARGV[6], 'o', ARGV[9], 'r', fmt(rev), 'n', ARGV[7])
redis.call('ZADD', P .. 'sched', ((v[2] == '1' or ARGV[7] == '0') and '+inf' or ARGV[7]), name)
finalize()
-- workers sleeping until their earliest tick read the schedules again
redis.call('PUBLISH', P .. 'schedules', name)
if v[1] then return {'', fmt(rev)} end
return {'1', fmt(rev)}
