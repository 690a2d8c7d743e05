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

-- cancel_task ends a waiting, queued or pending job as cancelled with
-- reason, without its consequences (the caller runs those). A task's open
-- count goes below zero, so that no later decrement promotes it.
local function cancel_task(j, reason, fx)
  if job_state(j) == 'queued' then
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
  mark_ended(j)
end

-- promoted returns dependent d of w (ds: the same as a string) as its
-- entry in a dependents list names it: with its ID, queue and priority,
-- so that its push reads nothing.
local function promoted(w, d, ds, name, q, pr)
  local j = task_job(w, d, ds)
  if not j.id then
    j.id = w.id .. '/' .. name
    bag('jobs')[j.id] = j
  end
  if not j.q then j.q, j.pr = q, tonumber(pr) end
  return j
end

-- task_flags returns the flags of task i's spec: A Always, B a failure is
-- absorbed, U has an undo, E After given empty.
local function task_flags(w, i)
  return string.match(task_spec(w, i), '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|([^|]*)')
end

local function task_name(w, i) return string.match(task_spec(w, i), '^[^|]*') end

local function always(w, i) return string.byte(wget(w, W_ALWAYS), i) == 49 end

-- tasks_all_ended decides a workflow's end once every task ended.
local function tasks_all_ended(w, fx)
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

-- fail_fast cancels every task of w that has not started, except Always
-- ones, and adds them to the work list.
local function fail_fast(w, work, fx)
  wset(w, W_FAIL_FAST_FIRED, '1')
  local S = states_read(w)
  local alw = wget(w, W_ALWAYS)
  for x = 1, #S do
    local b = task_byte(w, x)
    if (b == 'w' or b == 'q') and string.byte(alw, x) ~= 49 then
      cancel_task(task_job(w, x), 'fail_fast', fx)
      work[#work + 1] = x
    end
  end
end

-- task_ended runs the consequences of task i's end, as engine.Model does:
-- ended tasks first in, first out, each one's dependents in plan order. A
-- completed task decrements each dependent's open count and pushes those
-- it brings to zero; a failed or cancelled one does that for Always
-- dependents and cancels the others, which end in turn.
local function task_ended(w, i, fx)
  local work, head = {i}, 1
  while head <= #work do
    local k = work[head]
    head = head + 1
    local kb = task_byte(w, k)
    if kb == 'f' and not string.find(task_flags(w, k), 'B', 1, true) then
      if not wflag(w, W_UNABSORBED) then wset(w, W_UNABSORBED, '1') end
      if not wflag(w, W_CANCEL) then
        if not wflag(w, W_FAILED_BEFORE_CANCEL) then wset(w, W_FAILED_BEFORE_CANCEL, '1') end
        if wflag(w, W_FAIL_FAST) and not wflag(w, W_FAIL_FAST_FIRED) then fail_fast(w, work, fx) end
      end
    end
    local kj = task_job(w, k)
    local dn = kj.dn -- read with the task by a finish
    if dn == nil then dn = jget(kj, F_DEPENDENTS) end
    if dn then
      for ds, name, q, pr in string.gmatch(dn, '(%d+) ([^ ;]+) ([^ ;]+) ([^ ;]+)') do
        local d = tonumber(ds)
        if kb == 'c' then
          -- a decrement of a dependent that no longer waits changes nothing:
          -- cancel_task leaves the open count below zero, and after a
          -- cancel of the workflow the state byte says
          if redis.call('HINCRBY', w.key, 't' .. ds .. '.' .. F_OPEN, '-1') == 0 and
            (not wflag(w, W_CANCEL) or task_byte(w, d) == 'w') then
            push(promoted(w, d, ds, name, q, pr), 0, fx)
          end
        elseif task_byte(w, d) == 'w' then
          if always(w, d) then
            if redis.call('HINCRBY', w.key, 't' .. ds .. '.' .. F_OPEN, '-1') == 0 then push(promoted(w, d, ds, name, q, pr), 0, fx) end
          else
            cancel_task(task_job(w, d, ds), 'dependency ' .. task_name(w, k) .. ' ' .. TASK_STATE[kb], fx)
            work[#work + 1] = d
          end
        end
      end
    end
  end
  local rem = redis.call('HINCRBY', w.key, W_REMAINING, fmt(-#work))
  w.m[W_REMAINING] = fmt(rem)
  if rem == 0 then tasks_all_ended(w, fx) end
end
