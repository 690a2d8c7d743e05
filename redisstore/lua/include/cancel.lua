-- cancel.lua: cancelling a running workflow (spec/states.md,
-- CancelWorkflow), by CancelWorkflow (scripts/cancel_workflow.lua) or by
-- its deadline, which a sweep finds due (sweep.lua).
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include cascade.lua
--!include waiters.lua
--!include deadline.lua
--!include events.lua

-- CANCEL.workflow cancels running workflow w whose cancel was not
-- requested yet: undo ("1" or "0") is whether a compensation may follow;
-- its waiting, queued and open tasks end cancelled, their state byte b
-- ("W": workflow cancelled, "D": its deadline); the IDs of its running
-- tasks, told to stop, are appended to stopping; fx collects what the end
-- decision pushes. Queued tasks leave their queues within the call's
-- budget, the rest in drain calls (which then decide the workflow's end).
-- Returns the task-state string before the cancel and how many tasks it
-- cancelled.
function CANCEL.workflow(w, undo, b, fx, stopping)
  wset(w, W_CANCEL, '1')
  if undo == '1' then wset(w, W_CANCEL_UNDO, '1') end
  wset(w, W_CANCEL_AT, NOW_S)
  CANCEL.drop_deadline(w)
  local S = states_read(w)
  local so = w.so
  if so and next(so) then
    -- bytes this call changed already (a sweep's earlier handling, a
    -- drain): the string as it is now, the overlay emptied
    local at = {}
    for i in pairs(so) do at[#at + 1] = i end
    table.sort(at)
    local parts, prev = {}, 1
    for _, i in ipairs(at) do
      parts[#parts + 1] = string.sub(S, prev, i - 1)
      parts[#parts + 1] = so[i]
      prev = i + 1
    end
    parts[#parts + 1] = string.sub(S, prev)
    S = join(parts, '')
    w.so = {}
  end
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
  -- every waiting, queued or open task ends cancelled (b), in one pass
  local newS, k = string.gsub(S, '[wqo]', b)
  w.S = newS
  w.sfull = true
  states_dirty(w)
  if k > 0 and awaited(P .. 'await:wj:' .. w.id) then
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
  -- their events, in plan order, within what the budget leaves
  local ev = nil
  if k > 0 and EV.cfg ~= 'off' then ev = CANCEL.events(w, b, 1, 1) end
  if left or ev then
    -- the rest leave their queues and get their events in drain calls,
    -- which then decide the workflow's end (drain.lua, unqueue_rest)
    local rest = {}
    while left do
      rest[#rest + 1] = fmt(left)
      left = string.find(S, '[qo]', left + 1)
    end
    keep_work('k', 'q', 'w', w.id, 'l', join(rest, ','), 'e', ev or '', 'b', b)
  elseif rem == 0 then
    tasks_all_ended(w, fx)
  end
  return S, k
end

-- CANCEL.events writes the "cancelled" events of workflow w's tasks that
-- its cancel ended (state byte b: "W", or "D" for its deadline), in plan
-- order from task x (whose name starts at byte o of the workflow's names),
-- one unit of BUDGET each, so that a cancel of a workflow of many tasks
-- stays a bounded step. Returns nil when it wrote them all, else "x:o"
-- where the next call goes on.
function CANCEL.events(w, b, x, o)
  local S = states_read(w)
  local names = wget(w, W_NAMES) or ''
  local reason = b == 'W' and 'workflow cancelled' or 'deadline'
  local at = string.find(S, b, x, true)
  while at do
    -- the name of task at: skip the names before it
    while x < at do
      o = string.find(names, '\n', o, true) + 1
      x = x + 1
    end
    if BUDGET <= 0 then return fmt(x) .. ':' .. fmt(o) end
    BUDGET = BUDGET - 1
    local e = string.find(names, '\n', o, true)
    EV.add('cancelled', w.id .. '/' .. string.sub(names, o, (e or 0) - 1), 0, reason)
    at = string.find(S, b, x + 1, true)
  end
  return nil
end

-- CANCEL.deadline handles deadline marker m (of workflow id) that a sweep
-- found due: a running workflow whose cancel was not requested is
-- cancelled with its UndoOnCancel, its unstarted tasks with reason
-- "deadline", and its Settled {id = m, state "cancelled", pushed,
-- wf_state, wf_ended} added to res.expired (res given); the running tasks
-- it asks to stop are published after finalize (CALL.stops). Returns false
-- when the workflow ended (or its cancel was requested) earlier in this
-- call, which took the marker out of the set: the sweep skips it.
function CANCEL.deadline(m, id, res)
  local w = load_wf(id)
  if not w or wget(w, W_STATE) ~= 'running' or wflag(w, W_CANCEL) then return false end
  wset(w, CANCEL.HIT, '1')
  local fx = {}
  local stops = CALL.stops
  if not stops then
    stops = {}
    CALL.stops = stops
  end
  CANCEL.workflow(w, wget(w, W_UNDO_ON_CANCEL) or '0', 'D', fx, stops)
  if res then
    res.expired[#res.expired + 1] = {id = m, state = 'cancelled', run_at = 0, pushed = fx.pushed,
      wf_state = wget(w, W_STATE), wf_ended = fx.wf_ended}
  end
  return true
end
