-- fast_task.lua: the claim's fast path for a workflow's task, and the
-- chain hand-off (spec/scripts.md, Fast paths): a task popped from a
-- queue's ready set, or handed over by the finish of the same call that
-- promoted it, leased without the general code's job and workflow tables,
-- writing what claiming and lease_job (lease.lua) write for it and
-- appending the same Claimed.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include queue.lua
--!include events.lua
--!include fast_ready.lua
--
-- The call's pending state bytes are in CALL (begin resets it): fsk, flo,
-- fsb the run of bytes not yet written (the key of a workflow's state
-- string, the index of its first byte, the bytes). CALL.hand is the task
-- a finish hands over (FF.hand_off), until the claim takes it or
-- FF.hand_drop pushes it. CALL.fpf is what FF.lease_run read for a run of
-- one workflow's tasks that a claim took in a row, and CALL.fhk, CALL.fhs,
-- CALL.fhn the workflow's hash and the HSET arguments of the run's
-- leases, not yet written (FF.run_write writes them), and their count.

-- FF.t16 and FF.t64 make a table whose array part has room for 16 and
-- 64 values, filled from 1 on with a count kept aside (unpack(t, 1,
-- n)): a {} grows by doubling, a rehash and a resize at each power of
-- two.
function FF.t16() return {nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil} end

-- FF.t256: room for 256 (finish.lua's reply).
function FF.t256()
  return {nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
end

function FF.t64()
  return {nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
    nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil}
end

-- FF.byte sets the bytes of the state string sk from index i on to b
-- (one byte, or a run: a fan-in's roots): appended to the pending run
-- when adjacent to it (a chain step's "cq", a fan-in's roots and join),
-- changed in it when inside (a handed-over task's "q" becoming "r"), else
-- written after the run before it.
function FF.byte(sk, i, b)
  local k = CALL.fsk
  if k == sk then
    local lo, s = CALL.flo, CALL.fsb
    if i == lo + #s then
      CALL.fsb = s .. b
      return
    elseif i + #b == lo then
      CALL.flo, CALL.fsb = i, b .. s
      return
    elseif i >= lo and i + #b <= lo + #s then
      CALL.fsb = string.sub(s, 1, i - lo) .. b .. string.sub(s, i - lo + #b + 1)
      return
    end
  end
  if k then redis.call('SETRANGE', k, fmt(CALL.flo - 1), CALL.fsb) end
  CALL.fsk, CALL.flo, CALL.fsb = sk, i, b
end

-- FF.run_write writes what the fast paths keep pending: the HSET of a
-- handed-over task's finish (FF.hand_off) and the run of state bytes.
-- Called before the general code reads or writes anything, and at the end
-- of a claim's batch.
function FF.run_write()
  local h = CALL.hand
  if h and h.hs then
    redis.call('HSET', h.key, unpack(h.hs))
    h.hs = nil
  end
  local hs = CALL.fhs
  if hs then
    redis.call('HSET', CALL.fhk, unpack(hs, 1, CALL.fhn))
    CALL.fhs = nil
  end
  local k = CALL.fsk
  if k then
    redis.call('SETRANGE', k, fmt(CALL.flo - 1), CALL.fsb)
    CALL.fsk = nil
  end
end

-- FF.hand_ok reports whether the task a finish promotes now into queue q,
-- where it is alone, may be handed to the call's claim instead of pushed:
-- the claim's first queue is q (finish.lua's CALL.hq, set for the call's
-- last outcome only, so that no outcome settled after it can see the
-- ready set without the task), known, not paused, without a concurrency
-- or rate limit, and its sweep reads nothing (its due hint ahead of now,
-- sweep.lua): between this finish and the claim's take nothing runs that
-- could push into q or read its ready set.
function FF.hand_ok(q)
  if CALL.hq ~= q then return false end
  local s = qstate(q)
  local h = s.n
  return s.w and s.p ~= '1' and not s.c and not s.rl and h and (h == 'none' or tonumber(h) > NOW) and true or false
end

-- FF.hand_off keeps task did (index ds, a string) of workflow wid (hash
-- key), promoted into queue q (its push counted: FF.ready_hold), for the call's claim
-- instead of pushing it: its one dependency just completed (index dep, a
-- string; its spec and result r, false for none), its ready-at rd, and hs
-- the HSET of the workflow's hash that the finish has not written (the
-- claim adds the lease's fields to it).
function FF.hand_off(did, q, key, ds, dep, spec, r, rd, hs)
  CALL.hand = {id = did, q = q, key = key, is = ds, dep = dep, spec = spec, r = r, rd = rd, hs = hs}
end

-- FF.hand_drop ends a hand-off that the claim did not take: the task is
-- pushed as the finish would have pushed it (its push counted then), and
-- what was pending is written.
function FF.hand_drop()
  local h = CALL.hand
  if not h then return end
  if not h.taken then FF.ready_release(h.q, h.id) end
  FF.run_write()
  CALL.hand = nil
end

-- FF.lease_run reads at once, for the run of tasks of workflow wid (hash
-- key) that a claim took in a row from got (every step-th value, from k
-- on: names without a "/", each once, at most 100), what FF.lease_task
-- reads for each: their indexes (one HMGET of the name index), their
-- workflow's fields and theirs (one HMGET), their state bytes and their
-- dependencies' (one GETRANGE) and their payloads (one HMGET). Returns
-- nil, having read what it read, when the run is shorter than 2 or a read
-- fails (a key of another type): each task is then read on its own.
function FF.lease_run(wid, key, got, k, step)
  local pre = wid .. '/'
  local np = #pre
  -- each once: a name is compared with the run's before it (a run is
  -- short; no table of names seen)
  local names, n = FF.t16(), 0
  local j, ng = k, #got
  while j <= ng and n < 100 do
    local nx = got[j]
    local nm = string.sub(nx, np + 1)
    if pre .. nm ~= nx or string.find(nm, '/', 1, true) then break end
    local z = 1
    while z <= n and names[z] ~= nm do z = z + 1 end
    if z <= n then break end
    n = n + 1
    names[n] = nm
    j = j + step
  end
  if n < 2 then return nil end
  -- the workflow's name index, state string and payloads (P w:<id>:...)
  local ik, sk, pk = key .. ':i', key .. ':s', key .. ':p'
  local ix = redis.pcall('HMGET', ik, unpack(names, 1, n))
  if ix.err then return nil end
  local f = FF.t64()
  f[1], f[2], f[3], f[4] = W_STATE, W_EXPIRES, F_CREATED, F_TRACE
  local m = 4
  for y = 1, n do
    local is = ix[y] or '0'
    local t = 't' .. is
    local p = t .. '.'
    f[m + 1], f[m + 2], f[m + 3], f[m + 4], f[m + 5] = t, p .. F_ATTEMPT, p .. F_DEPS, p .. 'ck', p .. F_READY
    m = m + 5
  end
  local v = redis.pcall('HMGET', key, unpack(f, 1, m))
  if v.err then return nil end
  -- the span of the state bytes the run's leases read; ni: the indexes
  -- as numbers (0 for none)
  local lo, hi
  local ni = FF.t16()
  for y = 1, n do
    local i = tonumber(ix[y])
    if i then
      ni[y] = i
      if not lo or i < lo then lo = i end
      if not hi or i > hi then hi = i end
      local dp = v[4 + 5 * (y - 1) + 3]
      if dp and dp ~= '' then
        for d in string.gmatch(dp, '%d+') do
          d = tonumber(d)
          if d < lo then lo = d end
          if d > hi then hi = d end
        end
      end
    else
      ni[y] = 0
      ix[y] = '0'
    end
  end
  if not lo then return nil end
  local S
  if hi - lo < 4096 then
    S = redis.pcall('GETRANGE', sk, fmt(lo - 1), fmt(hi - 1))
  else
    S, lo = redis.pcall('GET', sk) or '', 1
  end
  if type(S) ~= 'string' then return nil end
  -- (ix's values, "0" for none)
  local pay = redis.pcall('HMGET', pk, unpack(ix, 1, n))
  if pay.err then return nil end
  -- (x: the workflow past its expiry, for each lease)
  local pf = {wid = wid, key = key, skey = sk, got = got, k = k, step = step, n = n, is = ix, ni = ni, f = f, v = v, S = S,
    lo = lo, pay = pay, r = FF.t16(), x = expired_at(v[2])}
  CALL.fpf = pf
  return pf
end

-- FF.deps returns a task's dependencies list dp ("1,5,7") parsed once:
-- the indexes as strings, as numbers, and how many.
function FF.deps(dp)
  local dds, ddn, dk = {}, {}, 0
  for d in string.gmatch(dp, '%d+') do
    dk = dk + 1
    dds[dk], ddn[dk] = d, tonumber(d)
  end
  return dds, ddn, dk
end

-- FF.lease_task leases task id, popped from a queue's ready set or handed
-- over, until dls, with the lease counter at cnt (nil: the seq hash's),
-- appending its Claimed to out, and returns the counter it used; or
-- returns false having written nothing, for the general code: an undo, a
-- workflow this call met before, a record gone, past its retention or not
-- written by weir, a task not queued or with a checkpoint, a dependency
-- list the general code pages. got, k and step (FF.lease's) say where id
-- is among the IDs its claim took: the tasks of its workflow that follow
-- it there are read with it (FF.lease_run), and their leases written in
-- one HSET.
function FF.lease_task(id, dls, out, cnt, got, k, step)
  local wid, name, key, skey, h
  -- a task of the run FF.lease_run read (y: its place in it; a run is
  -- two or more, so never a hand-off), or read now, alone or with the
  -- tasks after it
  local pf, y = CALL.fpf, nil
  if pf and got and pf.got == got and k > pf.k and (k - pf.k) % step == 0 and (k - pf.k) / step < pf.n then
    wid = pf.wid
    local wfs = CALL.wfs
    if wfs and wfs[wid] ~= nil then return false end
    key, skey = pf.key, pf.skey
    y = (k - pf.k) / step + 1
  else
    pf = nil
    local s1 = string.find(id, '/', 1, true)
    wid, name = string.sub(id, 1, s1 - 1), string.sub(id, s1 + 1)
    if string.find(name, '/', 1, true) then return false end
    local wfs = CALL.wfs
    if wfs and wfs[wid] ~= nil then return false end
    h = CALL.hand
    if h and not (h.taken and h.id == id) then h = nil end
    key = P .. 'w:' .. wid
    skey = key .. ':s'
    if not h and got then
      local nx = got[k + step]
      if nx and string.sub(nx, 1, s1) == wid .. '/' then
        pf = FF.lease_run(wid, key, got, k, step)
        if pf then y = 1 end
      end
    end
  end
  local is, i, v, o, S, lo, pay
  if pf then
    is, i = pf.is[y], pf.ni[y]
    v, o, S, lo = pf.v, 4 + 5 * (y - 1), pf.S, pf.lo
    -- its own byte queued (a task of the run leased before it is "r")
    if i == 0 or not v[1] or (pf.x and not KEEP[wid]) or not v[o + 1] or v[o + 4] or pf.r[i] or
      string.sub(S, i - lo + 1, i - lo + 1) ~= 'q' then
      -- the general code: the run's reads are left
      CALL.fpf = nil
      return false
    end
    pf.r[i] = true
    pay = pf.pay[y]
  else
    is = h and h.is
    if not is then
      local ik = key .. ':i'
      is = redis.pcall('HGET', ik, name)
      if type(is) ~= 'string' then return false end
    end
    local t = 't' .. is
    local p = t .. '.'
    local w = redis.pcall('HMGET', key, W_STATE, W_EXPIRES, F_CREATED, F_TRACE, t, p .. F_ATTEMPT, p .. F_DEPS, p .. 'ck',
      p .. F_READY)
    if w.err or not w[1] or (expired_at(w[2]) and not KEEP[wid]) or not w[5] or w[8] then return false end
    v, o = w, 4
    i = tonumber(is)
  end
  local dp = v[o + 3]
  local nd = 0
  -- dds, ddn: its dependencies' indexes and their numbers, dk how many,
  -- parsed once for the state bytes' read and its Claimed when it reads
  -- them itself (neither a run's nor handed over)
  local dds, ddn, dk
  if dp and dp ~= '' then
    if pf or h then
      nd = select(2, string.gsub(dp, ',', ',')) + 1
    else
      -- (sized when it has several: a join's; a chain's one does
      -- without)
      if string.find(dp, ',', 1, true) then dds, ddn = FF.t16(), FF.t16() else dds, ddn = {}, {} end
      dk = 0
      for d in string.gmatch(dp, '%d+') do
        dk = dk + 1
        dds[dk], ddn[dk] = d, tonumber(d)
      end
      nd = dk
    end
  end
  if nd > 100 then nd = -1 end -- lease.lua's DEPS_INLINE: "L" and the list
  -- the state bytes the lease reads: its own (known when handed over)
  -- and its dependencies' (but the one a hand-off knows), in one read
  local known = h and dp == h.dep
  if not pf and (not h or (nd > 0 and not known)) then
    if h then FF.run_write() end
    local hi
    if not h then lo, hi = i, i end
    if nd > 0 then
      if not dds then dds, ddn, dk = FF.deps(dp) end
      for z = 1, dk do
        local x = ddn[z]
        if not lo or x < lo then lo = x end
        if not hi or x > hi then hi = x end
      end
    end
    -- a state string of another type (not weir's): the general code
    -- quarantines the task
    if hi - lo < 4096 then
      S = redis.pcall('GETRANGE', skey, fmt(lo - 1), fmt(hi - 1))
    else
      S, lo = redis.pcall('GET', skey) or '', 1
    end
    if type(S) ~= 'string' or (not h and string.sub(S, i - lo + 1, i - lo + 1) ~= 'q') then return false end
  end
  -- leased: the token (the counter, the call's nonce, the index), its
  -- attempt, and an error and expiry count left by an earlier attempt
  -- (read only after one: a first attempt has neither)
  cnt = (cnt or tonumber(seq_get('lease')) or 0) + 1
  local token = fmt(cnt) .. '-' .. CALL.nonce .. '.' .. is
  local p = 't' .. is .. '.'
  -- (its attempt's field name: the run's read)
  local pa = pf and pf.f[o + 2] or p .. F_ATTEMPT
  local a, e, xp = v[o + 2], nil, nil
  if a and a ~= '0' then
    local ex = redis.call('HMGET', key, p .. F_ERROR, p .. F_EXPIRIES)
    e, xp = ex[1], ex[2]
  end
  if a then a = fmt(tonumber(a) + 1) else a = '1' end
  if not pf then
    local pk = key .. ':p'
    pay = redis.call('HGET', pk, is)
  end
  local hs = h and h.hs
  if hs then
    -- one HSET with the finish's
    h.hs = nil
    local m = #hs
    hs[m + 1], hs[m + 2], hs[m + 3], hs[m + 4], hs[m + 5], hs[m + 6] = pa, a, p .. F_TOKEN, token, p .. F_DEADLINE, dls
    hs[m + 7], hs[m + 8] = p .. 'w', CALL.wk
    redis.call('HSET', key, unpack(hs))
  elseif pf then
    -- one HSET for the run (FF.run_write)
    -- (CALL.fhn: its count)
    hs = CALL.fhs
    local m = CALL.fhn
    if hs and CALL.fhk ~= key then
      redis.call('HSET', CALL.fhk, unpack(hs, 1, m))
      hs = nil
    end
    if not hs then
      hs, m = FF.t64(), 0
      CALL.fhk, CALL.fhs = key, hs
    end
    hs[m + 1], hs[m + 2], hs[m + 3], hs[m + 4], hs[m + 5], hs[m + 6] = pa, a, p .. F_TOKEN, token, p .. F_DEADLINE, dls
    hs[m + 7], hs[m + 8] = p .. 'w', CALL.wk
    CALL.fhn = m + 8
  else
    redis.call('HSET', key, pa, a, p .. F_TOKEN, token, p .. F_DEADLINE, dls, p .. 'w', CALL.wk)
  end
  if pf and CALL.fsk == skey and i == CALL.flo + #CALL.fsb then
    CALL.fsb = CALL.fsb .. 'r'
  else
    FF.byte(skey, i, 'r')
  end
  EV.add('started', id, a, '', CALL.wk)
  local spec = v[o + 1]
  local q = string.match(spec, '^[^|]*|([^|]*)')
  -- (active_add_later, its list looked up here)
  local al = CALL.aadd
  al = al and al[q]
  if al then
    local z = #al
    al[z + 1], al[z + 2] = dls, id
  else
    active_add_later(q, dls, id)
  end
  local leased = CALL.leased or bag('leased')
  leased[#leased + 1] = id
  leased[#leased + 1] = token
  -- its Claimed, packed (lease.lua's put_claimed; no checkpoint: a task
  -- with one is the general code's): the values never packed appended
  -- after it, the packed value written last, at m0
  local m0 = #out + 1
  local m = m0
  out[m0] = ''
  if pay then
    m = m + 1
    out[m] = pay
  end
  if e == '' then e = nil end
  if e then
    m = m + 1
    out[m] = e
  end
  local deps = '0'
  if nd < 0 then
    deps = 'L' .. dp
  elseif known then
    local r = h.r
    if r then
      m = m + 1
      out[m] = r
      deps = '1\n' .. h.spec .. '\ncompleted\nr'
    else
      deps = '1\n' .. h.spec .. '\ncompleted\n'
    end
  elseif nd > 0 then
    -- each dependency's spec and result, and its error unless its
    -- state says what that is: none for a completed task (settle.lua
    -- clears a failed attempt's), the state's for W and D
    local f, bs, nf, nb
    if nd > 4 then f, bs = FF.t64(), FF.t16() else f, bs = {}, {} end
    nf, nb = 0, 0
    local r0 = pf and pf.r
    if not dds then dds, ddn, dk = FF.deps(dp) end
    for di = 1, dk do
      local d, x = dds[di], ddn[di]
      local dt = 't' .. d
      local b
      -- a task of the run leased before it
      if r0 and r0[x] then
        b = 'r'
      else
        b = string.sub(S, x - lo + 1, x - lo + 1)
      end
      nb = nb + 1
      bs[nb] = b
      f[nf + 1] = dt
      f[nf + 2] = dt .. '.' .. F_RESULT
      nf = nf + 2
      if b ~= 'c' and b ~= 'W' and b ~= 'D' then
        nf = nf + 1
        f[nf] = dt .. '.' .. F_ERROR
      end
    end
    local dv = redis.call('HMGET', key, unpack(f, 1, nf))
    -- (f, read, then holds the dependencies' packed parts)
    local x = 0
    for z = 1, nb do
      local b = bs[z]
      local dsp, r, de = dv[x + 1], dv[x + 2], nil
      if b == 'c' then
        x = x + 2
      elseif b == 'W' then
        de = 'workflow cancelled'
        x = x + 2
      elseif b == 'D' then
        de = 'deadline'
        x = x + 2
      else
        de = dv[x + 3]
        if de == '' then de = nil end
        x = x + 3
      end
      local fl = ''
      if r then
        m = m + 1
        out[m] = r
        fl = 'r'
      end
      if de then
        m = m + 1
        out[m] = de
        fl = fl .. 'e'
      end
      f[z] = (dsp or '') .. '\n' .. TASK_STATE[b] .. '\n' .. fl
    end
    deps = fmt(nd) .. '\n' .. table.concat(f, '\n', 1, nb)
  end
  local rd = v[o + 5]
  if h then rd = h.rd end
  local tp = v[4]
  out[m0] = id .. '\n' .. spec .. '\n' .. (v[3] or '0') .. '\n' .. a .. '\n' .. token .. '\n' .. dls .. '\n' ..
    (xp or '0') .. '\n' .. (pay and 'p' or '') .. (e and 'e' or '') .. '\n' .. deps .. (tp and '\nt' .. tp or '') ..
    (rd and '\nr' .. rd or '')
  return cnt
end
