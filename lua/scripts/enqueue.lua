-- weir1_enqueue: Writes a plain job and pushes it, or delays it until its runAt.
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] job ID (no '/')
-- ARGV[5] queue
-- ARGV[6] "1" when a payload is given (even empty), else ""
-- ARGV[7] payload bytes
-- ARGV[8] priority
-- ARGV[9] max attempts (default applied)
-- ARGV[10] backoff ms (default applied)
-- ARGV[11] timeout ms
-- ARGV[12] runAt ms, 0 for now
-- ARGV[13] spec hash (RunAt excluded)
-- Reply: {created "1" | "", state}
-- Errors: JOBEXISTS (another spec under this ID)

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock({wq(ARGV[5]), 'n:' .. ARGV[5]})
local id, hash = ARGV[4], ARGV[13]
local key = P .. 'j:' .. id
if hload(key) then
  if not expired(key) then
    save_clock()
    if hget(key, 'h') == hash then return {'', hget(key, 's')} end
    return redis.error_reply('JOBEXISTS job "' .. id .. '" exists with a different spec')
  end
  redis.call('ZREM', K_EXPIRY, 'j:' .. id)
  redis.call('UNLINK', key)
  forget(key)
  C[key] = {}
  FULL[key] = true
end
JOBS[id] = nil
local fields = {'q', ARGV[5], 'pr', ARGV[8], 'ma', ARGV[9], 'bo', ARGV[10], 'to', ARGV[11], 'h', hash, 'c', NOW_S}
if ARGV[6] == '1' then
  fields[#fields + 1] = 'p'
  fields[#fields + 1] = ARGV[7]
end
for i = 1, #fields, 2 do hset(key, fields[i], fields[i + 1]) end
if tonumber(ARGV[12]) ~= 0 then hset(key, 'ra', ARGV[12]) end
local j = {id = id, kind = 'j', key = key, pre = ''}
JOBS[id] = j
push(j, new_fx())
local st = jstate(j)
finalize()
return {'1', st}
