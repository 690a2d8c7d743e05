-- weir3_cancel_job: Cancels one job: a waiting, queued or pending one ends
-- cancelled with the consequences of a cancelled task (or undo); a running
-- one is told to stop.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  job ID
-- Reply:   state, wfState, nCancelled, id*, nStopping, id*, nPushed, (id, queue)*
--          then "P" when its cascade ran out of the call's budget (drain
--          the rest)
-- Errors:  NOTFOUND; JOBENDED <state> (the 2nd word is the job's state);
--          PENDING (drain.lua: drain, then send the call again)
-- Publishes: a running job's ID on P stop (finalize.lua, publish_stops)
--
--!include call.lua
--!include job.lua
--!include cascade.lua
--!include settle.lua
--!include reply.lua
--!include drain.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
allow_full()
if not drain_first() then
  finalize()
  return redis.error_reply(PENDING_REPLY)
end
local id = ARGV[4]
local j = load_job(id)
if not j then return redis.error_reply('NOTFOUND job "' .. id .. '"') end
local st = job_state(j)
if ended_state(st) then
  return redis.error_reply('JOBENDED ' .. st .. ' job "' .. id .. '" has ended')
end
local fx = {pushed = {}, cancelled = {}}
local stopping = {}
if st == 'running' then
  jset(j, F_CANCEL, '1')
  stopping[1] = id
else
  cancel_task(j, 'cancelled', fx)
  after_end(j, fx)
end
local out = {job_state(j), ''}
if j.wf then out[2] = wget(j.wf, W_STATE) end
finalize()
publish_stops(stopping)
put_list(out, fx.cancelled, 1)
put_list(out, stopping, 1)
put_list(out, fx.pushed, 2)
if CALL.stopped then out[#out + 1] = 'P' end
return out
