-- weir2_cancel_workflow: Cancels a running workflow: tasks that have not
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
--!include cascade.lua
--!include waiters.lua
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
wset(w, W_CANCEL, '1')
local undo = ARGV[5]
if undo == '' then undo = wget(w, W_UNDO_ON_CANCEL) end
if undo == '1' then wset(w, W_CANCEL_UNDO, '1') end
wset(w, W_CANCEL_AT, NOW_S)
local S = states_read(w)
local fx = {pushed = {}, cancelled = {}}
local stopping = {}
local pos = string.find(S, 'r', 1, true)
while pos do
  local j = task_job(w, pos)
  jset(j, F_CANCEL, '1')
  stopping[#stopping + 1] = job_id(j)
  pos = string.find(S, 'r', pos + 1, true)
end
-- queued tasks (and open signal tasks, which may wait in a delayed set)
-- leave their queues, at most the call's budget of them here (left: where
-- the rest starts)
local left = nil
pos = string.find(S, '[qo]')
while pos do
  if BUDGET <= 0 then
    left = pos
    break
  end
  BUDGET = BUDGET - 1
  local j = task_job(w, pos)
  unqueue(j)
  jdel(j, F_RUN_AT)
  pos = string.find(S, '[qo]', pos + 1)
end
-- every waiting, queued or open task ends cancelled ("W"), in one pass
local newS, k = string.gsub(S, '[wqo]', 'W')
if k > 0 and EV.cfg ~= 'off' then
  -- their events, in plan order: the names are the workflow's list
  local x, names = 0, wget(w, W_NAMES) or ''
  for name in string.gmatch(names, '[^\n]+') do
    x = x + 1
    local b = string.byte(S, x)
    if b == 119 or b == 113 or b == 111 then EV.add('cancelled', id .. '/' .. name, 0, 'workflow cancelled') end
  end
end
w.S = newS
w.sfull = true
states_dirty(w)
if k > 0 and awaited(P .. 'await:wj:' .. id) then
  pos = string.find(S, '[wqo]')
  while pos do
    -- marked for its waiters only: in no job list (lists.lua)
    local j = task_job(w, pos)
    j.unlisted = true
    mark_ended(j)
    pos = string.find(S, '[wqo]', pos + 1)
  end
end
local rem = redis.call('HINCRBY', w.key, W_REMAINING, fmt(-k))
w.m[W_REMAINING] = fmt(rem)
if left then
  -- the rest leave their queues in drain calls, which then decide the
  -- workflow's end (drain.lua, unqueue_rest)
  local rest = {}
  while left do
    rest[#rest + 1] = fmt(left)
    left = string.find(S, '[qo]', left + 1)
  end
  keep_work('k', 'q', 'w', w.id, 'l', join(rest, ','))
elseif rem == 0 then
  tasks_all_ended(w, fx)
end
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
