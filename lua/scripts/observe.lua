-- weir1_observe: Reads, at one instant, what queues, get_workflow and
-- get_job read, for many IDs and queues (the conformance suite's reads; not
-- a transition).
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] number of workflow IDs, then the IDs; then the number of job IDs,
--         then the IDs; then the number of queues, then their names
-- Reply: {queues reply}; then per workflow 0 (not found) or its hash
--        followed by "S" and the task states; then per job 0 or its
--        snapshot; then per queue its ready, delayed and running sets
-- Errors: none of its own

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
save_clock()
IGNORE_EXPIRY = false
local a = 4
local function nextarg() local v = ARGV[a]; a = a + 1; return v end
local res = {}
res[#res + 1] = queues_reply()
for _ = 1, tonumber(nextarg()) do
  local w = load_wf(nextarg())
  if not w then
    res[#res + 1] = 0
  else
    -- the whole hashes at once: the snapshots of its jobs read them all
    hload(w.key)
    hload(w.pkey)
    hload(w.ikey)
    local out = redis.call('HGETALL', w.key)
    out[#out + 1] = 'S'
    out[#out + 1] = wS(w)
    res[#res + 1] = out
  end
end
for _ = 1, tonumber(nextarg()) do
  local j = load_job(nextarg())
  if not j then
    res[#res + 1] = 0
  else
    local out = {}
    put_snapshot(out, j)
    res[#res + 1] = out
  end
end
for _ = 1, tonumber(nextarg()) do
  local q = nextarg()
  for _, kind in ipairs({'r', 'd', 'a'}) do
    res[#res + 1] = redis.call('ZRANGE', qkey(q, kind), 0, -1)
  end
end
return res
