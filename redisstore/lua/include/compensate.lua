-- compensate.lua: a workflow's compensation: creating its undo jobs in the
-- order the DAG allows, and what the end of each undo releases.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua

-- The start of a compensation runs in three steps, each bounded by the
-- call's BUDGET (spec/scripts.md, Cascades in bounded steps) and kept in P
-- work (k "u", h "<step>:<task>") when the budget runs out: 1, every
-- completed task that has an undo gets its undo job, pending, from task
-- 1 up; 2, from the last task down, each task's nearest compensated
-- descendants (those reached through tasks without an undo), made from its
-- dependents' (engine.nearestCompensated); 3, from the last task down,
-- each undo that waits for some gets their count (b) and is added to each
-- one's parents (pa), and the others are pushed, in reverse plan order.
-- The lists of step 2 stay in memory; a call that stops writes those it
-- made to the hash w:<id>:nc (a list shared by a chain of tasks without
-- undos as "=<task>"), read back by the calls after it, and deleted at
-- the end of step 3.

-- compensated reports whether task x of w gets an undo job: it completed
-- and has an undo.
local function compensated(w, und, x) return string.byte(und, x) == 49 and task_byte(w, x) == 'c' end

-- nc_list returns task d's nearest compensated descendants (a list, or
-- false for none): made by this call, or read from w:<id>:nc.
local function nc_list(w, nc, d)
  local l = nc[d]
  if l ~= nil then return l end
  local s = redis.call('HGET', wf_nkey(w), fmt(d))
  if s and string.sub(s, 1, 1) == '=' then
    local r = tonumber(string.sub(s, 2))
    l = nc[r]
    if l == nil then
      l = ilist(redis.call('HGET', wf_nkey(w), fmt(r)))
      nc[r] = l
    end
  elseif s then
    l = ilist(s)
  else
    l = false
  end
  nc[d] = l
  BUDGET = BUDGET - (l and #l or 0)
  return l
end

-- nc_flush writes the lists this call made (made: task -> true) to
-- w:<id>:nc, a shared list once and then as "=<task>".
local function nc_flush(w, nc, made)
  local f, first = {}, {}
  for d in pairs(made) do
    local l = nc[d]
    if l then
      f[#f + 1] = fmt(d)
      if first[l] then
        f[#f + 1] = '=' .. fmt(first[l])
      else
        first[l] = d
        f[#f + 1] = join(l, ',')
      end
    end
  end
  for i = 1, #f, 1000 do redis.call('HSET', wf_nkey(w), unpack(f, i, math.min(i + 999, #f))) end
end

-- compensation_step goes on with the start of w's compensation at step
-- st from task i (see above); origin: as cascade's.
local function compensation_step(w, st, i, fx, origin)
  local n = tonumber(wget(w, W_TASKS))
  local und = wget(w, W_HAS_UNDO)
  states_read(w)
  local function stop(at_st, at)
    keep_work('k', 'u', 'w', w.id, 'o', origin or '', 'h', fmt(at_st) .. ':' .. fmt(at))
  end
  if st == 1 then
    local urem = tonumber(wget(w, W_UNDOS_REMAINING)) or 0
    local pos = string.find(und, '1', i, true)
    while pos do
      if task_byte(w, pos) == 'c' then
        if BUDGET <= 0 then
          wset(w, W_UNDOS_REMAINING, fmt(urem))
          return stop(1, pos)
        end
        BUDGET = BUDGET - 1
        local u = undo_job(w, pos)
        u.st = 'pending'
        jset(u, F_STATE, 'pending', F_CREATED, NOW_S)
        urem = urem + 1
      end
      pos = string.find(und, '1', pos + 1, true)
    end
    wset(w, W_UNDOS_REMAINING, fmt(urem))
    st, i = 2, n
  end
  local nc, made = {}, {}
  if st == 2 then
    local mark = {}
    for v = i, 1, -1 do
      if BUDGET <= 0 then
        nc_flush(w, nc, made)
        return stop(2, v)
      end
      BUDGET = BUDGET - 1
      local ds = {}
      for d in string.gmatch(redis.call('HGET', w.key, 't' .. fmt(v) .. '.' .. F_DEPENDENTS) or '', '(%d+) [^;]*') do
        ds[#ds + 1] = tonumber(d)
      end
      local out = false
      if #ds == 1 and not compensated(w, und, ds[1]) then
        -- a chain without undos shares its dependent's list
        out = nc_list(w, nc, ds[1])
      elseif #ds > 0 then
        out = {}
        for _, d in ipairs(ds) do
          BUDGET = BUDGET - 1
          if compensated(w, und, d) then
            if mark[d] ~= v then
              mark[d] = v
              out[#out + 1] = d
            end
          else
            local l = nc_list(w, nc, d)
            if l then
              BUDGET = BUDGET - #l
              for _, y in ipairs(l) do
                if mark[y] ~= v then
                  mark[y] = v
                  out[#out + 1] = y
                end
              end
            end
          end
        end
        if #out == 0 then out = false end
      end
      nc[v] = out
      made[v] = true
    end
    st, i = 3, n
  end
  -- step 3: parents gathered per undo (in the order of the tasks that
  -- wait for it) and appended to its list at the end of the call
  local parents, order = {}, {}
  local function flush_parents()
    for _, y in ipairs(order) do
      local u = undo_job(w, y)
      local old = jget(u, F_PARENTS)
      local add = join(parents[y], ',')
      jset(u, F_PARENTS, old and (old .. ',' .. add) or add)
    end
  end
  for x = i, 1, -1 do
    if BUDGET <= 0 then
      flush_parents()
      nc_flush(w, nc, made)
      return stop(3, x)
    end
    BUDGET = BUDGET - 1
    if compensated(w, und, x) then
      local l = nc_list(w, nc, x)
      if l then
        jset(undo_job(w, x), F_BLOCKERS, fmt(#l))
        BUDGET = BUDGET - #l
        for _, y in ipairs(l) do
          local pl = parents[y]
          if not pl then
            pl = {}
            parents[y] = pl
            order[#order + 1] = y
          end
          pl[#pl + 1] = x
        end
      else
        push(undo_job(w, x), 0, fx)
      end
    end
  end
  flush_parents()
  redis.call('DEL', wf_nkey(w))
end

-- start_compensation moves workflow w to compensating: every completed
-- task that has an undo gets its undo job, pending; the undo of task X
-- waits for the undos of its nearest compensated descendants (those reached
-- from X through tasks without one); the undos that wait for none are
-- pushed, in reverse plan order. The work runs in bounded steps
-- (compensation_step).
local function start_compensation(w, reason, fx)
  set_wf_state(w, 'compensating')
  EV.add('workflow_compensating', w.id, 0, reason)
  wset(w, W_REASON, reason)
  compensation_step(w, 1, 1, fx, CALL.origin)
end

-- release_undo_parents counts task i's undo, ended and no longer waiting
-- for its descendants, as done for its nearest compensated ancestors; an
-- ancestor's undo that ended while it still waited (cancelled) passes the
-- count on in turn, depth first.
local function release_undo_parents(w, i, fx)
  local stack = {{ilist(jget(undo_job(w, i), F_PARENTS)), 1}}
  while #stack > 0 do
    local fr = stack[#stack]
    local p = fr[1][fr[2]]
    if not p then
      stack[#stack] = nil
    else
      fr[2] = fr[2] + 1
      local up = undo_job(w, p)
      local b = redis.call('HINCRBY', w.key, up.pre .. F_BLOCKERS, '-1')
      if b == 0 then
        local st = job_state(up)
        if st == 'pending' then
          push(up, 0, fx)
        elseif ended_state(st) then
          stack[#stack + 1] = {ilist(jget(up, F_PARENTS)), 1}
        end
      end
    end
  end
end

-- undo_ended runs the consequences of the end of task i's undo: its
-- ancestors' undos released, and the workflow's end after the last one.
local function undo_ended(w, i, fx)
  local urem = redis.call('HINCRBY', w.key, W_UNDOS_REMAINING, '-1')
  w.m[W_UNDOS_REMAINING] = fmt(urem)
  local u = undo_job(w, i)
  if job_state(u) ~= 'completed' then wset(w, W_UNDO_FAILED, '1') end
  if (tonumber(jget(u, F_BLOCKERS)) or 0) == 0 then release_undo_parents(w, i, fx) end
  if urem == 0 then
    if wflag(w, W_UNDO_FAILED) then
      end_wf(w, 'compensation_failed', fx)
    else
      end_wf(w, 'compensated', fx)
    end
  end
end
