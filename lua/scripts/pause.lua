-- weir1_pause: Pauses or resumes a queue (creating it when unknown). Resuming pushes
-- wake-up tokens for the jobs ready in it.
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
-- ARGV[5] "1" pause, "0" resume
-- Reply: "OK"

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
local q = ARGV[4]
hset(K_QUEUES, q, ARGV[5])
if ARGV[5] == '0' then
  local n = redis.call('ZCARD', qkey(q, 'r'))
  if n > 0 then wake(q, n) end
end
finalize()
return 'OK'
