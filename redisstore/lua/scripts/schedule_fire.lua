-- weir3_schedule_fire: Fires one tick of a schedule (engine.FireScheduleParams).
-- Fenced: unless the schedule is at the revision given, not paused, and its
-- next tick is still the tick given, nothing changes (reply "stale"), so
-- of several workers firing one tick one does it. With no tick to fire it
-- only moves the schedule on ("skipped", or "overlap" when the caller
-- found the last workflow running). A job schedule then skips the tick
-- under the overlap policy "skip" while its last fired job has not ended
-- ("overlap"), or enqueues the tick's job as enqueue.lua would (a job
-- already under the tick's ID is the tick's: nothing written, created
-- ""); a workflow schedule records the workflow the caller submitted.
-- Every outcome but "stale" sets the next tick.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  schedule name
-- ARGV[5]  revision (fence)
-- ARGV[6]  tick, ms (fence: the schedule's next tick as read)
-- ARGV[7]  tick fired, ms; "0" fires none
-- ARGV[8]  next tick, ms; "0" when it ticks no more
-- ARGV[9]  "1": overlap (with no tick fired)
-- ARGV[10] the fired tick's ID (its job's, or the submitted workflow's)
-- ARGV[11] "1" with a job, then ARGV[12..20] its 9 values as enqueue.lua
--          (its ID is ARGV[10]; run-at and unique are not used)
-- Reply:   outcome ("fired", "skipped", "overlap", "stale"), ID, created
--          ("1" or ""); or "KIND", "1" (a job schedule) or "" (a workflow
--          schedule) when the fire's target is not of the schedule's kind
--          (nothing written)
-- Errors:  NOTFOUND
--
--!include call.lua
--!include job.lua
--!include queue.lua
--!include plain.lua
--!include finalize.lua

begin(KEYS, ARGV)
local name, key = ARGV[4], P .. 's:' .. ARGV[4]
read_clock()
local v = redis.call('HMGET', key, 'r', 'p', 'n', 'k', 'li', 'o')
if not v[1] then
  return redis.error_reply('NOTFOUND schedule "' .. name .. '"')
end
if v[1] ~= ARGV[5] or v[2] == '1' or v[3] ~= ARGV[6] then
  return {'stale', '', ''}
end
local nx = ARGV[8]
local fire = ARGV[7]
if fire == '0' then
  redis.call('HSET', key, 'n', nx)
  redis.call('ZADD', P .. 'sched', (nx == '0' and '+inf' or nx), name)
  finalize()
  if ARGV[9] == '1' then return {'overlap', '', ''} end
  return {'skipped', '', ''}
end
local has_job = ARGV[11] == '1'
if has_job ~= (v[4] == 'j') then
  if v[4] == 'j' then return {'KIND', '1'} end
  return {'KIND', ''}
end
local id = ARGV[10]
local created = ''
if has_job then
  if v[5] and v[6] == 'skip' then
    local last = redis.call('HMGET', P .. 'j:' .. v[5], F_STATE, F_ENDED)
    local st = last[1]
    if st and st ~= 'completed' and st ~= 'failed' and st ~= 'cancelled' then
      redis.call('HSET', key, 'n', nx)
      redis.call('ZADD', P .. 'sched', (nx == '0' and '+inf' or nx), name)
      finalize()
      return {'overlap', '', ''}
    end
  end
  local b = 12
  local jkey = P .. 'j:' .. id
  local old = redis.call('HMGET', jkey, F_STATE, F_ENDED)
  if not old[1] or plain_expired(old[2]) then
    if old[1] then
      -- the old record's retention passed: it goes first
      redis.call('ZREM', K_EXPIRY, 'j:' .. id)
      redis.call('UNLINK', jkey)
    end
    write_plain(ARGV, id, jkey, b, 0, {})
    created = '1'
  end
end
redis.call('HSET', key, 'n', nx, 'lt', fire, 'li', id)
redis.call('ZADD', P .. 'sched', (nx == '0' and '+inf' or nx), name)
finalize()
return {'fired', id, created}
