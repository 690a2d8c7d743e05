-- cascade.lua: what the end of a task does to its workflow: promotion of
-- its dependents, cancellation of the dependents a failure or cancel
-- reaches, FailFast, and the workflow's end once every task ended.
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include compensate.lua
--!include promote.lua
--!include ready.lua
--!include deadline.lua

-- cancel_task ends a waiting, queued or pending job as cancelled with
-- reason, without its consequences (the caller runs those). A task's open
-- count goes below zero, so that no later decrement promotes it.
local function cancel_task(j, reason, fx)
  local st = job_state(j)
  if st == 'queued' or st == 'open' then
    unqueue(j)
    jdel(j, F_RUN_AT)
  end
  set_job_state(j, 'cancelled')
  if j.kind == 't' then
    jset(j, F_ERROR, reason, F_ENDED, NOW_S, F_OPEN, '-1')
  else
    jset(j, F_ERROR, reason, F_ENDED, NOW_S)
  end
  local c = fx.cancelled
  if not c then
    c = {}
    fx.cancelled = c
  end
  c[#c + 1] = job_id(j)
  EV.add('cancelled', c[#c], 0, reason)
  mark_ended(j)
end

-- promoted returns dependent d of w (ds: the same as a string) as its
-- entry in a dependents list names it: with its ID, queue and priority
-- ("<priority>[s<timeout>|d<delay>][:<key>]": a signal or delay mark,
-- promote.lua, and its concurrency key, keyed.lua), so that its push
-- reads nothing.
local function promoted(w, d, ds, name, q, pr)
  local j = task_job(w, d, ds)
  if not j.id then
    j.id = w.id .. '/' .. name
    bag('jobs')[j.id] = j
  end
  if not j.q then
    local c = string.find(pr, ':', 1, true)
    j.q, j.pr = q, tonumber(string.match(pr, '^%-?%d+'))
    j.ck = c and string.sub(pr, c + 1) or false
  end
  return j
end

-- task_flags returns the flags of task i's spec: A Always, B a failure is
-- absorbed, U has an undo, E After given empty (a concurrency key after
-- ":" is not a flag).
local function task_flags(w, i)
  return string.match(task_spec(w, i), '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|([^|:]*)')
end

local function task_name(w, i) return string.match(task_spec(w, i), '^[^|]*') end

local function always(w, i) return string.byte(wget(w, W_ALWAYS), i) == 49 end

-- tasks_all_ended decides a workflow's end once every task ended.
local function tasks_all_ended(w, fx)
  -- its deadline, if any, does nothing more
  CANCEL.drop_deadline(w)
  local und = wget(w, W_HAS_UNDO)
  local compensable = false
  local pos = string.find(und, '1', 1, true)
  while pos do
    if task_byte(w, pos) == 'c' then
      compensable = true
      break
    end
    pos = string.find(und, '1', pos + 1, true)
  end
  local cr, fbc = wflag(w, W_CANCEL), wflag(w, W_FAILED_BEFORE_CANCEL)
  if cr and (wflag(w, W_CANCEL_UNDO) or fbc) and compensable then
    start_compensation(w, fbc and 'failure' or 'cancel', fx)
  elseif cr then
    end_wf(w, 'cancelled', fx)
  elseif wflag(w, W_UNABSORBED) and compensable then
    start_compensation(w, 'failure', fx)
  elseif wflag(w, W_UNABSORBED) then
    end_wf(w, 'failed', fx)
  else
    end_wf(w, 'completed', fx)
  end
end

-- fail_fast goes on with a fired FailFast of w from task from: every task
-- that has not started, except Always ones, in plan order, is cancelled
-- ("fail_fast") and added to the work list, one unit of BUDGET each.
-- Returns where it stopped when the budget ran out (nil once done) and how
-- many it cancelled. The tasks are found in the state string as read (a C
-- search) and among the bytes this call changed (a retried task went back
-- to queued).
local function fail_fast(w, from, work, fx)
  local S = states_read(w)
  local alw = wget(w, W_ALWAYS)
  local extra, e = {}, 1
  for i, b in pairs(w.so or EMPTY) do
    if i >= from and (b == 'w' or b == 'q' or b == 'o') then
      local sb = string.sub(S, i, i)
      if sb ~= 'w' and sb ~= 'q' and sb ~= 'o' then extra[#extra + 1] = i end
    end
  end
  table.sort(extra)
  local n, x = 0, from
  while true do
    local s = string.find(S, '[wqo]', x)
    if extra[e] and (not s or extra[e] < s) then
      s = extra[e]
      e = e + 1
    end
    if not s then return nil, n end
    local b = task_byte(w, s)
    if (b == 'w' or b == 'q' or b == 'o') and string.byte(alw, s) ~= 49 then
      if BUDGET <= 0 then return s, n end
      BUDGET = BUDGET - 1
      cancel_task(task_job(w, s), 'fail_fast', fx)
      work[#work + 1] = s
      n = n + 1
    end
    x = s + 1
  end
end

-- The work list of a cascade that ran out of the call's budget (BUDGET,
-- call.lua) is kept in the hash P work until later calls finish it
-- (drain.lua): k "c" (a cascade; "r": a submit's roots, drain.lua), w the
-- workflow's ID, o the prefix of the task whose finish
-- started it (its stored Settled gets what the rest of the cascade
-- pushes and ends), h "<k>:<pos>" the task being processed and where its
-- dependents list goes on, l the tasks after it, "k,k,...", first in first
-- out, and f, while a FailFast that fired is still cancelling, the task it
-- goes on from (before anything else). The seq hash's pend is "1" while it
-- exists: at most one cascade is left at a time, since every call that
-- could start another finishes this one first or is refused
-- (spec/scripts.md, Cascades in bounded steps).

-- save_work keeps what is left of w's cascade: task k from byte pos of its
-- dependents list, then the unread tail of the kept list (from byte tp),
-- then the entries of work from head.
local function save_work(w, k, pos, tail, tp, work, head, origin, ff)
  local rest = {}
  if tail and tp <= #tail then rest[1] = string.sub(tail, tp) end
  for x = head, #work do rest[#rest + 1] = fmt(work[x]) end
  keep_work('k', 'c', 'w', w.id, 'o', origin or '', 'h', fmt(k) .. ':' .. fmt(pos), 'l', join(rest, ','),
    'f', ff and fmt(ff) or '')
end

-- count_ended takes n ended tasks off workflow w's count of tasks not
-- ended, and returns what is left.
local function count_ended(w, n)
  local rem = redis.call('HINCRBY', w.key, W_REMAINING, fmt(-n))
  w.m[W_REMAINING] = fmt(rem)
  return rem
end

-- cascade runs the work list of workflow w: tasks that ended, first in
-- first out, as engine.Model does. A completed task decrements each
-- dependent's open count and pushes those it brings to zero; a failed or
-- cancelled one does that for Always dependents and cancels the others,
-- which end in turn. The list is task k (from byte pos of its dependents
-- list; nil: from its start, its own step not done yet), then the kept
-- tail (a string "k,k,...", or nil), then work, where the tasks this run
-- ends are added. ended counts tasks that ended and are not yet taken off
-- the workflow's remaining count. Each dependent visited takes one unit of
-- BUDGET; when none is left with work still to do, the rest is kept
-- (save_work) and the workflow's end waits for it. ff: a FailFast that
-- fired goes on cancelling from that task first.
local function cascade(w, k, pos, tail, work, ended, origin, fx, ff)
  local tp, head = 1, 1
  while k do
    local kb = task_byte(w, k)
    if not pos then
      if kb == 'f' and not string.find(task_flags(w, k), 'B', 1, true) then
        if not wflag(w, W_UNABSORBED) then wset(w, W_UNABSORBED, '1') end
        if not wflag(w, W_CANCEL) then
          if not wflag(w, W_FAILED_BEFORE_CANCEL) then wset(w, W_FAILED_BEFORE_CANCEL, '1') end
          if wflag(w, W_FAIL_FAST) and not wflag(w, W_FAIL_FAST_FIRED) then
            wset(w, W_FAIL_FAST_FIRED, '1')
            ff = 1
          end
        end
      end
      pos = 1
    end
    if ff then
      local n
      ff, n = fail_fast(w, ff, work, fx)
      ended = ended + n
      if ff then
        save_work(w, k, pos, tail, tp, work, head, origin, ff)
        count_ended(w, ended)
        return
      end
    end
    local kj = task_job(w, k)
    local dn = kj.dn -- read with the task by a finish
    if dn == nil then dn = jget(kj, F_DEPENDENTS) end
    while dn do
      local s, e, ds, name, q, pr = string.find(dn, '(%d+) ([^ ;]+) ([^ ;]+) ([^ ;]+)', pos)
      if not s then break end
      if BUDGET <= 0 then
        save_work(w, k, s, tail, tp, work, head, origin)
        count_ended(w, ended)
        return
      end
      BUDGET = BUDGET - 1
      pos = e + 1
      local d = tonumber(ds)
      -- "f" first: an OnFailure dependent (spec/states.md, OnFailure tasks)
      local onf = string.byte(pr, 1) == 102
      if onf then pr = string.sub(pr, 2) end
      if kb == 'c' then
        -- a decrement of a dependent that no longer waits changes nothing:
        -- cancel_task leaves the open count below zero, and after a
        -- cancel of the workflow the state byte says
        if redis.call('HINCRBY', w.key, 't' .. ds .. '.' .. F_OPEN, '-1') == 0 and
          (not wflag(w, W_CANCEL) or task_byte(w, d) == 'w') then
          if onf and redis.call('HEXISTS', w.key, 't' .. ds .. '.' .. F_DEP_FAILED) == 0 then
            cancel_task(task_job(w, d, ds), 'no_failure', fx)
            work[#work + 1] = d
            ended = ended + 1
          else
            SIG.push(promoted(w, d, ds, name, q, pr), pr, fx, READY.promotion_ready(w, k))
          end
        end
      elseif task_byte(w, d) == 'w' then
        if always(w, d) then
          if redis.call('HINCRBY', w.key, 't' .. ds .. '.' .. F_OPEN, '-1') == 0 then
            SIG.push(promoted(w, d, ds, name, q, pr), pr, fx, READY.promotion_ready(w, k))
          elseif onf then
            redis.call('HSET', w.key, 't' .. ds .. '.' .. F_DEP_FAILED, '1')
          end
        else
          cancel_task(task_job(w, d, ds), 'dependency ' .. task_name(w, k) .. ' ' .. TASK_STATE[kb], fx)
          work[#work + 1] = d
          ended = ended + 1
        end
      end
    end
    -- the next entry: from the kept tail first, then from work
    k, pos = nil, nil
    if tail and tp <= #tail then
      local s, e, v = string.find(tail, '(%d+)', tp)
      if s then
        k, tp = tonumber(v), e + 2
      else
        tp = #tail + 1
      end
    end
    if not k and head <= #work then
      k = work[head]
      head = head + 1
    end
  end
  if count_ended(w, ended) == 0 then
    -- a compensation started here completes the Settled of the finish
    -- that started the cascade, as the cascade's rest does
    CALL.origin = origin
    tasks_all_ended(w, fx)
  end
end

-- task_ended runs the consequences of task i's end (cascade); origin is
-- the task's field prefix when a finish ended it (its Settled is kept).
local function task_ended(w, i, fx, origin)
  cascade(w, i, nil, nil, {}, 1, origin, fx)
end
