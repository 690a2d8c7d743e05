-- weir1_purge: Cancels every job waiting in a queue: the ready ones in claim order,
-- then the delayed ones in due order, each with the consequences of a
-- cancel (reason "purged"). Jobs pushed by those consequences stay.
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] queue name
-- Reply: {nPurged, id*, nPushed, (id, queue)*}

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
allow_full()
local q = ARGV[4]
if not hget(K_QUEUES, q) then
  save_clock()
  return {'0', '0'}
end
local rk, dk = qkey(q, 'r'), qkey(q, 'd')
zflush(rk)
zflush(dk)
local ids = redis.call('ZRANGE', rk, 0, -1)
for _, id in ipairs(redis.call('ZRANGE', dk, 0, -1)) do ids[#ids + 1] = id end
local fx = new_fx()
local purged = {}
for _, id in ipairs(ids) do
  local j = load_job(id)
  if j and jstate(j) == 'queued' then
    cancel_task(j, 'purged', fx)
    after_end(j, fx)
    purged[#purged + 1] = id
  end
end
finalize()
local out = {}
put_list(out, purged, 1)
put_list(out, fx.pushed, 2)
return out
