-- weir3_schedule_list: Reads one schedule, or every schedule of the
-- partition (at most engine.MaxSchedules). Read-only.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  schedule name, or "" for every schedule
-- Reply:   the store's now (ms, as every transition reads it), count, then
--          per schedule 7 strings: name, spec (JSON),
--          revision, paused ("1" or ""), next tick ms ("0": none), last
--          fired tick ms ("" before the first), last fired ID
-- Errors:  NOTFOUND (a named schedule)
--
--!include call.lua

begin(KEYS, ARGV)
read_clock()
local names
if ARGV[4] ~= '' then
  names = {ARGV[4]}
else
  names = redis.call('ZRANGE', P .. 'sched', 0, -1)
end
local out = {NOW_S, 0}
for _, name in ipairs(names) do
  local v = redis.call('HMGET', P .. 's:' .. name, 'd', 'r', 'p', 'n', 'lt', 'li')
  if v[1] then
    out[2] = out[2] + 1
    out[#out + 1] = name
    for i = 1, 6 do out[#out + 1] = v[i] or '' end
  elseif ARGV[4] ~= '' then
    return redis.error_reply('NOTFOUND schedule "' .. name .. '"')
  end
end
return out
