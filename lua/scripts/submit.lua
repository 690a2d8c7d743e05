-- weir1_submit: Writes a workflow and pushes its root tasks, in plan order.
-- The plan was validated and hashed in Go; its fields come ready to store.
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] workflow ID
-- ARGV[5] plan hash (hex)
-- ARGV[6] task count n
-- ARGV[7] "i": the fields follow inline; "s": they were staged in
--         stage:<id>:<hash>, its :p and its :i (then m = k = x = 0)
-- ARGV[8] m: count of the workflow-hash field/value strings that follow
-- ARGV[9 .. 8+m] field, value, ... (meta fields, and t<i> the spec of task i)
-- then k: count of payload-hash field/value strings, and those strings
--   ("<i>" task payload, "u<i>" undo payload)
-- then x: count of index-hash field/value strings, and those (name, index)
-- then the indices (1-based) of the root tasks, in plan order
-- Reply: {created "1" | "", nPushed, (jobID, queue)*}, or {"R"} when the
--   staged fields are gone (the caller stages again)
-- Errors: WFEXISTS (another plan under this ID)

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
local id, hash, n = ARGV[4], ARGV[5], tonumber(ARGV[6])
local key = P .. 'w:' .. id
local pkey, skey, ikey = key .. ':p', key .. ':s', key .. ':i'
local stage = P .. 'stage:' .. id .. ':' .. hash
local pstage = P .. 'stage:' .. id .. ':' .. hash .. ':p'
local istage = P .. 'stage:' .. id .. ':' .. hash .. ':i'
if hget(key, 'st') then
  if not expired(key) then
    save_clock()
    if ARGV[7] == 's' then redis.call('UNLINK', stage, pstage, istage) end
    if hget(key, 'h') == hash then return {'', '0'} end
    return redis.error_reply('WFEXISTS workflow "' .. id .. '" exists with a different plan')
  end
end
if ARGV[7] == 's' and (redis.call('EXISTS', stage) == 0 or redis.call('EXISTS', istage) == 0) then
  save_clock()
  return {'R'}
end
if hget(key, 'st') then
  -- the old record's retention passed: remove it and its index entries
  local st, c = hget(key, 'st'), pad15(num(hget(key, 'c')))
  redis.call('ZREM', K_WF, c .. ':' .. id)
  redis.call('ZREM', P .. 'wf:' .. st, c .. ':' .. id)
  redis.call('ZREM', K_EXPIRY, 'w:' .. st .. ':' .. c .. ':' .. id)
  redis.call('UNLINK', key, pkey, skey, ikey)
end
forget(key)
forget(pkey)
WFS[id] = nil
local m = tonumber(ARGV[8])
local a = 9
if ARGV[7] == 's' then
  redis.call('RENAME', stage, key)
  redis.call('PERSIST', key)
  if redis.call('EXISTS', pstage) == 1 then
    redis.call('RENAME', pstage, pkey)
    redis.call('PERSIST', pkey)
  end
  redis.call('RENAME', istage, ikey)
  redis.call('PERSIST', ikey)
end
for i = a, a + m - 1, 1000 do
  redis.call('HSET', key, unpack(ARGV, i, math.min(i + 999, a + m - 1)))
end
a = a + m
local k = tonumber(ARGV[a])
a = a + 1
for i = a, a + k - 1, 1000 do
  redis.call('HSET', pkey, unpack(ARGV, i, math.min(i + 999, a + k - 1)))
end
a = a + k
local x = tonumber(ARGV[a])
a = a + 1
for i = a, a + x - 1, 1000 do
  redis.call('HSET', ikey, unpack(ARGV, i, math.min(i + 999, a + x - 1)))
end
a = a + x
hset(key, 'c', NOW_S)
local member = pad15(NOW) .. ':' .. id
zadd(K_WF, 0, member)
zadd(P .. 'wf:running', 0, member)
local w = load_wf(id)
w.S = string.rep('w', n)
w.sfull = true
w.sdirty = true
SDIRTY[#SDIRTY + 1] = w
local fx = new_fx()
for i = a, #ARGV do push(tjob(w, tonumber(ARGV[i])), fx) end
finalize()
local out = {'1'}
put_list(out, fx.pushed, 2)
return out
