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
  if lim and c >= lim then return false end
  if redis.call('ZREM', KEYED.kkey(q, 'kp'), key) == 0 then return false end
  redis.call('ZADD', KEYED.kkey(q, 'kq'), fmt(redis.call('HINCRBY', kc, ':t', 1)), key)
  return true
end

-- keyed_claim leases q's keyed jobs while n < top: one job of the key
-- first in the rotation, which then goes to its end (or is parked at its
-- limit, or leaves with no ready job left); a key found at its limit (the
-- limit was lowered) is parked. take(id) leases a popped job and returns
-- whether it did (a job no longer queued is dropped). Each round pops one
-- key and one job: at most top - n leases plus the dropped jobs and
-- parked keys. Returns n and whether the rotation is empty.
function KEYED.keyed_claim(q, lim, top, n, take)
  local kq, kc = KEYED.kkey(q, 'kq'), KEYED.kkey(q, 'kc')
  lim = tonumber(lim)
  while n < top do
    local r = redis.call('ZPOPMIN', kq)
    if #r == 0 then return n, true end
    local key = r[1]
    local c = lim and (tonumber(redis.call('HGET', kc, key)) or 0)
    if lim and c >= lim then
      KEYED.key_turn(q, key, lim, c)
    else
      local sk = KEYED.kkey(q, 'k:' .. key)
      local got = redis.call('ZPOPMIN', sk)
      if #got > 0 then
        redis.call('ZREM', KEYED.kkey(q, 'kr'), got[1])
        if take(got[1]) then
          n = n + 1
          redis.call('HINCRBY', kc, key, 1)
          if c then c = c + 1 end
        end
        if redis.call('EXISTS', sk) == 1 then KEYED.key_turn(q, key, lim, c) end
      end
    end
  end
  return n, redis.call('EXISTS', kq) == 0
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
