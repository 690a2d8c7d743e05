-- waiters.lua: whether anybody awaits a record (spec/scripts.md, Await).
--
--!include call.lua

-- awaited reports whether the waiter set key exists (Go removes a waiter's
-- member when it stops waiting, and the set's TTL drops the members of
-- waiters that crashed). The zset wait:any (one member per waiting call)
-- spares the look-up while nobody waits at all; both answers are kept for
-- the call.
local function awaited(key)
  local any = CALL.any_wait
  if any == nil then
    any = redis.call('ZCARD', P .. 'wait:any') > 0
    CALL.any_wait = any
  end
  if not any then return false end
  local c = bag('waitc')
  local v = c[key]
  if v == nil then
    v = redis.call('EXISTS', key) == 1
    c[key] = v
  end
  return v
end
