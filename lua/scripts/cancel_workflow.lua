-- weir1_cancel_workflow: Cancels a running workflow: tasks that have not started end
-- cancelled (Always ones too), running ones are told to stop; the workflow
-- ends (or compensates) once none runs.
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
-- ARGV[5] undo: "1", "0", or "" for the workflow's UndoOnCancel
-- Reply: {wfState, states, names, nStopping, id*, nPushed, (id, queue)*}
--   states: the task-state string before the cancel and names the
--   workflow's task names ("" when nothing was cancelled): the cancelled
--   tasks are those that were waiting (w) or queued (q), in plan order.
-- Errors: NOTFOUND; WFENDED <state> (the 2nd word is the workflow's state)

--!include core.lua
--!include jobs.lua
--!include workflow.lua
--!include reply.lua
--!include finalize.lua

read_clock()
allow_full()
local id = ARGV[4]
local w = load_wf(id)
if not w then
  save_clock()
  return redis.error_reply('NOTFOUND workflow "' .. id .. '"')
end
local st = hget(w.key, 'st')
if wf_ended_state(st) then
  save_clock()
  return redis.error_reply('WFENDED ' .. st .. ' workflow "' .. id .. '" has ended')
end
if hget(w.key, 'cr') == '1' or st == 'compensating' then
  save_clock()
  return {st, '', '', '0', '0'}
end
hset(w.key, 'cr', '1')
local undo = ARGV[5]
if undo == '' then undo = hget(w.key, 'uoc') end
if undo == '1' then hset(w.key, 'cu', '1') end
hset(w.key, 'cat', NOW_S)
local S = wS(w)
local fx = new_fx()
local stopping = {}
local pos = string.find(S, 'r', 1, true)
while pos do
  local j = tjob(w, pos)
  jset(j, 'cr', '1')
  stopping[#stopping + 1] = j.id
  pos = string.find(S, 'r', pos + 1, true)
end
pos = string.find(S, 'q', 1, true)
while pos do
  local j = tjob(w, pos)
  unqueue(j)
  if jget(j, 'ra') then jset(j, 'ra', nil) end
  pos = string.find(S, 'q', pos + 1, true)
end
-- every waiting or queued task ends cancelled ("W"), in one pass
local newS, k = string.gsub(S, '[wq]', 'W')
w.S = newS
w.sfull = true
if not w.sdirty then
  w.sdirty = true
  SDIRTY[#SDIRTY + 1] = w
end
if k > 0 and awaited(P .. 'wait:wj:' .. id) then
  pos = string.find(S, '[wq]')
  while pos do
    mark_ended(tjob(w, pos))
    pos = string.find(S, '[wq]', pos + 1)
  end
end
local rem = num(hget(w.key, 'rem')) - k
hset(w.key, 'rem', fmt(rem))
if rem == 0 then tasks_all_ended(w, fx) end
local out = {hget(w.key, 'st'), '', ''}
if k > 0 then
  out[2] = S
  out[3] = hget(w.key, 'names')
end
finalize()
put_list(out, stopping, 1)
put_list(out, fx.pushed, 2)
return out
