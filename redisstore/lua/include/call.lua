-- call.lua: what one call knows about itself: its partition's keys, its
-- clock, its limits, the seq hash's fields it read or changed, and the bags
-- in which it collects what finalize writes at its end.
--
-- Every transition starts with begin(KEYS, ARGV). A function library runs
-- its top level once, when FUNCTION LOAD loads it, and keeps these locals
-- from one call to the next: begin sets every one of them again, so that
-- nothing one call left behind is seen by the next.
--
-- KEYS[1] weir:{<ns>:<p>}:  the partition prefix. Every key a call touches
--         is this prefix followed by a fixed name or by a name that Go
--         validated (spec/keys.md), so every call stays in one slot.
-- ARGV[1] the test clock's now in ms, or "" for the server's TIME
-- ARGV[2] retention in ms
-- ARGV[3] largest backoff in ms (Limits.MaxBackoff)
-- ARGV[4 ..] the transition's own arguments

local P, K_SEQ, K_QUEUES, K_WF, K_EXPIRY
local TEST_NOW, RETENTION, MAX_BACKOFF
-- NOW is the call's now in ms, NOW_S the same formatted once; CLOCK_LAST
-- the now the seq hash held.
local NOW, NOW_S, CLOCK_LAST = 0, '0', 0
-- IGNORE_EXPIRY: this read also sees ended records whose retention passed
-- (awaits read the outcome they were woken for).
local IGNORE_EXPIRY = false
-- SEQ: fields of the seq hash (now, gc) read (false: absent) or written by
-- this call; SEQ_DIRTY: the names written, in order, for seq_flush. SEQ.pv
-- (not a field of the hash) is the protocol marker P seq as read_clock
-- found it in a partition no write of this protocol has touched yet (false:
-- absent; nil: not read), which seq_flush writes.
local SEQ, SEQ_DIRTY = {}, {}
-- CALL: the call's bags, each made on first use by bag(name).
local CALL = {}
-- KEEP: IDs of workflows this call finds even when their retention passed
-- (those that earlier calls of the same finish ended: finish.lua).
local KEEP = {}
-- EMPTY is read where a bag may be absent (ipairs(CALL.x or EMPTY)), so
-- that no table is made for it; nothing ever writes to it.
local EMPTY = {}
-- BUDGET: the units of cascade work this call may still do (a dependent
-- visited, a task a FailFast cancels, a job purged: spec/scripts.md,
-- Cascades in bounded steps), from the seq hash's cb (absent:
-- STEP_BUDGET); PENDING: a cascade left by an earlier call waits in P work
-- (the seq hash's pend). read_clock sets both.
local BUDGET, PENDING = 0, false
-- FAST: the namespace's fast paths are on (the seq hash's fast is not
-- "0": redisstore.Store.SetFastPaths); read_clock sets it. A fast path is
-- entered only when FAST and its own case hold (spec/scripts.md, Fast
-- paths).
local FAST = true
-- FF holds the fast paths' functions (fast_enqueue.lua, fast_claim.lua,
-- fast_finish.lua), as one top-level local: a script's top level is near
-- gopher-lua's limit of 200 registers (miniredis, the embedded default),
-- which TestLuaTopLevelLocals keeps in sight.
local FF = {}
-- EV: the call's events (events.lua): EV.cfg the seq hash's ev (false:
-- absent, events on with the default cap; "off": none), EV.l the events
-- gathered, written by finalize, EV.w and EV.wk the last attempt field an
-- event named and its worker (EV.add).
local EV = {}
local STEP_BUDGET = 64 -- redisstore.DefaultStepBudget

local GRACE = 60000 -- ms an ended record is kept past retention while awaited
-- records a call removes once their removal time passed (finalize.lua's
-- XB.gc), plus two for each record it ends, so that removal keeps pace
-- with any load (an expire call: XB.EXPIRE)
local GC_MAX = 20
local PRIO_UNIT = 1099511627776 -- 2^40: a ready score is (priority + 1000) * 2^40 + push
-- the push counter stops at PUSH_MAX, so that a ready score stays an exact
-- integer (below 2^53 with priority 1000); a claim that empties a queue
-- whose counter passed PUSH_RESET sets it back to 0 (spec/keys.md q:<q>:r)
local PUSH_MAX = 9007199254740991 - 2001 * PRIO_UNIT
local PUSH_RESET = 4294967296 -- 2^32
local SWEEP_PER_CLAIM = 100 -- engine.SweepPerClaim

-- begin keeps, from one call to the next of a library, the partition's
-- keys and the numbers of ARGV[2] and ARGV[3] while the call's strings are
-- the same (Lua compares strings by reference: a test costs nothing, a
-- concatenation or a tonumber costs thousands of instructions): ret and
-- mb hold the strings the numbers were read from.
local begin
do
  local ret, mb
  begin = function(keys, argv)
    if keys[1] ~= P then
      P = keys[1]
      K_SEQ, K_QUEUES, K_WF, K_EXPIRY = P .. 'seq3', P .. 'queues', P .. 'wf', P .. 'expiry'
    end
    TEST_NOW = argv[1]
    if argv[2] ~= ret then
      ret = argv[2]
      RETENTION = tonumber(ret)
    end
    if argv[3] ~= mb then
      mb = argv[3]
      MAX_BACKOFF = tonumber(mb)
    end
    NOW, NOW_S, CLOCK_LAST = 0, '0', 0
    IGNORE_EXPIRY = false
    -- SEQ is made by read_clock (one constructor, sized for the fields it
    -- reads); false until then, so that a use before it fails
    SEQ, SEQ_DIRTY = false, EMPTY
    -- CALL emptied in place, not made again: the table kept from the last
    -- call of a library keeps the size of its hash part, so that the bags
    -- of this call grow it no more (a table made, and each growth of one,
    -- costs hundreds of instructions, and garbage)
    for k in pairs(CALL) do CALL[k] = nil end
    KEEP = EMPTY
    BUDGET, PENDING = 0, false
    FAST = true
    EV.cfg, EV.l, EV.w, EV.wk = false, nil, nil, nil
  end
end

-- bag returns the call's collection name, made empty on first use.
local function bag(name)
  local b = CALL[name]
  if not b then
    b = {}
    CALL[name] = b
  end
  return b
end

local function fmt(n) return string.format('%d', n) end

-- seq_get returns a field of the seq hash (nil when absent), read once.
local function seq_get(f)
  local v = SEQ[f]
  if v == nil then
    v = redis.call('HGET', K_SEQ, f)
    SEQ[f] = v
  end
  if v == false then return nil end
  return v
end

-- seq_set changes a field of the seq hash in this call's copy; seq_flush
-- writes the copy back. v is a string or an integer.
local function seq_set(f, v)
  if SEQ_DIRTY == EMPTY then SEQ_DIRTY = {} end
  if not SEQ_DIRTY[f] then
    SEQ_DIRTY[f] = true
    SEQ_DIRTY[#SEQ_DIRTY + 1] = f
  end
  SEQ[f] = v
end

-- read_clock sets NOW: the source's time (the test clock, else the
-- server's TIME) plus the clock offset, never before the now the seq hash
-- holds (engine.Model's clock, spec/states.md Time). A source behind that
-- now (its clock stepped back, or a failover to a server whose clock is
-- behind) raises the offset, so time goes on from there at the source's
-- pace instead of standing still; a source that caught up with it drops
-- the offset. It reads the seq hash's gc, lease counter, pending flag and
-- step budget with it, the event stream's setting (ev, events.lua) and
-- the fast paths' switch (fast); SEQ.fresh when it has no now (no call
-- wrote the partition yet).
local read_clock
do
  -- last: the now the last call of a library set, as NOW_S and NOW (a
  -- cache, not the call's state: a table's fields, which begin leaves):
  -- the seq hash's now is that string after a write of the same
  -- partition, and a TIME in the same ms gives it again, whose number is
  -- then not parsed again (a tonumber costs some 2,000 instructions)
  local last = {false, 0}
  read_clock = function()
    local ms, ms_s
    if TEST_NOW ~= '' then
      ms = tonumber(TEST_NOW)
    else
      -- the server's ms as a string made of TIME's (its seconds, then the
      -- first three of its microseconds' six digits), so that the common
      -- case parses one number and formats none (a tonumber or a
      -- string.format costs some 2,000 instructions)
      local t = redis.call('TIME')
      local us = t[2]
      if #us == 6 then
        ms_s = t[1] .. string.sub(us, 1, 3)
      else
        ms_s = t[1] .. string.sub('00000' .. us, -6, -4)
      end
      if ms_s == last[1] then
        ms = last[2]
      else
        ms = tonumber(ms_s)
      end
    end
    -- the seq hash: as a function (Redis only), with HGETALL in RESP3,
    -- whose map reply Redis makes the table SEQ itself (a field absent:
    -- nil, which seq_get would read again: gc and lease made false); a
    -- script (miniredis too, whose setresp would switch the client's own
    -- protocol) with HMGET of the fields read here (absent: false). RESP2
    -- again before any other command.
    local sq, pend, cb, ev, fast
    if IS_FUNCTION then
      redis.setresp(3)
      sq = redis.call('HGETALL', K_SEQ).map
      redis.setresp(2)
      pend, cb, ev, fast = sq.pend, sq.cb, sq.ev, sq.fast
      -- the fields seq_get reads, absent: false (read), as HMGET's
      if not sq.gc then sq.gc = false end
      if not sq.lease then sq.lease = false end
    else
      local v = redis.call('HMGET', K_SEQ, 'now', 'gc', 'lease', 'off', 'pend', 'cb', 'ev', 'fast')
      -- one constructor, its hash part sized for these four
      sq = {now = v[1], gc = v[2], lease = v[3], off = v[4]}
      pend, cb, ev, fast = v[5], v[6], v[7], v[8]
    end
    SEQ = sq
    local v1 = sq.now
    if not v1 then
      sq.pv, sq.fresh = redis.call('GET', P .. 'seq'), true
      CLOCK_LAST = 0
    elseif v1 == last[1] then
      CLOCK_LAST = last[2]
    else
      CLOCK_LAST = tonumber(v1) or 0
    end
    PENDING = pend == '1'
    BUDGET = cb and math.max(tonumber(cb) or STEP_BUDGET, 1) or STEP_BUDGET
    EV.cfg = ev or false
    FAST = fast ~= '0'
    local v4 = sq.off
    local off0 = v4 and tonumber(v4) or 0
    local off = off0
    local now = ms + off
    if off > 0 and ms >= CLOCK_LAST then
      now, off = ms, 0
    elseif now < CLOCK_LAST then
      now, off = CLOCK_LAST, CLOCK_LAST - ms
    end
    if off ~= off0 then seq_set('off', off) end
    NOW = now
    if ms_s and now == ms then
      NOW_S = ms_s
      last[1], last[2] = ms_s, ms
    else
      NOW_S = fmt(now)
      -- kept only when the string reads back as the number (an integer)
      if now == math.floor(now) then
        last[1], last[2] = NOW_S, now
      end
    end
  end
end

-- seq_next increments the seq hash's lease counter (the tokens of every
-- queue's leases) and returns its new value.
local function seq_next(f)
  local v = (tonumber(seq_get(f)) or 0) + 1
  seq_set(f, v)
  return v
end

-- seq_flush writes the changed fields of the seq hash, with now when it
-- moved, in one HSET; in a partition that has no protocol marker yet (a
-- new namespace), the marker first. In a partition no call wrote before
-- (no now), ix: its index of IDs (P wf:id) holds every workflow from the
-- start (weir migrate builds it in one written before the index existed).
local function seq_flush()
  if SEQ.pv == false then
    redis.call('SET', P .. 'seq', '3')
    SEQ.pv = '3'
  end
  if SEQ.fresh then
    seq_set('ix', '1')
    SEQ.fresh = false
  end
  -- now last, unless a field set before it (the common cases, now alone
  -- or with one field, without a table)
  local now = NOW > CLOCK_LAST and not SEQ_DIRTY.now
  local n = #SEQ_DIRTY
  if n <= 1 then
    if now then SEQ.now = NOW_S end
    if n == 0 then
      if now then redis.call('HSET', K_SEQ, 'now', NOW_S) end
      return
    end
    local f = SEQ_DIRTY[1]
    local v = SEQ[f]
    if type(v) == 'number' then v = fmt(v) end
    if now then
      redis.call('HSET', K_SEQ, f, v, 'now', NOW_S)
    else
      redis.call('HSET', K_SEQ, f, v)
    end
    SEQ_DIRTY = EMPTY
    return
  end
  if now then seq_set('now', NOW_S) end
  local args = {}
  for _, f in ipairs(SEQ_DIRTY) do
    local v = SEQ[f]
    if type(v) == 'number' then v = fmt(v) end
    args[#args + 1] = f
    args[#args + 1] = v
  end
  redis.call('HSET', K_SEQ, unpack(args))
  SEQ_DIRTY = EMPTY
end

-- keep_work keeps what a call leaves undone of one step in P work (the
-- hash's fields and values, replacing any it held), marks it pending in
-- the seq hash, and stops the call (spec/scripts.md, Cascades in bounded
-- steps).
local function keep_work(...)
  local key = P .. 'work'
  redis.call('DEL', key)
  redis.call('HSET', key, ...)
  if not PENDING then redis.call('HSET', K_SEQ, 'pend', '1') end
  PENDING = true
  CALL.stopped = true
end

-- allow_full lets the rest of a script write on a server above its
-- maxmemory: Redis refuses a script only when its first write is a command
-- that may grow memory, and PERSIST of the seq hash (which has no TTL) is
-- a write that changes nothing. Called first by the transitions that end
-- or keep running work. As a function, the library's allow-oom flag does
-- this, and the call is skipped.
local function allow_full()
  if not IS_FUNCTION then redis.call('PERSIST', K_SEQ) end
end

-- deny_full makes a script that starts new work refused on a server above
-- its maxmemory, as the library's functions without allow-oom are, when
-- its own first write would not be: Redis checks memory at a script's
-- first write, and only for a command that may grow memory. HSETNX of the
-- seq hash's now (there already after any write; else the value the call
-- writes at its end) is such a command and changes nothing. Called, after
-- read_clock and before any write, by the transitions whose first write
-- is a deletion (retry_job, rerun_workflow); skipped as a function. In a
-- partition no call wrote before, ix with it (seq_flush), so that the now
-- written by a call that then fails does not look like a partition
-- written before its index of IDs existed.
local function deny_full()
  if not IS_FUNCTION then
    redis.call('HSETNX', K_SEQ, 'now', NOW_S)
    if SEQ.fresh then redis.call('HSET', K_SEQ, 'ix', '1') end
  end
end
