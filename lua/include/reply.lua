-- reply.lua: flat-array encoders for replies (no nil inside arrays; every
-- scalar a string). Needs core.lua and jobs.lua. Decoded by lua/codec.go.

-- append adds list's items to out; one length look-up per call (# on a
-- large table being grown costs a search each time).
local function append(out, list)
  local n = #out
  for i = 1, #list do out[n + i] = list[i] end
end

-- put_snapshot appends a job snapshot: 23 strings, in this order:
-- id queue workflow task undo hasPayload payload priority maxAttempts
-- backoff timeout state attempt runAt token deadline cancelRequested
-- hasResult result error created ended expires
local function put_snapshot(out, j)
  local a = jattr(j)
  local wid, task, undo, pay, created, expires = '', '', '', nil, nil, nil
  if j.kind == 'j' then
    pay = hget(j.key, 'p')
    created = hget(j.key, 'c')
    expires = hget(j.key, 'x')
  else
    local w = j.wf
    wid = w.id
    task = tname(w, j.i)
    if j.kind == 'u' then
      undo = '1'
      pay = hget(w.pkey, 'u' .. tostring(j.i))
      created = jget(j, 'c')
    else
      pay = hget(w.pkey, tostring(j.i))
      created = hget(w.key, 'c')
    end
    expires = hget(w.key, 'x')
  end
  local res = jget(j, 'r')
  local st = jstate(j)
  -- tk and dl are left in place when a lease ends: shown while running only
  local tk, dl = '', '0'
  if st == 'running' then tk, dl = jget(j, 'tk') or '', jget(j, 'dl') or '0' end
  local t = {j.id, a.q, wid, task, undo, pay and '1' or '', pay or '', fmt(a.pr), fmt(a.ma), fmt(a.bo),
    fmt(a.to), st, jget(j, 'a') or '0', jget(j, 'ra') or '0', tk,
    dl, jget(j, 'cr') or '', res and '1' or '', res or '', jerr(j) or '',
    created or '0', jended(j) or '0', expires or '0'}
  append(out, t)
end

local function put_dep(out, w, i)
  local r = hget(w.key, 't' .. tostring(i) .. '.r')
  append(out, {tname(w, i), tstate(w, i), r and '1' or '', r or '', terr(w, i) or ''})
end

-- put_deps appends the count of a claimed job's dependency outcomes, then
-- 5 strings each: task state hasResult result error.
local function put_deps(out, j)
  if j.kind == 'j' then
    out[#out + 1] = '0'
  elseif j.kind == 'u' then
    out[#out + 1] = '1'
    put_dep(out, j.wf, j.i)
  else
    local deps = spec(j.wf, j.i).deps
    out[#out + 1] = fmt(#deps)
    for _, d in ipairs(deps) do put_dep(out, j.wf, d) end
  end
end

-- put_list appends a count then the items.
local function put_list(out, list, per)
  out[#out + 1] = fmt(#list / per)
  append(out, list)
end

-- put_settled appends: id code state runAt wfState wfEnded nPushed (id queue)*
local function put_settled(out, s)
  if s.code then
    append(out, {s.id, s.code, '', '0', '', '', '0'})
    return
  end
  append(out, {s.id, '', s.state, fmt(s.run_at), s.wf_state, s.wf_ended and '1' or ''})
  put_list(out, s.pushed, 2)
end

-- lease_job leases a queued job and appends its Claimed to out.
local function lease_job(j, lease_ms, out)
  local a = jattr(j)
  set_state(j, 'running')
  jset(j, 'a', fmt(num(jget(j, 'a')) + 1))
  jset(j, 'tk', fmt(next_seq('lease')))
  local dl = NOW + lease_ms
  jset(j, 'dl', fmt(dl))
  zadd(qkey(a.q, 'a'), dl, j.id)
  put_snapshot(out, j)
  put_deps(out, j)
end

-- zpopmin removes and returns (members only, lowest score first) up to n
-- members of k, as a flush then ZPOPMIN would. With adds of k buffered
-- (a job pushed earlier in this call, as in a chain step's finish and
-- claim), it reads the set's first n members, takes the lowest n of both,
-- removes those taken from the set (none when the set had nothing lower)
-- and keeps the rest buffered: one command instead of ZADD + ZPOPMIN.
local function zpopmin(k, n)
  local b = ZB[k]
  local out = {}
  if not b or ZR[k] then
    zflush(k)
    local got = redis.call('ZPOPMIN', k, n)
    for i = 1, #got, 2 do out[#out + 1] = got[i] end
    return out
  end
  local r = redis.call('ZRANGE', k, 0, n - 1, 'WITHSCORES')
  local all, inb = {}, {}
  for i = 1, #b, 2 do
    all[#all + 1] = {tonumber(b[i]), b[i + 1], true}
    inb[b[i + 1]] = true
  end
  for i = 1, #r, 2 do
    if inb[r[i]] then
      -- a buffered member also in the set: let Redis decide its score
      zflush(k)
      local got = redis.call('ZPOPMIN', k, n)
      for x = 1, #got, 2 do out[#out + 1] = got[x] end
      return out
    end
    all[#all + 1] = {tonumber(r[i + 1]), r[i], false}
  end
  table.sort(all, function(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    return a[2] < b[2]
  end)
  local fromset, taken = 0, {}
  for i = 1, math.min(n, #all) do
    local e = all[i]
    out[i] = e[2]
    if e[3] then taken[e[2]] = true else fromset = fromset + 1 end
  end
  if fromset > 0 then redis.call('ZPOPMIN', k, fromset) end
  local rest = {}
  for i = 1, #b, 2 do
    if not taken[b[i + 1]] then
      rest[#rest + 1] = b[i]
      rest[#rest + 1] = b[i + 1]
    end
  end
  if #rest > 0 then ZB[k] = rest else ZB[k] = nil end
  return out
end

-- claim leases up to max jobs from queues, in order, sweeping each queue
-- first; appends the Claimed to out and returns how many.
local function claim(queues, max, lease_ms, out)
  local seen = {}
  local n = 0
  for _, q in ipairs(queues) do
    if not seen[q] then
      seen[q] = true
      local p = hget(K_QUEUES, q)
      if p == '0' then
        sweep(q, SWEEP_PER_CLAIM, nil)
        local rk = qkey(q, 'r')
        local n0 = n
        while n < max do
          local want = max - n
          local got = zpopmin(rk, want)
          for k = 1, #got do
            local j = load_job(got[k])
            if j and jstate(j) == 'queued' then
              lease_job(j, lease_ms, out)
              n = n + 1
            end
          end
          -- fewer than asked: the queue is empty, no second ZPOPMIN
          if #got < want then break end
        end
        -- every lease taken here ends at now + lease_ms: one hint update
        if n > n0 then note_due(q, NOW + lease_ms) end
        if n < max then wake_clear(q) end
      elseif p == '1' then
        wake_clear(q)
      end
      if n == max then break end
    end
  end
  return n
end

-- next_due returns the earliest delayed job or lease deadline of the known,
-- unpaused queues, or 0.
local function next_due(queues)
  local best = 0
  for _, q in ipairs(queues) do
    if hget(K_QUEUES, q) == '0' then
      for _, kind in ipairs({'d', 'a'}) do
        local k = qkey(q, kind)
        zflush(k)
        local r = redis.call('ZRANGE', k, 0, 0, 'WITHSCORES')
        if #r > 0 then
          local t = tonumber(r[2])
          if best == 0 or t < best then best = t end
        end
      end
    end
  end
  return best
end

-- queues_reply is the reply of queues (and the first item of observe's):
-- the number of known queues, then per queue in name order its name, "1"
-- when paused (else ""), and its ready, delayed and running counts.
local function queues_reply()
  local names = redis.call('HKEYS', K_QUEUES)
  table.sort(names)
  local out = {fmt(#names)}
  for _, q in ipairs(names) do
    append(out, {q, hget(K_QUEUES, q) == '1' and '1' or '', fmt(redis.call('ZCARD', qkey(q, 'r'))),
      fmt(redis.call('ZCARD', qkey(q, 'd'))), fmt(redis.call('ZCARD', qkey(q, 'a')))})
  end
  return out
end
