-- weir3_schedule_delete: Removes a schedule (not the jobs or workflows it
-- started).
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  schedule name
-- Reply:   "OK" (a one-item array)
-- Errors:  NOTFOUND
--
--!include call.lua
--!include finalize.lua

begin(KEYS, ARGV)
local name = ARGV[4]
read_clock()
allow_full()
if redis.call('EXISTS', P .. 's:' .. name) == 0 then
  return redis.error_reply('NOTFOUND schedule "' .. name .. '"')
end
redis.call('DEL', P .. 's:' .. name)
redis.call('ZREM', P .. 'sched', name)
finalize()
return {'OK'}
