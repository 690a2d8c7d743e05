-- workflow.lua: a task's end and its cascade, FailFast, the workflow's end,
-- compensation, cancel. Needs core.lua and jobs.lua. Workflow fields (hash
-- weir:{..}:w:<id>): st state, rs reason, ff, uoc, cr, cu, h plan hash,
-- c created, en ended, x expires, n tasks, rem tasks not ended, ua
-- unabsorbed failure, fbc failed before cancel, fff FailFast fired, urem
-- undos not ended, ufail an undo did not complete, alw/und one '0'/'1' per
-- task (Always, has undo), t<i> task spec, names all
-- names (newline-separated), cat when CancelWorkflow ran. Task states: the
-- string key w:<id>:s (jobs.lua).

local function wf_member(w) return pad15(num(hget(w.key, 'c'))) .. ':' .. w.id end

-- set_wf_state moves a workflow to a state and its listing index entry.
local function set_wf_state(w, st)
  local old = hget(w.key, 'st')
  local m = wf_member(w)
  zrem(P .. 'wf:' .. old, m)
  zadd(P .. 'wf:' .. st, 0, m)
  hset(w.key, 'st', st)
end

local function end_wf(w, st, fx)
  set_wf_state(w, st)
  hset(w.key, 'en', NOW_S)
  hset(w.key, 'x', fmt(NOW + RETENTION))
  fx.wf_ended = true
  ENDED_W[#ENDED_W + 1] = w
end

-- undo_tasks lists, in plan order, the tasks that have an undo job.
local function undo_tasks(w)
  local und, out = hget(w.key, 'und'), {}
  local pos = string.find(und, '1', 1, true)
  while pos do
    out[#out + 1] = pos
    pos = string.find(und, '1', pos + 1, true)
  end
  return out
end
local function spec_fields(w)
  local f = {}
  for i = 1, w.n do f[i] = 't' .. tostring(i) end
  return f
end

-- start_compensation creates the undo job of every completed task that has
-- one and pushes, in reverse plan order, those whose nearest compensated
-- descendants are all done (none yet).
local function start_compensation(w, reason, fx)
  set_wf_state(w, 'compensating')
  hset(w.key, 'rs', reason)
  local n = w.n
  local has = {}
  local urem = 0
  for _, i in ipairs(undo_tasks(w)) do
    if tstate(w, i) == 'completed' then
      local u = ujob(w, i)
      set_state(u, 'pending')
      jset(u, 'c', NOW_S)
      has[i] = true
      urem = urem + 1
    end
  end
  hset(w.key, 'urem', fmt(urem))
  local seen, blockers, parents = {}, {}, {}
  for x = n, 1, -1 do
    if has[x] then
      local stack = {}
      for _, d in ipairs(spec(w, x).dnts) do stack[#stack + 1] = d end
      while #stack > 0 do
        local y = stack[#stack]
        stack[#stack] = nil
        if seen[y] ~= x then
          seen[y] = x
          if has[y] then
            blockers[x] = (blockers[x] or 0) + 1
            local pl = parents[y]
            if not pl then
              pl = {}
              parents[y] = pl
            end
            pl[#pl + 1] = x
          else
            for _, d in ipairs(spec(w, y).dnts) do stack[#stack + 1] = d end
          end
        end
      end
    end
  end
  for x = n, 1, -1 do
    if has[x] then
      if blockers[x] then jset(ujob(w, x), 'b', fmt(blockers[x])) end
      if parents[x] then jset(ujob(w, x), 'pa', join(parents[x], ',')) end
    end
  end
  for x = n, 1, -1 do
    if has[x] and not blockers[x] then push(ujob(w, x), fx) end
  end
end

-- tasks_all_ended decides a workflow's end once every task ended.
local function tasks_all_ended(w, fx)
  local compensable = false
  for _, i in ipairs(undo_tasks(w)) do
    if tstate(w, i) == 'completed' then
      compensable = true
      break
    end
  end
  local cr = hget(w.key, 'cr') == '1'
  local cu = hget(w.key, 'cu') == '1'
  local fbc = hget(w.key, 'fbc') == '1'
  local ua = hget(w.key, 'ua') == '1'
  if cr and (cu or fbc) and compensable then
    if fbc then start_compensation(w, 'failure', fx) else start_compensation(w, 'cancel', fx) end
  elseif cr then
    end_wf(w, 'cancelled', fx)
  elseif ua and compensable then
    start_compensation(w, 'failure', fx)
  elseif ua then
    end_wf(w, 'failed', fx)
  else
    end_wf(w, 'completed', fx)
  end
end

-- task_ended: promotion of dependents, cancellation of non-Always
-- dependents of a failed or cancelled task (and of theirs), FailFast, and
-- the workflow's end once every task ended. First in, first out; each
-- task's dependents in plan order.
task_ended = function(w, i, fx)
  local work, head = {i}, 1
  local rem = num(hget(w.key, 'rem'))
  while head <= #work do
    local k = work[head]
    head = head + 1
    rem = rem - 1
    local ts = tstate(w, k)
    if ts == 'failed' and not spec(w, k).absorb then
      hset(w.key, 'ua', '1')
      if hget(w.key, 'cr') ~= '1' then
        hset(w.key, 'fbc', '1')
        if hget(w.key, 'ff') == '1' and hget(w.key, 'fff') ~= '1' then
          hset(w.key, 'fff', '1')
          prefetch(w.key, spec_fields(w))
          for x = 1, w.n do
            local sx = tstate(w, x)
            if (sx == 'waiting' or sx == 'queued') and not always(w, x) then
              cancel_task(tjob(w, x), 'fail_fast', fx)
              work[#work + 1] = x
            end
          end
        end
      end
    end
    local dn = spec(w, k).dnts
    for _, d in ipairs(dn) do
      if tstate(w, d) == 'waiting' then
        local td = tjob(w, d)
        if ts == 'completed' or always(w, d) then
          local o = jget(td, 'o')
          if o then o = tonumber(o) - 1 else o = #spec(w, d).deps - 1 end
          jset(td, 'o', fmt(o))
          if o == 0 then push(td, fx) end
        else
          cancel_task(td, 'dependency ' .. spec(w, k).name .. ' ' .. ts, fx)
          work[#work + 1] = d
        end
      end
    end
  end
  hset(w.key, 'rem', fmt(rem))
  if rem == 0 then tasks_all_ended(w, fx) end
end

-- release_undo_parents counts task i's undo, ended and no longer waiting
-- for its descendants, as done for its nearest compensated ancestors; an
-- ancestor's undo that ended while it still waited (cancelled) passes the
-- count on in turn, depth first (the model's recursion, with a stack).
local function release_undo_parents(w, i, fx)
  local stack = {{ilist(jget(ujob(w, i), 'pa')), 1}}
  while #stack > 0 do
    local fr = stack[#stack]
    local p = fr[1][fr[2]]
    if not p then
      stack[#stack] = nil
    else
      fr[2] = fr[2] + 1
      local up = ujob(w, p)
      local b = num(jget(up, 'b')) - 1
      jset(up, 'b', fmt(b))
      if b == 0 then
        local st = jstate(up)
        if st == 'pending' then
          push(up, fx)
        elseif st == 'completed' or st == 'failed' or st == 'cancelled' then
          stack[#stack + 1] = {ilist(jget(up, 'pa')), 1}
        end
      end
    end
  end
end

undo_ended = function(w, i, fx)
  local urem = num(hget(w.key, 'urem')) - 1
  hset(w.key, 'urem', fmt(urem))
  local u = ujob(w, i)
  if jstate(u) ~= 'completed' then hset(w.key, 'ufail', '1') end
  if num(jget(u, 'b')) == 0 then release_undo_parents(w, i, fx) end
  if urem == 0 then
    if hget(w.key, 'ufail') == '1' then
      end_wf(w, 'compensation_failed', fx)
    else
      end_wf(w, 'compensated', fx)
    end
  end
end

local function wf_ended_state(st)
  return st ~= 'running' and st ~= 'compensating'
end
