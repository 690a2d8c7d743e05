-- finalize.lua: the end of every write script: publish outcomes that are
-- awaited, give ended records their removal time, write the buffers, sweep
-- expired records. Needs core.lua and jobs.lua.

local PUB = {}
local UNLINK = {} -- plain jobs ended with retention 0 that nobody awaits

-- note_gc lowers the seq hash's "gc" (the earliest removal time in the
-- expiry index: a time, "none", or absent for unknown) to at.
local function note_gc(at)
  local g = hget(K_SEQ, 'gc')
  if g and (g == 'none' or at < tonumber(g)) then hset(K_SEQ, 'gc', fmt(at)) end
end

-- expire_records registers the removal of every record ended by this
-- script; called by finalize before the flushes.
local function expire_records()
  local ttl = {}
  for _, w in ipairs(ENDED_W) do
    local x = num(hget(w.key, 'x'))
    local st = hget(w.key, 'st')
    local at = x
    if awaited(P .. 'wait:w:' .. w.id) then
      PUB[#PUB + 1] = P .. 'o:w:' .. w.id
      PUB[#PUB + 1] = st
      if at < NOW + GRACE then at = NOW + GRACE end
    end
    zadd(K_EXPIRY, at, 'w:' .. st .. ':' .. pad15(num(hget(w.key, 'c'))) .. ':' .. w.id)
    note_gc(at)
    ttl[#ttl + 1] = w.key
    ttl[#ttl + 1] = at
    ttl[#ttl + 1] = w.pkey
    ttl[#ttl + 1] = at
    ttl[#ttl + 1] = w.skey
    ttl[#ttl + 1] = at
    ttl[#ttl + 1] = w.ikey
    ttl[#ttl + 1] = at
  end
  for _, j in ipairs(ENDED_J) do
    if j.kind == 'j' then
      local st = hget(j.key, 's')
      local at = num(hget(j.key, 'x'))
      local waited = awaited(P .. 'wait:j:' .. j.id)
      if waited then
        PUB[#PUB + 1] = P .. 'o:j:' .. j.id
        PUB[#PUB + 1] = st
        if at < NOW + GRACE then at = NOW + GRACE end
      end
      if RETENTION == 0 and not waited then
        -- retention 0, nobody waits: delete now instead of writing the
        -- job's last fields and an expiry entry that gc would remove
        D[j.key] = nil
        UNLINK[#UNLINK + 1] = j.key
      else
        zadd(K_EXPIRY, at, 'j:' .. j.id)
        note_gc(at)
        ttl[#ttl + 1] = j.key
        ttl[#ttl + 1] = at
      end
    elseif awaited(P .. 'wait:wj:' .. j.wf.id) then
      PUB[#PUB + 1] = P .. 'o:j:' .. j.id
      PUB[#PUB + 1] = jstate(j)
    end
  end
  return ttl
end

-- gc removes up to GC_MAX records whose removal time passed: their keys and
-- their index entries. A record re-created under the same ID is left alone.
local function gc()
  local g = hget(K_SEQ, 'gc')
  if g == 'none' or (g and tonumber(g) > NOW) then return end
  zflush(K_EXPIRY)
  local due = redis.call('ZRANGEBYSCORE', K_EXPIRY, '-inf', NOW_S, 'LIMIT', 0, GC_MAX)
  for _, m in ipairs(due) do
    local kind = string.sub(m, 1, 1)
    if kind == 'j' then
      local key = P .. 'j:' .. string.sub(m, 3)
      local x = redis.call('HGET', key, 'x')
      if x and x ~= '' and x ~= '0' and tonumber(x) <= NOW then redis.call('UNLINK', key) end
    else
      local f = split(m, ':')
      local st, c, id = f[2], f[3], f[4]
      local key = P .. 'w:' .. id
      local x = redis.call('HGET', key, 'x')
      local gone = redis.call('EXISTS', key) == 0
      if gone or (x and x ~= '' and x ~= '0' and tonumber(x) <= NOW) then
        if not gone then redis.call('UNLINK', key, key .. ':p', key .. ':s', key .. ':i') end
        redis.call('ZREM', K_WF, c .. ':' .. id)
        redis.call('ZREM', P .. 'wf:' .. st, c .. ':' .. id)
      end
    end
    redis.call('ZREM', K_EXPIRY, m)
  end
  local first = redis.call('ZRANGE', K_EXPIRY, 0, 0, 'WITHSCORES')
  local next_gc = 'none'
  if #first > 0 then next_gc = first[2] end
  redis.call('HSET', K_SEQ, 'gc', next_gc)
  C[K_SEQ].gc = next_gc
end

-- apply_overlay returns S with the overlay's bytes put in place.
local function apply_overlay(S, SO)
  local pos = {}
  for i in pairs(SO) do pos[#pos + 1] = i end
  table.sort(pos)
  local parts, prev = {}, 1
  for _, i in ipairs(pos) do
    parts[#parts + 1] = string.sub(S, prev, i - 1)
    parts[#parts + 1] = SO[i]
    prev = i + 1
  end
  parts[#parts + 1] = string.sub(S, prev)
  return join(parts, '')
end

-- flush_states writes the task-state strings that changed: one SETRANGE
-- per run of adjacent changed bytes when few changed (a chain step changes
-- tasks i and i+1: one command), else whole.
local function flush_states()
  for _, w in ipairs(SDIRTY) do
    if w.sfull or w.SN > 32 then
      redis.call('SET', w.skey, apply_overlay(w.S, w.SO))
    else
      local pos = {}
      for i in pairs(w.SO) do pos[#pos + 1] = i end
      table.sort(pos)
      local x = 1
      while x <= #pos do
        local y = x
        while pos[y + 1] == pos[y] + 1 do y = y + 1 end
        local run = w.SO[pos[x]]
        for z = x + 1, y do run = run .. w.SO[pos[z]] end
        redis.call('SETRANGE', w.skey, pos[x] - 1, run)
        x = y + 1
      end
    end
  end
  SDIRTY = {}
end

-- finalize writes everything buffered; every write script ends with it.
local function finalize()
  if NOW > CLOCK_LAST then hset(K_SEQ, 'now', NOW_S) end
  local ttl = expire_records()
  -- wake-up lists: decided before the hash flush, which writes their flags
  local dels, pushes = {}, {}
  for q in pairs(WAKE_DEL) do
    if hget(K_SEQ, 'k:' .. q) ~= '0' then
      dels[#dels + 1] = q
      hset(K_SEQ, 'k:' .. q, '0')
    end
  end
  for _, q in ipairs(WAKEQ) do
    local n = WAKE[q]
    -- tokens only while a claim may be blocked on q (always with the test
    -- clock, whose now need not follow real time)
    if n > 0 and TEST_NOW == '' and not WAKE_NEW[q] and num(hget(K_SEQ, wq(q))) < NOW then n = 0 end
    if n > 0 then
      if n > 1000 then n = 1000 end
      WAKE[q] = n
      pushes[#pushes + 1] = q
      hset(K_SEQ, 'k:' .. q, '1') -- no read: the seq hash is written anyway
    end
  end
  flush_states()
  flush_hashes()
  for i = 1, #UNLINK, 1000 do redis.call('UNLINK', unpack(UNLINK, i, math.min(i + 999, #UNLINK))) end
  for _, k in ipairs(ZRK) do zflush(k) end
  ZRK = {}
  for _, k in ipairs(ZBK) do zflush(k) end
  ZBK = {}
  for _, q in ipairs(dels) do redis.call('DEL', qkey(q, 'w')) end
  for _, q in ipairs(pushes) do
    local toks = {}
    for i = 1, WAKE[q] do toks[i] = '1' end
    local k = qkey(q, 'w')
    if redis.call('LPUSH', k, unpack(toks)) > 2000 then redis.call('LTRIM', k, 0, 999) end
  end
  if TEST_NOW == '' then
    for i = 1, #ttl, 2 do redis.call('PEXPIREAT', ttl[i], fmt(ttl[i + 1])) end
  end
  gc()
  for i = 1, #PUB, 2 do redis.call('PUBLISH', PUB[i], PUB[i + 1]) end
end
