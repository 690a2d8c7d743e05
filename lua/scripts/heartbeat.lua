-- weir1_heartbeat: Extends many leases to now + extend and says, per lease, whether it
-- is lost and whether its job should stop.
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] extend ms
-- ARGV[5 ..] jobID, token, ...
-- Reply: per lease {lost "1"|"", cancel "1"|"", deadline ms}

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
allow_full()
local ext = tonumber(ARGV[4])
local out = {}
for b = 5, #ARGV, 2 do
  local j = load_job(ARGV[b])
  if not j or jstate(j) ~= 'running' or jget(j, 'tk') ~= ARGV[b + 1] then
    append(out, {'1', '', '0'})
  else
    local dl = NOW + ext
    -- a shorter lease than before lowers the queue's due hint
    if dl < num(jget(j, 'dl')) then note_due(jattr(j).q, dl) end
    jset(j, 'dl', fmt(dl))
    zadd(qkey(jattr(j).q, 'a'), dl, j.id)
    append(out, {'', jget(j, 'cr') or '', fmt(dl)})
  end
end
finalize()
return out
