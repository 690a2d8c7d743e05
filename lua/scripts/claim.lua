-- weir1_claim: Leases up to max jobs from the queues, in order, skipping paused and
-- unknown queues; sweeps each queue first (expired leases, due delayed
-- jobs, at most 100 of each). Clears the wake-up list of a queue it empties.
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] max jobs
-- ARGV[5] lease ms
-- ARGV[6] wait ms, or "" / "0": when nothing is claimed and it is positive,
--         also return the next due time, and register the caller as waiting
--         on each known queue until now + wait (seq field w:<queue>), so
--         that pushes write wake-up tokens meanwhile
-- ARGV[7 ..] queue names
-- Reply: {now, next due ms or "0", nClaimed, Claimed*}
--   Claimed = job snapshot (23 strings, see reply.lua) + nDeps + 5 strings per dep

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

local queues, wfields = {}, {}
for i = 7, #ARGV do
  queues[#queues + 1] = ARGV[i]
  wfields[#wfields + 1] = wq(ARGV[i])
  wfields[#wfields + 1] = 'n:' .. ARGV[i]
  wfields[#wfields + 1] = 'k:' .. ARGV[i]
end
read_clock(wfields)
local out = {}
local n = claim(queues, tonumber(ARGV[4]), tonumber(ARGV[5]), out)
local nd = 0
local wait = tonumber(ARGV[6]) or 0
if n == 0 and wait > 0 then
  nd = next_due(queues)
  local till = NOW + wait
  for _, q in ipairs(queues) do
    if hget(K_QUEUES, q) and num(hget(K_SEQ, wq(q))) < till then hset(K_SEQ, wq(q), fmt(till)) end
  end
end
finalize()
local r = {NOW_S, fmt(nd), fmt(n)}
append(r, out)
return r
