-- weir3_cancel_workflow: Cancels a running workflow: tasks that have not
-- started end cancelled (Always ones too), running ones are told to stop;
-- the workflow ends (or compensates) once none runs.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  workflow ID
-- ARGV[5]  undo: "1", "0", or "" for the workflow's UndoOnCancel
-- Reply:   wfState, states, names, nStopping, id*, nPushed, (id, queue)*:
--          states is the task-state string before the cancel and names the
--          workflow's task names ("" both when nothing was cancelled): the
--          cancelled tasks are those that were waiting (w), queued (q) or
--          open (o),
--          in plan order; then "P" when it left queued tasks to take out
--          of their queues, or the compensation it started ran out of the
--          call's budget (drain the rest)
-- Errors:  NOTFOUND; WFENDED <state> (the 2nd word is the workflow's state);
--          PENDING (drain.lua: drain, then send the call again)
-- Publishes: the running tasks' IDs on P stop (finalize.lua, publish_stops)
--
--!include call.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include cancel.lua
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
local w = load_wf(id)
if not w then return redis.error_reply('NOTFOUND workflow "' .. id .. '"') end
local st = wget(w, W_STATE)
if wf_ended_state(st) then
  return redis.error_reply('WFENDED ' .. st .. ' workflow "' .. id .. '" has ended')
end
if wflag(w, W_CANCEL) or st == 'compensating' then return {st, '', '', '0', '0'} end
local undo = ARGV[5]
if undo == '' then undo = wget(w, W_UNDO_ON_CANCEL) or '0' end
local fx = {pushed = {}, cancelled = {}}
local stopping = {}
local S, k = CANCEL.workflow(w, undo, 'W', fx, stopping)
local out = {wget(w, W_STATE), '', ''}
if k > 0 then
  out[2] = S
  out[3] = wget(w, W_NAMES)
end
finalize()
publish_stops(stopping)
put_list(out, stopping, 1)
put_list(out, fx.pushed, 2)
if CALL.stopped then out[#out + 1] = 'P' end
return out
