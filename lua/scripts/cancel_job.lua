-- weir1_cancel_job: Cancels one job: a waiting, queued or pending one ends cancelled with
-- the consequences of a cancelled task (or undo); a running one is told to
-- stop.
--
-- KEYS[1] weir:{<ns>:<p>}:         partition prefix; other keys derive from it
-- KEYS[2] weir:{<ns>:<p>}:seq      hash: now (last now, ms), push and lease counters
-- KEYS[3] weir:{<ns>:<p>}:queues   hash: queue name -> "0" | "1" (paused)
-- KEYS[4] weir:{<ns>:<p>}:wf       zset: every workflow, member <created15>:<id>
-- KEYS[5] weir:{<ns>:<p>}:expiry   zset: ended records by removal time
-- ARGV[1] test clock now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms
-- ARGV[4] job ID
-- Reply: {state, wfState, nCancelled, id*, nStopping, id*, nPushed, (id, queue)*}
-- Errors: NOTFOUND; JOBENDED <state> (the 2nd word is the job's state)

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
allow_full()
local id = ARGV[4]
local j = load_job(id)
if not j then
  save_clock()
  return redis.error_reply('NOTFOUND job "' .. id .. '"')
end
local st = jstate(j)
if st == 'completed' or st == 'failed' or st == 'cancelled' then
  save_clock()
  return redis.error_reply('JOBENDED ' .. st .. ' job "' .. id .. '" has ended')
end
local fx = new_fx()
local stopping = {}
if st == 'running' then
  jset(j, 'cr', '1')
  stopping[1] = j.id
else
  cancel_task(j, 'cancelled', fx)
  after_end(j, fx)
end
local out = {jstate(j), ''}
if j.wf then out[2] = hget(j.wf.key, 'st') end
finalize()
put_list(out, fx.cancelled, 1)
put_list(out, stopping, 1)
put_list(out, fx.pushed, 2)
return out
