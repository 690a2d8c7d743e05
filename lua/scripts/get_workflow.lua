-- weir1_get_workflow: Reads a workflow record (every field of its hash).
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
-- ARGV[5] "1": return it even when its retention passed (awaits)
-- Reply: flat field/value list of the workflow hash (spec/keys.md), then
--   "S" and the task-state string
-- Errors: NOTFOUND

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
save_clock()
IGNORE_EXPIRY = ARGV[5] == '1'
local w = load_wf(ARGV[4])
if not w then return redis.error_reply('NOTFOUND workflow "' .. ARGV[4] .. '"') end
local out = redis.call('HGETALL', w.key)
out[#out + 1] = 'S'
out[#out + 1] = wS(w)
return out
