-- keyed.lua: concurrency keys (spec/states.md, Concurrency keys): a job's
-- key, and the structures through which claims rotate across a queue's
-- keys and hold each key to the queue's per-key limit.
--
--!include call.lua
--!include fields.lua
--!include job.lua
--
-- Queue q's keyed jobs, besides its sets of queue.lua: q:<q>:k:<key> the
-- ready jobs of one key (score as in q:<q>:r), q:<q>:kr every keyed ready
-- job (the same scores: counts, listings, purges), q:<q>:kq the rotation
-- (keys with ready jobs under the limit, score: their turn), q:<q>:kp the
-- keys parked at the limit with ready jobs (score: their turn), and
-- q:<q>:kc a hash: per key its leases, and ":t" the last turn handed out.
-- The per-key limit is q:<q>:s kl; q:<q>:s K is "1" once the queue had a
-- keyed job (a claim of a queue without it reads none of these keys).
-- spec/keys.md says more.

-- KEYED holds the functions of this file (one top-level local: a
-- script has at most 200).
local KEYED = {}

function KEYED.kkey(q, kind) return P .. 'q:' .. q .. ':' .. kind end

-- job_ckey returns job j's concurrency key, or false: a plain job's
-- spec field "K<key>", a task's flags field ":<key>" (an undo has none).
function KEYED.job_ckey(j)
  local k = j.ck
  if k == nil then
    k = false
    if j.kind == 'j' then
      local s = job_spec(j)
      if string.find(s, '|K', 1, true) then k = string.match(s, '|K([^|]*)') end
    elseif j.kind == 't' then
      k = string.match(job_spec(j), '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|:]*:([^|]*)|') or false
    end
    j.ck = k
  end
  return k
end

-- key_turn puts key at the end of q's rotation (kq), or parks it (kp)
-- when it holds lim leases or more (lim: the limit, nil for none; c: its
-- leases when known).
function KEYED.key_turn(q, key, lim, c)
  local kc = KEYED.kkey(q, 'kc')
  if lim and not c then c = tonumber(redis.call('HGET', kc, key)) or 0 end
  local t = fmt(redis.call('HINCRBY', kc, ':t', 1))
  if lim and c >= lim then
    redis.call('ZADD', KEYED.kkey(q, 'kp'), t, key)
  else
    redis.call('ZADD', KEYED.kkey(q, 'kq'), t, key)
  end
end

-- keyed_push makes job id, of key, ready in q with score sc (lim: q's
-- per-key limit, a string or false): a key that had no ready job joins
-- the end of the rotation, or is parked at its limit.
function KEYED.keyed_push(q, key, id, sc, lim)
  local sk = KEYED.kkey(q, 'k:' .. key)
  redis.call('ZADD', sk, sc, id)
  redis.call('ZADD', KEYED.kkey(q, 'kr'), sc, id)
  if redis.call('ZCARD', sk) == 1 then KEYED.key_turn(q, key, tonumber(lim)) end
end

-- keyed_unqueue takes ready job id, of key, out of q and returns whether
-- it was there; a key left without ready jobs leaves the rotation.
function KEYED.keyed_unqueue(q, key, id)
  if redis.call('ZREM', KEYED.kkey(q, 'kr'), id) == 0 then return false end
  local sk = KEYED.kkey(q, 'k:' .. key)
  redis.call('ZREM', sk, id)
  if redis.call('EXISTS', sk) == 0 then
    redis.call('ZREM', KEYED.kkey(q, 'kq'), key)
    redis.call('ZREM', KEYED.kkey(q, 'kp'), key)
  end
  return true
end

-- keyed_release frees a lease of key in q (a lease ended: finish, expiry)
-- and returns whether the key left the parked keys for the end of the
-- rotation (lim: q's per-key limit, a string or false).
function KEYED.keyed_release(q, key, lim)
  local kc = KEYED.kkey(q, 'kc')
  local c = redis.call('HINCRBY', kc, key, -1)
  if c <= 0 then redis.call('HDEL', kc, key) end
  lim = tonumber(lim)
  -- without a limit no key is parked (LimitKeys to 0 returns them all)
  if not lim or c >= lim then return false end
  if redis.call('ZREM', KEYED.kkey(q, 'kp'), key) == 0 then return false end
  redis.call('ZADD', KEYED.kkey(q, 'kq'), fmt(redis.call('HINCRBY', kc, ':t', 1)), key)
  return true
end

-- keyed_claim leases q's keyed jobs while n < top: one job of the key
-- first in the rotation, which then goes to its end (or is parked at its
-- limit, or leaves with no ready job left); a key found at its limit (the
-- limit was lowered) is parked. take(id) leases a popped job and returns
-- whether it did (a job no longer queued is dropped). Returns n and
-- whether the rotation is empty.
--
-- The rounds run on a copy in the call (KEYED.rounds): the rotation is
-- read in order, each key's jobs popped a few at a time, and what the
-- rounds changed written back once (the keys' turns, their lease counts,
-- kr, the jobs popped and not reached), so that a claim of Max jobs over
-- K keys costs about two commands a key, not five a job. Its work stays
-- at most top - n leases plus the jobs it drops and the keys it parks.
function KEYED.keyed_claim(q, lim, top, n, take)
  local kq, kc = KEYED.kkey(q, 'kq'), KEYED.kkey(q, 'kc')
  lim = tonumber(lim)
  local r = {
    front = {}, fi = 1, read = 0, more = true, back = {},
    cnt = {}, buf = {}, out = {}, place = {}, last = {}, turns = 0, gone = {},
  }
  while n < top do
    local key = KEYED.next_key(r, kq, kc, top - n)
    if not key then break end
    local c = r.cnt[key]
    if lim and c >= lim then
      KEYED.turn(r, key, 'p')
    else
      local id = KEYED.next_job(r, q, key, lim, top - n)
      if id then
        r.gone[#r.gone + 1] = id
        if take(id) then
          n = n + 1
          c = c + 1
          r.cnt[key] = c
          r.changed = true
        end
        if KEYED.has_more(r, q, key) then
          if lim and c >= lim then
            KEYED.turn(r, key, 'p')
          else
            KEYED.turn(r, key, 'q')
            r.back[#r.back + 1] = key
          end
        else
          r.place[key] = false
        end
      else
        r.place[key] = false
      end
    end
  end
  return n, KEYED.write_rounds(r, q, kq, kc)
end

-- next_key returns the key next in turn in the rounds r (nil when the
-- rotation is empty): the keys of kq not yet served, read in order (want
-- at a time, with their lease counts), then those the rounds put back.
function KEYED.next_key(r, kq, kc, want)
  if r.fi > #r.front then
    local keys = {}
    if r.more then
      keys = redis.call('ZRANGE', kq, fmt(r.read), fmt(r.read + want - 1))
      r.read = r.read + #keys
      if #keys < want then r.more = false end
    end
    if #keys > 0 then
      local v = redis.call('HMGET', kc, unpack(keys))
      for i, key in ipairs(keys) do r.cnt[key] = tonumber(v[i]) or 0 end
    else
      keys, r.back = r.back, {}
    end
    r.front, r.fi = keys, 1
    if #keys == 0 then return nil end
  end
  local key = r.front[r.fi]
  r.fi = r.fi + 1
  return key
end

-- turn ends key's turn in the rounds r at the end of the rotation
-- (kind "q") or parked (kind "p"), as key_turn does, numbered in order.
function KEYED.turn(r, key, kind)
  r.turns = r.turns + 1
  r.place[key], r.last[key] = kind, r.turns
end

-- next_job pops key's next ready job for the rounds r: from what was
-- popped before, else about as many as the rounds left will take of it
-- (want leases left over the keys in the rotation, at most its room
-- under lim). Returns nil when the key has none.
function KEYED.next_job(r, q, key, lim, want)
  local b = r.buf[key]
  if not b or b.i > #b then
    local keys = (#r.front - r.fi + 1) + #r.back + 1
    local k = math.ceil(want / keys)
    if lim then k = math.min(k, lim - r.cnt[key]) end
    k = math.max(k, 1)
    local got = redis.call('ZPOPMIN', KEYED.kkey(q, 'k:' .. key), fmt(k))
    b = {i = 1, left = #got == 2 * k}
    for x = 1, #got, 2 do
      b[#b + 1] = got[x]
      b[#b + 1] = got[x + 1]
    end
    r.buf[key] = b
    if #b == 0 then return nil end
  end
  local id = b[b.i]
  b.i = b.i + 2
  return id
end

-- has_more says whether key still has ready jobs in the rounds r: popped
-- and not reached, or left in its set.
function KEYED.has_more(r, q, key)
  local b = r.buf[key]
  if b.i <= #b then return true end
  if not b.left then return false end
  return redis.call('EXISTS', KEYED.kkey(q, 'k:' .. key)) == 1
end

-- write_rounds writes what the rounds r changed: the jobs popped and not
-- reached back to their key's set, the jobs taken or dropped out of kr,
-- the lease counts, and each key served where its last turn put it (the
-- end of the rotation or the parked keys, numbered after the last turn
-- handed out) or out of the rotation. Returns whether the rotation is
-- empty.
function KEYED.write_rounds(r, q, kq, kc)
  for key, b in pairs(r.buf) do
    if b.i <= #b then
      local args = {}
      for x = b.i, #b, 2 do
        args[#args + 1] = b[x + 1]
        args[#args + 1] = b[x]
      end
      redis.call('ZADD', KEYED.kkey(q, 'k:' .. key), unpack(args))
    end
  end
  local gone = r.gone
  for i = 1, #gone, 1000 do redis.call('ZREM', KEYED.kkey(q, 'kr'), unpack(gone, i, math.min(i + 999, #gone))) end
  local set, rot, park, out = {}, {}, {}, {}
  for key, c in pairs(r.cnt) do
    if r.place[key] ~= nil and c > 0 then
      set[#set + 1] = key
      set[#set + 1] = fmt(c)
    end
  end
  if r.changed and #set > 0 then redis.call('HSET', kc, unpack(set)) end
  local base = r.turns > 0 and redis.call('HINCRBY', kc, ':t', r.turns) - r.turns
  for key, kind in pairs(r.place) do
    if kind == 'q' then
      rot[#rot + 1] = fmt(base + r.last[key])
      rot[#rot + 1] = key
    else
      out[#out + 1] = key
      if kind == 'p' then
        park[#park + 1] = fmt(base + r.last[key])
        park[#park + 1] = key
      end
    end
  end
  if #out > 0 then redis.call('ZREM', kq, unpack(out)) end
  if #rot > 0 then redis.call('ZADD', kq, unpack(rot)) end
  if #park > 0 then redis.call('ZADD', KEYED.kkey(q, 'kp'), unpack(park)) end
  if #rot > 0 or r.fi <= #r.front then return false end
  if not r.more then return true end
  return redis.call('EXISTS', kq) == 0
end

-- keyed_unpark returns q's parked keys that are under the limit lim (a
-- string, "0" for none) to the end of the rotation, in the order they
-- were parked, and returns how many ready jobs they hold. Its work is the
-- number of parked keys (LimitKeys).
function KEYED.keyed_unpark(q, lim)
  lim = tonumber(lim)
  local kp, kc = KEYED.kkey(q, 'kp'), KEYED.kkey(q, 'kc')
  local n = 0
  for _, key in ipairs(redis.call('ZRANGE', kp, '0', '-1')) do
    local c = tonumber(redis.call('HGET', kc, key)) or 0
    if lim == 0 or c < lim then
      redis.call('ZREM', kp, key)
      redis.call('ZADD', KEYED.kkey(q, 'kq'), fmt(redis.call('HINCRBY', kc, ':t', 1)), key)
      n = n + redis.call('ZCARD', KEYED.kkey(q, 'k:' .. key))
    end
  end
  return n
end
