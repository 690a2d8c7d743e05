-- core.lua: keys, clock, the write-back hash cache, the buffered sorted-set
-- writes and the end-of-script flush. Spliced first into every script.
--
-- Every script gets the same five KEYS (see spec/keys.md):
--   KEYS[1] weir:{<ns>:<p>}:          partition prefix (only a prefix; routes the call)
--   KEYS[2] weir:{<ns>:<p>}:seq       hash: "now" (last now, ms), counters "push" and "lease"
--   KEYS[3] weir:{<ns>:<p>}:queues    hash, queue name -> "0" | "1" (paused)
--   KEYS[4] weir:{<ns>:<p>}:wf        zset, every workflow, member <created15>:<id>
--   KEYS[5] weir:{<ns>:<p>}:expiry    zset, ended records by removal time
-- and the same three leading ARGV:
--   ARGV[1] test clock "now" in ms, or "" to read the server's TIME
--   ARGV[2] retention in ms
--   ARGV[3] largest backoff in ms (Limits.MaxBackoff)
-- Other keys are derived from KEYS[1] plus names validated in Go.

local P = KEYS[1]
local K_SEQ, K_QUEUES, K_WF, K_EXPIRY = KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local TEST_NOW = ARGV[1]
local RETENTION = tonumber(ARGV[2])
local MAX_BACKOFF = tonumber(ARGV[3])
local GRACE = 60000 -- ms an ended record is kept past retention while someone awaits it
local GC_MAX = 20 -- expired records removed per script
local PRIO_UNIT = 1099511627776 -- 2^40
local SWEEP_PER_CLAIM = 100
local NOW = 0
local NOW_S = '0' -- NOW formatted once (number to string conversion is slow in Redis's Lua)
local IGNORE_EXPIRY = false -- reads for awaits see records whose retention passed
local CLOCK_LAST = 0

local function fmt(n) return string.format('%d', n) end
local function num(v)
  if not v or v == '' then return 0 end
  return tonumber(v)
end
local function qkey(q, kind) return P .. 'q:' .. q .. ':' .. kind end

-- split cuts s at every plain sep, keeping empty fields.
local function split(s, sep)
  local out, pos = {}, 1
  while true do
    local e = string.find(s, sep, pos, true)
    if not e then
      out[#out + 1] = string.sub(s, pos)
      return out
    end
    out[#out + 1] = string.sub(s, pos, e - 1)
    pos = e + 1
  end
end

-- join concatenates in chunks (miniredis's table.concat fails past ~2,500).
local function join(list, sep)
  if #list <= 1000 then return table.concat(list, sep) end
  local parts = {}
  for i = 1, #list, 1000 do
    parts[#parts + 1] = table.concat(list, sep, i, math.min(i + 999, #list))
  end
  return join(parts, sep)
end

local function ilist(s)
  local out = {}
  if not s or s == '' then return out end
  for x in string.gmatch(s, '[^,]+') do out[#out + 1] = tonumber(x) end
  return out
end

-- Hash cache: C[key][field] is a string, or false when known absent;
-- FULL[key] when every field of key was loaded (a missing one is absent).
local C, D, DK, FULL = {}, {}, {}, {}

local function hget(k, f)
  local c = C[k]
  if not c then
    c = {}
    C[k] = c
  end
  local v = c[f]
  if v == nil then
    if FULL[k] then return nil end
    v = redis.call('HGET', k, f)
    c[f] = v
  end
  if v == false then return nil end
  return v
end

-- hload loads every field of a small hash in one call; returns whether
-- the hash exists.
local HEXISTS = {}
local function hload(k)
  if FULL[k] then return HEXISTS[k] end
  local c = C[k]
  if not c then
    c = {}
    C[k] = c
  end
  local h = redis.call('HGETALL', k)
  for i = 1, #h, 2 do
    if c[h[i]] == nil then c[h[i]] = h[i + 1] end
  end
  FULL[k] = true
  HEXISTS[k] = #h > 0
  return #h > 0
end

local function hset(k, f, v)
  local c = C[k]
  if not c then
    c = {}
    C[k] = c
  end
  if v == nil then
    -- deleting a field known absent (and not written here) is a no-op
    local cur = c[f]
    if (cur == false or (cur == nil and FULL[k])) and not (D[k] and D[k][f]) then return end
    v = false
  end
  c[f] = v
  local d = D[k]
  if not d then
    d = {}
    D[k] = d
    DK[#DK + 1] = k
  end
  d[f] = true
end

-- dirty reports whether field f of k was written by this script.
local function dirty(k, f) return D[k] ~= nil and D[k][f] == true end

-- prefetch loads the listed fields of k that are not cached, 1,000 a call.
local function prefetch(k, fields)
  local c = C[k]
  if not c then
    c = {}
    C[k] = c
  end
  local want = {}
  for _, f in ipairs(fields) do
    if c[f] == nil then want[#want + 1] = f end
  end
  for i = 1, #want, 1000 do
    local last = math.min(i + 999, #want)
    local got = redis.call('HMGET', k, unpack(want, i, last))
    for x = i, last do c[want[x]] = got[x - i + 1] end
  end
end

-- forget drops everything cached about k (after it was deleted).
local function forget(k)
  C[k] = nil
  D[k] = nil
  FULL[k] = nil
end

local function flush_hashes()
  for _, k in ipairs(DK) do
    local d = D[k]
    if d then
      local c = C[k]
      local sets, dels = {}, {}
      for f in pairs(d) do
        local v = c[f]
        if v == false then
          dels[#dels + 1] = f
        else
          sets[#sets + 1] = f
          sets[#sets + 1] = v
        end
      end
      for i = 1, #sets, 1000 do
        redis.call('HSET', k, unpack(sets, i, math.min(i + 999, #sets)))
      end
      for i = 1, #dels, 1000 do
        redis.call('HDEL', k, unpack(dels, i, math.min(i + 999, #dels)))
      end
      D[k] = nil
    end
  end
  DK = {}
end

-- Sorted-set adds, and removals whose reply is not needed, are buffered
-- per key and flushed before any read of it. A key has pending adds or
-- pending removals, never both, so the flush keeps their order.
local ZB, ZBK = {}, {}
local ZR, ZRK = {}, {}

local function zflush(k)
  local r = ZR[k]
  if r then
    ZR[k] = nil
    for i = 1, #r, 1000 do
      redis.call('ZREM', k, unpack(r, i, math.min(i + 999, #r)))
    end
  end
  local b = ZB[k]
  if not b then return end
  ZB[k] = nil
  for i = 1, #b, 1000 do
    redis.call('ZADD', k, unpack(b, i, math.min(i + 999, #b)))
  end
end

-- zrem_later removes m from k by the next flush of k.
local function zrem_later(k, m)
  if ZB[k] then zflush(k) end
  local r = ZR[k]
  if not r then
    r = {}
    ZR[k] = r
    ZRK[#ZRK + 1] = k
  end
  r[#r + 1] = m
end

local function zadd(k, score, m)
  if ZR[k] then zflush(k) end
  local b = ZB[k]
  if not b then
    b = {}
    ZB[k] = b
    ZBK[#ZBK + 1] = k
  end
  local n = #b
  b[n + 1] = fmt(score)
  b[n + 2] = m
end

local function zrem(k, m)
  zflush(k)
  return redis.call('ZREM', k, m)
end

-- Counters of the seq hash, kept in Lua and written back by the flush.
local function next_seq(f)
  local v = num(hget(K_SEQ, f)) + 1
  hset(K_SEQ, f, fmt(v))
  return v
end

-- read_clock sets NOW: the test clock or the server's TIME, never less
-- than the last now stored (field "now" of the seq hash, read with the
-- counters in one call). extra, when given, lists more fields of the seq
-- hash to read in that call (queues' waiter fields, see wq; at most 100).
local function read_clock(extra)
  local now
  if TEST_NOW ~= '' then
    now = tonumber(TEST_NOW)
  else
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  local v
  if extra and #extra > 0 and #extra <= 300 then
    v = redis.call('HMGET', K_SEQ, 'now', 'push', 'lease', 'gc', unpack(extra))
  else
    extra = nil
    v = redis.call('HMGET', K_SEQ, 'now', 'push', 'lease', 'gc')
  end
  C[K_SEQ] = {now = v[1], push = v[2], lease = v[3], gc = v[4]}
  if extra then
    for i, f in ipairs(extra) do C[K_SEQ][f] = v[4 + i] end
  end
  CLOCK_LAST = num(v[1])
  if CLOCK_LAST > now then now = CLOCK_LAST end
  NOW = now
  NOW_S = fmt(now)
end

-- save_clock stores now at once, for calls that end without finalize
-- (reads, errors); pcall, so that a full server still answers.
local function save_clock()
  if NOW > CLOCK_LAST then
    redis.pcall('HSET', K_SEQ, 'now', NOW_S)
    CLOCK_LAST = NOW
  end
end

-- allow_full lets the rest of this script write on a server above its
-- maxmemory. Redis refuses a script only when its first write is a command
-- that may grow memory (HSET, ZADD, ...); PERSIST of the seq hash, which
-- never has a TTL, is a write that changes nothing and is not replicated.
-- Called first by the transitions that end or keep running work
-- (heartbeat, finish, expire, cancels, purge): a full store refuses new
-- work, never the work already running.
local function allow_full()
  redis.call('PERSIST', K_SEQ)
end

-- wq names queue q's field in the seq hash: present once q is registered
-- in the queues hash; its value is the time (ms) until which a blocked
-- claim may wait on q's wake-up list ("0": none), so that pushes write
-- wake-up tokens only while someone may be waiting. Two more fields per
-- queue, written inline (no helper: each top-level function is a closure
-- made on every call): n:<queue> its due hint (note_due, jobs.lua) and
-- k:<queue> "1" while its wake-up list may hold tokens, "0" once a claim
-- deleted the list (absent: unknown; finalize.lua).
local function wq(q) return 'w:' .. q end

-- Wake-up lists: WAKE[q] tokens to push, WAKE_DEL[q] to clear first.
local WAKE, WAKEQ, WAKE_DEL, WAKE_NEW = {}, {}, {}, {}
local function wake(q, n)
  if not WAKE[q] then
    WAKE[q] = 0
    WAKEQ[#WAKEQ + 1] = q
  end
  WAKE[q] = WAKE[q] + n
end
local function wake_clear(q)
  WAKE_DEL[q] = true
  if WAKE[q] then WAKE[q] = 0 end
end

-- Records ended by this script: published (when awaited), given a removal
-- time in the expiry index and, with the server clock, a TTL.
local ENDED_J, ENDED_JSET, ENDED_W = {}, {}, {}
local WAITC = {}
local ANY_WAIT = nil
-- awaited reports whether a waiter counter is above zero; the zset
-- wait:any (one member per waiting call) spares the look-up when nobody
-- waits at all.
local function awaited(key)
  if ANY_WAIT == nil then ANY_WAIT = redis.call('ZCARD', P .. 'wait:any') > 0 end
  if not ANY_WAIT then return false end
  local v = WAITC[key]
  if v == nil then
    v = num(redis.call('GET', key)) > 0
    WAITC[key] = v
  end
  return v
end

local function pad15(c) return string.format('%015d', c) end

