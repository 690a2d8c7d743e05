-- compensate.lua: a workflow's compensation: creating its undo jobs in the
-- order the DAG allows, and what the end of each undo releases.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua

-- dependents_of returns the dependents lists of every task of workflow w
-- (index -> list), read 1,000 fields an HMGET.
local function dependents_of(w, n)
  local out = {}
  for first = 1, n, 1000 do
    local last = math.min(first + 999, n)
    local f = {}
    for i = first, last do f[#f + 1] = 't' .. fmt(i) .. '.' .. F_DEPENDENTS end
    local v = redis.call('HMGET', w.key, unpack(f))
    for i = first, last do
      local l = {}
      for d in string.gmatch(v[i - first + 1] or '', '(%d+) [^;]*') do l[#l + 1] = tonumber(d) end
      out[i] = l
    end
  end
  return out
end

-- start_compensation moves workflow w to compensating: every completed
-- task that has an undo gets its undo job, pending; the undo of task X
-- waits for the undos of its nearest compensated descendants (those reached
-- from X through tasks without one); the undos that wait for none are
-- pushed, in reverse plan order.
local function start_compensation(w, reason, fx)
  set_wf_state(w, 'compensating')
  wset(w, W_REASON, reason)
  local n = tonumber(wget(w, W_TASKS))
  local und = wget(w, W_HAS_UNDO)
  states_read(w)
  local has, urem = {}, 0
  local pos = string.find(und, '1', 1, true)
  while pos do
    if task_byte(w, pos) == 'c' then
      local u = undo_job(w, pos)
      u.st = 'pending'
      jset(u, F_STATE, 'pending', F_CREATED, NOW_S)
      has[pos] = true
      urem = urem + 1
    end
    pos = string.find(und, '1', pos + 1, true)
  end
  wset(w, W_UNDOS_REMAINING, fmt(urem))
  local dn = dependents_of(w, n)
  -- below[v]: some descendant of v is compensated; the searches skip the
  -- rest, so a large region without undos is not walked once per undo
  local below = {}
  for v = n, 1, -1 do
    for _, d in ipairs(dn[v]) do
      if has[d] or below[d] then
        below[v] = true
        break
      end
    end
  end
  -- ncd[v], for v with below[v]: the nearest compensated descendants of
  -- v, each once, made from its dependents' lists in one pass from the last
  -- task (engine.nearestCompensated); a task whose one dependent has no
  -- undo shares that dependent's list, so a chain without undos costs one
  -- step a task however many undos sit above it
  local ncd, mark = {}, {}
  for v = n, 1, -1 do
    if below[v] then
      local ds = dn[v]
      if #ds == 1 and not has[ds[1]] then
        ncd[v] = ncd[ds[1]]
      else
        local out = {}
        for _, d in ipairs(ds) do
          if has[d] then
            if mark[d] ~= v then
              mark[d] = v
              out[#out + 1] = d
            end
          elseif below[d] then
            for _, y in ipairs(ncd[d]) do
              if mark[y] ~= v then
                mark[y] = v
                out[#out + 1] = y
              end
            end
          end
        end
        ncd[v] = out
      end
    end
  end
  local blockers, parents = {}, {}
  for x = n, 1, -1 do
    if has[x] and below[x] then
      local l = ncd[x]
      blockers[x] = #l
      for _, y in ipairs(l) do
        local pl = parents[y]
        if not pl then
          pl = {}
          parents[y] = pl
        end
        pl[#pl + 1] = x
      end
    end
  end
  for x = n, 1, -1 do
    if blockers[x] then jset(undo_job(w, x), F_BLOCKERS, fmt(blockers[x])) end
    if parents[x] then jset(undo_job(w, x), F_PARENTS, join(parents[x], ',')) end
  end
  for x = n, 1, -1 do
    if has[x] and not blockers[x] then push(undo_job(w, x), 0, fx) end
  end
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
