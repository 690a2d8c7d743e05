-- weir1_expire: Sweeps every queue, by name: leases whose deadline is not after now
-- end their attempt as failed ("lease_expired"), then due delayed jobs
-- become ready; at most max of each per queue.
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] max per queue
-- Reply: {nExpired, Settled*, nDue, (jobID, queue)*}

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
allow_full()
local max = tonumber(ARGV[4])
local names = redis.call('HKEYS', K_QUEUES)
table.sort(names)
local res = {expired = {}, due = {}}
for _, q in ipairs(names) do sweep(q, max, res) end
finalize()
local out = {fmt(#res.expired)}
for _, s in ipairs(res.expired) do put_settled(out, s) end
put_list(out, res.due, 2)
return out
