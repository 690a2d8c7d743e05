-- unique.lua: unique keys of plain jobs (spec/states.md, Unique jobs).
--
--!include call.lua
--!include fields.lua
--!include job.lua
--
-- Key u:<digest> (a string, digest computed in Go: engine.UniqueDigest)
-- holds "<until ms>|<job ID>": the job that took it, until it ends (until
-- 0) or until a time. A unique job's spec ends with "|u<digest>" (held
-- until it ends) or "|U<digest>" (held until a time), so that the call
-- that ends it knows, without another read, whether it has a key to free.

local function unique_key(dg) return P .. 'u:' .. dg end

-- unique_holder returns the ID and state of the job holding key lk now, or
-- nil when the key is free: absent, its time passed, its job ended (a key
-- held until the end) or its job's record gone.
local function unique_holder(lk)
  local v = redis.call('GET', lk)
  if not v then return nil end
  local until_s, id = string.match(v, '^(%d+)|(.+)$')
  local v2 = redis.call('HMGET', P .. 'j:' .. id, F_STATE, F_ENDED)
  local st = v2[1]
  if not st or plain_expired(v2[2]) then return nil end
  local u = tonumber(until_s)
  if (u == 0 and not ended_state(st)) or (u > 0 and NOW < u) then return id, st end
  return nil
end

-- unique_take makes job id the holder of key lk, until it ends (fo 0) or
-- for fo ms from now (a server TTL then drops the key, unless the test
-- clock runs: its time is not the server's).
local function unique_take(lk, id, fo)
  if fo == 0 then
    redis.call('SET', lk, '0|' .. id)
    return
  end
  local u = fmt(NOW + fo)
  if TEST_NOW == '' then
    redis.call('SET', lk, u .. '|' .. id, 'PXAT', u)
  else
    redis.call('SET', lk, u .. '|' .. id)
  end
end

-- unique_release frees the key of plain job j, which has ended, when j
-- holds it until its end.
local function unique_release(j)
  -- "|u" and 64 hex digits end the spec of a job holding its key until its
  -- end: two byte reads tell every other job apart
  local s = job_spec(j)
  if string.byte(s, -65) ~= 117 or string.byte(s, -66) ~= 124 then return end
  local lk = unique_key(string.sub(s, -64))
  if redis.call('GET', lk) == '0|' .. j.id then redis.call('DEL', lk) end
end
