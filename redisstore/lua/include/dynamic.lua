-- dynamic.lua: tasks a finish adds to its workflow (spec/states.md,
-- Dynamic tasks; spec/scripts.md, finish): checked, for every outcome of
-- the call that adds, before the call's first write (DYN.check_all), then
-- written by the settle of a completed attempt, before its cascade
-- (DYN.ended).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include cascade.lua
--!include promote.lua
--
-- An outcome's additions are a block of the call's ARGV, DYN.A (finish.lua sets it; Go: redisstore/dynamic.go):
-- at s, "1" when the finishing task's waiting dependents are gated on
-- them, else ""; s + 1 their count m; s + 2 and s + 3 the store's
-- MaxTasks and MaxEdges; then per added task, DYN.STRIDE strings: its
-- name, its spec up to its flags and with "A" when Always (the flag "B",
-- a failure absorbed, is Lua's to add: it depends on dependents only Lua
-- knows), the rest of its spec after the flag B ("U E S X<n>", ":<key>",
-- "|<undo queue>"), its dependencies ("#<k>": the k-th added task, or a
-- task's name; joined by ","), "1" when Always ("2" when Always and
-- NoAbsorb: it does not absorb its dependencies' failures), "1" when it has an undo,
-- its entry in a dependents list after its index ("<name> <queue>
-- <priority>[marks][:<key>]", codec.go dependentsField), "1" when it has a
-- payload and the payload, "1" when its undo has one and that payload.
--
-- DYN holds the functions of this file (one top-level local: the
-- library's top level has few registers left).
local DYN = {STRIDE = 11, ENDED = {c = true, f = true, x = true, W = true, D = true}}

-- DYN.err is the error reply of a refused addition: "<CODE> <task>|<field>|<problem>",
-- which Go turns into an weir.ValidationError.
function DYN.err(code, task, field, problem)
  return code .. ' ' .. task .. '|' .. field .. '|' .. problem
end

-- DYN.edges counts workflow w's dependency edges (n tasks), for a
-- workflow that has no count yet (its first growth).
function DYN.edges(w, n)
  local e = 0
  for a = 1, n, 1000 do
    local f = {}
    for i = a, math.min(a + 999, n) do f[#f + 1] = 't' .. fmt(i) .. '.' .. F_DEPS end
    for _, dp in ipairs(redis.call('HMGET', w.key, unpack(f))) do
      if dp and dp ~= '' then
        local _, c = string.gsub(dp, ',', '')
        e = e + c + 1
      end
    end
  end
  return e
end

-- DYN.gated returns the entries of finishing task j's dependents list
-- whose task waits, in order: {index, entry}.
function DYN.gated(j)
  local out = {}
  local dn = j.dn
  if dn == nil then dn = jget(j, F_DEPENDENTS) end
  for e in string.gmatch(dn or '', '[^;]+') do
    local d = tonumber(string.match(e, '^%d+'))
    if task_byte(j.wf, d) == 'w' then out[#out + 1] = {d, e} end
  end
  return out
end

-- DYN.check checks the additions at ARGV[s] of finishing task j against
-- its workflow as the call found it; acc[workflow ID] keeps what the
-- call's earlier outcomes add to the same workflow. Returns an error
-- reply's text, or nil.
function DYN.check(j, s, acc)
  local A = DYN.A
  local w, f = j.wf, j.i
  local gate, m = A[s] == '1', tonumber(A[s + 1])
  local a = acc[w.id]
  if not a then
    local v = redis.call('HMGET', w.key, W_TASKS, 'ed')
    local n = tonumber(v[1])
    a = {n = n, ed = tonumber(v[2]) or DYN.edges(w, n), names = {}}
    acc[w.id] = a
  end
  local names = {}
  for t = 1, m do names[t] = A[s + 4 + (t - 1) * DYN.STRIDE] end
  local idx = redis.call('HMGET', wf_ikey(w), unpack(names))
  for t = 1, m do
    local b = s + 4 + (t - 1) * DYN.STRIDE
    local name = names[t]
    if idx[t] or a.names[name] then
      return DYN.err('INVALID', name, 'name', 'workflow "' .. w.id .. '" already has a task of that name')
    end
    for ref in string.gmatch(A[b + 3], '[^,]+') do
      a.ed = a.ed + 1
      if string.byte(ref) ~= 35 then
        local d = tonumber(redis.call('HGET', wf_ikey(w), ref))
        if not d then
          return DYN.err('INVALID', name, 'after', 'dependency "' .. ref .. '" is neither a task of workflow "' .. w.id ..
            '" nor one added before this one')
        end
        if gate and d ~= f and not DYN.ENDED[task_byte(w, d)] then
          return DYN.err('INVALID', name, 'after', 'dependency "' .. ref .. '" has not ended: with GateDependents an added ' ..
            'task depends only on ended tasks, the finishing task and tasks added with it')
        end
      end
    end
  end
  for t = 1, m do a.names[names[t]] = true end
  a.n = a.n + m
  if a.n > tonumber(A[s + 2]) then
    return DYN.err('TOOLARGE', '', 'add', 'workflow "' .. w.id .. '" would have ' .. fmt(a.n) .. ' tasks, the limit is ' .. A[s + 2])
  end
  if gate then a.ed = a.ed + #DYN.gated(j) * m end
  if a.ed > tonumber(A[s + 3]) then
    return DYN.err('TOOLARGE', '', 'add', 'workflow "' .. w.id .. '" would have ' .. fmt(a.ed) ..
      ' dependency edges, the limit is ' .. A[s + 3])
  end
  return nil
end

-- DYN.check_all checks the additions of the call's k outcomes (finish.lua's
-- layout: 9 strings an outcome from A[5], the ninth where its block
-- starts) that complete a running task's attempt; a repeat, a lost lease
-- or an outcome that does not complete adds nothing and is not checked.
-- Returns an error reply's text, or nil.
function DYN.check_all(k)
  local A = DYN.A
  local acc, seen = nil, nil
  for x = 0, k - 1 do
    local b = 5 + 9 * x
    if A[b + 8] ~= '' and A[b + 2] == 'completed' then
      local id, tok = A[b], A[b + 1]
      local j, tk = leased_job(id, tok)
      seen = seen or {}
      if j and j.kind == 't' and tk == tok and not seen[id] then
        seen[id] = true
        acc = acc or {}
        local e = DYN.check(j, tonumber(A[b + 8]), acc)
        if e then return e end
      end
    end
  end
  return nil
end

-- DYN.absorb sets or clears the flag B (a failure absorbed) of task d's
-- spec.
function DYN.absorb(w, d, on)
  local spec = task_spec(w, d)
  local head, flags, tail = string.match(spec, '^([^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|)([^|:]*)(.*)$')
  local has = string.find(flags, 'B', 1, true) ~= nil
  if has == on then return end
  flags = string.gsub(flags, 'B', '')
  if on then
    if string.sub(flags, 1, 1) == 'A' then flags = 'AB' .. string.sub(flags, 2) else flags = 'B' .. flags end
  end
  spec = head .. flags .. tail
  redis.call('HSET', w.key, 't' .. fmt(d), spec)
  remember_spec(w, d, spec)
  local tj = w.tj and w.tj[d]
  if tj then tj.spec = nil end
end

-- DYN.grow writes the additions at ARGV[s] of task j, which just
-- completed, into its workflow (unless a cancel was requested or a
-- FailFast fired: then they are dropped), cancels those whose dependency
-- ended failed or cancelled (unless Always) and pushes those left without
-- a dependency, in order. Returns the indices of the cancelled ones.
function DYN.grow(j, s, fx)
  local A = DYN.A
  local w, f = j.wf, j.i
  if wflag(w, W_CANCEL) or wflag(w, W_FAIL_FAST_FIRED) then return {} end
  local gate, m = A[s] == '1', tonumber(A[s + 1])
  local fname = string.match(job_spec(j), '^[^|]*')
  EV.add('workflow_grown', w.id, 0, fname)
  local v = redis.call('HMGET', w.key, W_TASKS, 'ed', W_ALWAYS, W_HAS_UNDO, W_NAMES, 'rk')
  local n = tonumber(v[1])
  local ed = tonumber(v[2]) or DYN.edges(w, n)
  local gated = gate and DYN.gated(j) or {}
  local hs, ix, ps = {}, {}, {}
  local alw, und, names = {v[3]}, {v[4]}, {v[5]}
  -- the push marks a re-run needs (rerun_workflow.lua), when the workflow
  -- has them: "<i>s<timeout>" or "<i>d<delay>" for an added signal or
  -- delayed task
  local rk = v[6] and {v[6]}
  -- per added task: its dependents' entries among the added, whether they
  -- all absorb a failure (Always, not NoAbsorb), its dependencies, open
  -- count, cancel reason
  local dn, dall, deps, open, reason = {}, {}, {}, {}, {}
  -- per added OnFailure task: a dependency already ended not completed
  local nf = {}
  -- the existing tasks that get added dependents: order, entries, whether
  -- those all absorb a failure
  local xo, xe, xa = {}, {}, {}
  for t = 1, m do
    local b = s + 4 + (t - 1) * DYN.STRIDE
    local i = n + t
    -- "1": Always, absorbing its dependencies' failures; "2": Always
    -- and NoAbsorb; empty: not Always
    local always, absorbs, entry = A[b + 4] ~= '', A[b + 4] == '1', fmt(i) .. ' ' .. A[b + 6]
    dn[t], dall[t], deps[t], open[t] = {}, true, {}, 0
    for ref in string.gmatch(A[b + 3], '[^,]+') do
      local d
      if string.byte(ref) == 35 then
        local k = tonumber(string.sub(ref, 2))
        d = n + k
        dn[k][#dn[k] + 1] = entry
        dall[k] = dall[k] and absorbs
        open[t] = open[t] + 1
      else
        d = tonumber(redis.call('HGET', wf_ikey(w), ref))
        if not xe[d] then
          xo[#xo + 1] = d
          xe[d], xa[d] = {}, true
        end
        xe[d][#xe[d] + 1] = entry
        xa[d] = xa[d] and absorbs
        local db = task_byte(w, d)
        if d == f or not DYN.ENDED[db] then
          open[t] = open[t] + 1
        elseif db ~= 'c' and not always and not reason[t] then
          reason[t] = 'dependency ' .. ref .. ' ' .. TASK_STATE[db]
        elseif db ~= 'c' then
          nf[t] = true
        end
      end
      deps[t][#deps[t] + 1] = fmt(d)
      ed = ed + 1
    end
    if not reason[t] and open[t] == 0 and not nf[t] and string.match(A[b + 6], '^[^ ]+ [^ ]+ f') then
      -- an OnFailure task ("f" before its priority) whose dependencies
      -- all completed already
      reason[t] = 'no_failure'
    end
    local mark = rk and string.match(A[b + 6], '^[^ ]+ [^ ]+ f?%-?%d+([sd]%d+)')
    if mark then rk[#rk + 1] = fmt(i) .. mark end
    alw[#alw + 1] = always and '1' or '0'
    und[#und + 1] = A[b + 5] == '1' and '1' or '0'
    names[#names + 1] = A[b]
  end
  -- gating: the waiting dependents of j wait for every added task
  local gall, ge, gi = true, {}, {}
  local alws = v[3]
  for x, g in ipairs(gated) do
    ge[x] = g[2]
    gall = gall and string.byte(alws, g[1]) == 49 and not string.find(task_flags(w, g[1]), 'N', 1, true)
  end
  if #gated > 0 then
    for t = 1, m do gi[t] = fmt(n + t) end
    local add = table.concat(gi, ',')
    for _, g in ipairs(gated) do
      local gs = fmt(g[1])
      local dp = redis.call('HGET', w.key, 't' .. gs .. '.' .. F_DEPS)
      redis.call('HSET', w.key, 't' .. gs .. '.' .. F_DEPS, (dp and dp ~= '') and (dp .. ',' .. add) or add)
      redis.call('HINCRBY', w.key, 't' .. gs .. '.' .. F_OPEN, fmt(m))
    end
    ed = ed + #gated * m
  end
  for t = 1, m do
    local b = s + 4 + (t - 1) * DYN.STRIDE
    local is = fmt(n + t)
    local p = 't' .. is
    local ndn = #dn[t] + #gated
    local absorbed = ndn > 0 and dall[t] and gall
    local spec = A[b + 1] .. (absorbed and 'B' or '') .. A[b + 2]
    hs[#hs + 1], hs[#hs + 2] = p, spec
    remember_spec(w, n + t, spec)
    if #deps[t] > 0 then
      hs[#hs + 1], hs[#hs + 2] = p .. '.' .. F_DEPS, table.concat(deps[t], ',')
    end
    if open[t] > 0 then hs[#hs + 1], hs[#hs + 2] = p .. '.' .. F_OPEN, fmt(open[t]) end
    if nf[t] and open[t] > 0 then hs[#hs + 1], hs[#hs + 2] = p .. '.' .. F_DEP_FAILED, '1' end
    if ndn > 0 then
      local all = {}
      for _, e in ipairs(ge) do all[#all + 1] = e end
      for _, e in ipairs(dn[t]) do all[#all + 1] = e end
      hs[#hs + 1], hs[#hs + 2] = p .. '.' .. F_DEPENDENTS, table.concat(all, ';')
    end
    hs[#hs + 1], hs[#hs + 2] = p .. '.ab', fname
    ix[#ix + 1], ix[#ix + 2] = A[b], is
    if A[b + 7] == '1' then ps[#ps + 1], ps[#ps + 2] = is, A[b + 8] end
    if A[b + 9] == '1' then ps[#ps + 1], ps[#ps + 2] = 'u' .. is, A[b + 10] end
  end
  -- the existing tasks' dependents lists: the cascade of one that has not
  -- ended (the finishing task's, which follows) reaches the added tasks,
  -- and compensation finds the order; a failure of one that has not ended
  -- is absorbed only while all its dependents are Always
  for _, d in ipairs(xo) do
    local tj = task_job(w, d)
    local cur = tj.dn
    if cur == nil then cur = redis.call('HGET', w.key, 't' .. fmt(d) .. '.' .. F_DEPENDENTS) end
    local had = cur and cur ~= ''
    local add = table.concat(xe[d], ';')
    local new = had and (cur .. ';' .. add) or add
    redis.call('HSET', w.key, 't' .. fmt(d) .. '.' .. F_DEPENDENTS, new)
    tj.dn = new
    if d == f then j.dn = new end
    if d ~= f and not DYN.ENDED[task_byte(w, d)] then
      DYN.absorb(w, d, xa[d] and (not had or string.find(task_flags(w, d), 'B', 1, true) ~= nil))
    end
  end
  local nn = n + m
  hs[#hs + 1], hs[#hs + 2] = W_TASKS, fmt(nn)
  hs[#hs + 1], hs[#hs + 2] = 'ed', fmt(ed)
  hs[#hs + 1], hs[#hs + 2] = W_ALWAYS, table.concat(alw)
  hs[#hs + 1], hs[#hs + 2] = W_HAS_UNDO, table.concat(und)
  hs[#hs + 1], hs[#hs + 2] = W_NAMES, table.concat(names, '\n')
  if rk and #rk > 1 then
    if rk[1] == '' then table.remove(rk, 1) end
    hs[#hs + 1], hs[#hs + 2] = 'rk', table.concat(rk, ',')
  end
  if n < 8 and nn >= 8 then
    -- as codec.go's hashTableTasks: keep both hashes hash tables
    hs[#hs + 1], hs[#hs + 2] = ':ht', string.rep('-', 65)
    ix[#ix + 1], ix[#ix + 2] = ':ht', string.rep('-', 65)
  end
  for a = 1, #hs, 1000 do redis.call('HSET', w.key, unpack(hs, a, math.min(a + 999, #hs))) end
  for a = 1, #ix, 1000 do redis.call('HSET', wf_ikey(w), unpack(ix, a, math.min(a + 999, #ix))) end
  for a = 1, #ps, 1000 do redis.call('HSET', w.pkey, unpack(ps, a, math.min(a + 999, #ps))) end
  w.m[W_TASKS] = fmt(nn)
  w.m[W_ALWAYS], w.m[W_HAS_UNDO], w.m[W_NAMES] = table.concat(alw), table.concat(und), table.concat(names, '\n')
  w.m[W_REMAINING] = fmt(redis.call('HINCRBY', w.key, W_REMAINING, fmt(m)))
  redis.call('SETRANGE', w.skey, fmt(n), string.rep('w', m))
  if w.S then w.S = w.S .. string.rep('w', m) end
  local born = {}
  for t = 1, m do
    if reason[t] then
      cancel_task(task_job(w, n + t), reason[t], fx)
      born[#born + 1] = n + t
    end
  end
  for t = 1, m do
    if not reason[t] and open[t] == 0 then
      local b = s + 4 + (t - 1) * DYN.STRIDE
      local is = fmt(n + t)
      local name, q, pr = string.match(A[b + 6], '^([^ ]+) ([^ ]+) f?([^ ]+)')
      SIG.push(promoted(w, n + t, is, name, q, pr), pr, fx)
    end
  end
  return born
end

-- DYN.ended runs the end of task j, which completed with additions
-- (j.add, where their block starts): the additions, then the cascade of
-- j and of the added tasks cancelled at once, in that order. origin: as
-- task_ended's.
function DYN.ended(j, fx, origin)
  local born = DYN.grow(j, j.add, fx)
  cascade(j.wf, j.i, nil, nil, born, 1 + #born, origin, fx)
end
