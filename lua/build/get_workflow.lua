-- weir2_get_workflow: built from lua/scripts and lua/include by `go test ./redisstore -run TestBuiltIsCurrent -update`:
-- edit those files, not this one.

local IS_FUNCTION = false

-- ---- include/call.lua
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
-- this call; SEQ_DIRTY: the names written, in order, for seq_flush.
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
-- EV: the call's events (events.lua): EV.cfg the seq hash's ev (false:
-- absent, events on with the default cap; "off": none), EV.l the events
-- gathered, written by finalize.
local EV = {}
local STEP_BUDGET = 64 -- redisstore.DefaultStepBudget

local GRACE = 60000 -- ms an ended record is kept past retention while awaited
local PRIO_UNIT = 1099511627776 -- 2^40: a ready score is (priority + 1000) * 2^40 + push
-- the push counter stops at PUSH_MAX, so that a ready score stays an exact
-- integer (below 2^53 with priority 1000); a claim that empties a queue
-- whose counter passed PUSH_RESET sets it back to 0 (spec/keys.md q:<q>:r)
local PUSH_MAX = 9007199254740991 - 2001 * PRIO_UNIT
local PUSH_RESET = 4294967296 -- 2^32
local SWEEP_PER_CLAIM = 100 -- engine.SweepPerClaim

local function begin(keys, argv)
  P = keys[1]
  K_SEQ, K_QUEUES, K_WF, K_EXPIRY = P .. 'seq', P .. 'queues', P .. 'wf', P .. 'expiry'
  TEST_NOW = argv[1]
  RETENTION = tonumber(argv[2])
  MAX_BACKOFF = tonumber(argv[3])
  NOW, NOW_S, CLOCK_LAST = 0, '0', 0
  IGNORE_EXPIRY = false
  SEQ, SEQ_DIRTY = {}, EMPTY
  CALL = {}
  KEEP = EMPTY
  BUDGET, PENDING = 0, false
  EV.cfg, EV.l = false, nil
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
-- step budget with it, and the event stream's setting (ev, events.lua).
local function read_clock()
  local ms
  if TEST_NOW ~= '' then
    ms = tonumber(TEST_NOW)
  else
    local t = redis.call('TIME')
    ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  local v = redis.call('HMGET', K_SEQ, 'now', 'gc', 'lease', 'off', 'pend', 'cb', 'ev')
  SEQ.now, SEQ.gc, SEQ.lease, SEQ.off = v[1], v[2], v[3], v[4]
  PENDING = v[5] == '1'
  BUDGET = math.max(tonumber(v[6]) or STEP_BUDGET, 1)
  CLOCK_LAST = tonumber(v[1]) or 0
  EV.cfg = v[7]
  local off = tonumber(v[4]) or 0
  local now = ms + off
  if off > 0 and ms >= CLOCK_LAST then
    now, off = ms, 0
  elseif now < CLOCK_LAST then
    now, off = CLOCK_LAST, CLOCK_LAST - ms
  end
  if off ~= (tonumber(v[4]) or 0) then seq_set('off', off) end
  NOW = now
  NOW_S = fmt(now)
end

-- seq_next increments the seq hash's lease counter (the tokens of every
-- queue's leases) and returns its new value.
local function seq_next(f)
  local v = (tonumber(seq_get(f)) or 0) + 1
  seq_set(f, v)
  return v
end

-- seq_flush writes the changed fields of the seq hash, with now when it
-- moved, in one HSET.
local function seq_flush()
  if NOW > CLOCK_LAST then seq_set('now', NOW_S) end
  if #SEQ_DIRTY == 0 then return end
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

-- ---- include/fields.lua
-- fields.lua: the names of the stored fields (spec/keys.md), one constant
-- each. A job's field is its prefix (a plain job: none; task i of a
-- workflow: "t<i>."; that task's undo: "u<i>.") followed by one of the F_
-- names; a workflow's own fields are the W_ names.

-- lease expiries that cost no attempt (absent: none); the attempts counted
-- against max attempts are F_ATTEMPT minus these
-- the token of the job's last finish, then a space and the Settled it
-- returned (none for a plain job that ended: its state is the answer)
-- OnFailure task: "1" once a dependency ended not completed (cascade.lua)
-- task: its dependents, ascending: "<index> <name> <queue> <priority>" each,
-- joined by ";" (what a promotion needs, computed at submit)
-- plain job and workflow: the W3C traceparent of its enqueue or submit
-- (absent: none), handed back with every claim (trace.lua)
-- a job's ready-at, ms: when its last push made it ready, or, pushed
-- delayed, when it is due (ready.lua)


-- ---- include/text.lua
-- text.lua: string helpers that keep within what Redis 7 and miniredis both
-- run (shared/lua-compat.md: table.concat and unpack in chunks of 1,000).

-- join concatenates list with sep, 1,000 items a table.concat.
local function join(list, sep)
  if #list <= 1000 then return table.concat(list, sep) end
  local parts = {}
  for i = 1, #list, 1000 do
    parts[#parts + 1] = table.concat(list, sep, i, math.min(i + 999, #list))
  end
  return join(parts, sep)
end

-- ilist parses "1,5,7" into {1, 5, 7}; nil or "" is {}.
local function ilist(s)
  local out = {}
  if not s or s == '' then return out end
  for x in string.gmatch(s, '[^,]+') do out[#out + 1] = tonumber(x) end
  return out
end

-- pad15 formats a creation time as the 15 digits of listing members.
local function pad15(c) return string.format('%015d', c) end

-- append adds list's items to out.
local function append(out, list)
  local n = #out
  for i = 1, #list do out[n + i] = list[i] end
end

-- bytes_less orders strings byte by byte, as Go does: Lua's < follows the
-- server's locale (strcoll), which Redis takes from its environment.
local function bytes_less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- ---- include/events.lua
-- events.lua: the partition's event stream P events (spec/events.md): the
-- events of the transitions a call made, gathered as they happen and
-- written by finalize in one XADD (one entry per call, at most EV.CHUNK
-- events an entry), so that no event is written for a transition that did
-- not happen and none is lost for one that did.
--
--!include call.lua

-- EV.MAXLEN is the stream's default cap in entries (the seq hash's ev
-- absent): redisstore.DefaultEventsMaxLen; EV.CHUNK the most events of an
-- entry. (Fields of EV, not locals: the library's top level has few
-- registers left.)
EV.MAXLEN = '100000'
EV.CHUNK = 400

-- EV.add records event typ of id (a job ID, or a workflow ID for the
-- workflow_ types) with attempt a (a number or a numeric string) and
-- reason r: "<type> <id> <attempt> <bytes of reason> <reason>". Nothing
-- when the namespace's events are off.
function EV.add(typ, id, a, r)
  if EV.cfg == 'off' then return end
  local l = EV.l
  if not l then
    l = {}
    EV.l = l
  end
  -- the common attempts and an empty reason without a number's
  -- formatting (Lua formats one with sprintf)
  if a == 0 then
    a = '0'
  elseif a == 1 then
    a = '1'
  end
  if r == '' then
    l[#l + 1] = typ .. ' ' .. id .. ' ' .. a .. ' 0 '
  else
    l[#l + 1] = typ .. ' ' .. id .. ' ' .. a .. ' ' .. #r .. ' ' .. r
  end
end

-- EV.flush writes the gathered events: XADD P events with the cap (the
-- seq hash's ev "<max entries>:<max age ms>", 0 for no such cap; absent:
-- EV.MAXLEN entries), trimmed approximately; fields t (the call's now)
-- and e (the events in order, joined by newlines: a reason's length
-- tells where it ends, whatever bytes it holds).
function EV.flush()
  local l = EV.l
  if not l then return end
  EV.l = nil
  local key = P .. 'events'
  local maxlen, age = EV.MAXLEN, '0'
  if EV.cfg then maxlen, age = string.match(EV.cfg, '^(%d+):(%d+)$') end
  for i = 1, #l, EV.CHUNK do
    local args = {key}
    if maxlen and maxlen ~= '0' then
      args[2], args[3], args[4] = 'MAXLEN', '~', maxlen
    end
    args[#args + 1] = '*'
    args[#args + 1] = 't'
    args[#args + 1] = NOW_S
    args[#args + 1] = 'e'
    args[#args + 1] = table.concat(l, '\n', i, math.min(i + EV.CHUNK - 1, #l))
    redis.call('XADD', unpack(args))
  end
  -- the age cap, by the server's clock (the stream IDs'), at most once a
  -- call
  if age and age ~= '0' then
    local t = redis.call('TIME')
    local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(age)
    if ms > 0 then redis.call('XTRIM', key, 'MINID', '~', fmt(ms)) end
  end
end

-- ---- include/workflow.lua
-- workflow.lua: loading a workflow, its fields, its task-state string, and
-- moving it between states.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include events.lua
--
-- A workflow is a table {id, key, skey, pkey, m, so, sc, S}, loaded
-- once per call by load_wf:
--   key   w:<id>    hash: the workflow's fields and its tasks' (spec/keys.md)
--   skey  w:<id>:s  string: one state byte per task, in plan order
--   pkey  w:<id>:p  hash: payloads
--   m[f]  the workflow fields read so far (false: absent)
--   so[i] task i's state byte as this call changed it (so is made by the
--         first change); states_flush writes these at the end of the
--         call, one SETRANGE per run of adjacent bytes (or one SET of the
--         whole string)
--   sc[i] task i's byte as read (sc is made by the first read); S the
--         whole string, once read
-- Its other keys are made where used (rarely on the hot path): wf_ikey,
-- w:<id>:i, the hash task name -> index, and wf_nkey, w:<id>:nc, the lists
-- of a compensation start (compensate.lua).

-- wf_ikey and wf_nkey are workflow w's name index and compensation lists.
local function wf_ikey(w) return w.key .. ':i' end
local function wf_nkey(w) return w.key .. ':nc' end

local TASK_STATE = {w = 'waiting', q = 'queued', r = 'running', c = 'completed', f = 'failed', x = 'cancelled', W = 'cancelled',
  D = 'cancelled', o = 'open'}
local TASK_BYTE = {waiting = 'w', queued = 'q', running = 'r', completed = 'c', failed = 'f', cancelled = 'x', open = 'o'}

-- expired_at: whether a record whose expiry field holds x is gone for
-- this call (its retention passed).
local function expired_at(x)
  if IGNORE_EXPIRY or not x or x == '' or x == '0' then return false end
  return tonumber(x) <= NOW
end

-- wf_found makes the workflow table of id from its fields st, x, c and cr
-- (read by the caller, with other fields of key), or records that it is
-- gone; returns it or nil.
local function wf_found(id, key, st, x, c, cr)
  local wfs = bag('wfs')
  if not st or (expired_at(x) and not KEEP[id]) then
    wfs[id] = false
    return nil
  end
  local w = {id = id, key = key, skey = key .. ':s', pkey = key .. ':p',
    m = {['st'] = st, ['x'] = x, ['c'] = c, ['cr'] = cr}}
  wfs[id] = w
  return w
end

-- plain_expired: whether a plain job that ended at en is gone for this
-- call (its expiry is its end plus the retention).
local function plain_expired(en)
  if IGNORE_EXPIRY or not en then return false end
  return tonumber(en) + RETENTION <= NOW
end

-- load_wf returns the live workflow id, or nil.
local function load_wf(id)
  local w = bag('wfs')[id]
  if w ~= nil then return w or nil end
  local key = P .. 'w:' .. id
  local v = redis.call('HMGET', key, 'st', 'x', 'c', 'cr')
  return wf_found(id, key, v[1], v[2], v[3], v[4])
end

-- wget returns field f of workflow w (nil when absent), read once.
local function wget(w, f)
  local v = w.m[f]
  if v == nil then
    v = redis.call('HGET', w.key, f)
    w.m[f] = v
  end
  if v == false then return nil end
  return v
end

-- wset writes field f of workflow w at once.
local function wset(w, f, v)
  w.m[f] = v
  redis.call('HSET', w.key, f, v)
end

-- wflag reports whether a "1" flag of workflow w is set.
local function wflag(w, f) return wget(w, f) == '1' end

-- task_byte returns task i's state byte.
local function task_byte(w, i)
  local c = w.so and w.so[i]
  if c then return c end
  if w.S then return string.sub(w.S, i, i) end
  local sc = w.sc
  if not sc then
    sc = {}
    w.sc = sc
  end
  c = sc[i]
  if not c then
    c = redis.call('GETRANGE', w.skey, i - 1, i - 1)
    sc[i] = c
  end
  return c
end

local function task_state(w, i) return TASK_STATE[task_byte(w, i)] end

-- states_read reads workflow w's whole state string, for calls that go
-- through every task.
local function states_read(w)
  if not w.S then w.S = redis.call('GET', w.skey) or '' end
  return w.S
end

-- states_dirty registers workflow w's state string for states_flush, once
-- per call, with an empty overlay.
local function states_dirty(w)
  if not w.sdirty then
    w.sdirty = true
    w.so = {}
    local d = bag('sdirty')
    d[#d + 1] = w
  end
end

-- set_task_state changes task i's state in the call's overlay.
local function set_task_state(w, i, st)
  states_dirty(w)
  w.so[i] = TASK_BYTE[st]
end

-- states_flush_all writes the state bytes workflow w's call changed: the
-- whole string when the call set w.sfull (submit, cancel) or changed more
-- than 32 runs, else one SETRANGE per run of adjacent bytes.
local function states_flush_all(w)
  local pos = {}
  for i in pairs(w.so) do pos[#pos + 1] = i end
  table.sort(pos)
  local runs = {}
  local x = 1
  while x <= #pos do
    local y = x
    while pos[y + 1] == pos[y] + 1 do y = y + 1 end
    runs[#runs + 1] = {x, y}
    x = y + 1
  end
  if w.sfull or #runs > 32 then
    local S = states_read(w)
    local parts, prev = {}, 1
    for _, i in ipairs(pos) do
      parts[#parts + 1] = string.sub(S, prev, i - 1)
      parts[#parts + 1] = w.so[i]
      prev = i + 1
    end
    parts[#parts + 1] = string.sub(S, prev)
    redis.call('SET', w.skey, join(parts, ''))
  else
    for _, r in ipairs(runs) do
      local bytes = {}
      for z = r[1], r[2] do bytes[#bytes + 1] = w.so[pos[z]] end
      redis.call('SETRANGE', w.skey, fmt(pos[r[1]] - 1), table.concat(bytes))
    end
  end
end

-- states_flush writes the state bytes this call changed, workflow by
-- workflow. The common case, one byte or two adjacent ones (a chain step
-- ends task i and pushes task i + 1), is one SETRANGE made without lists;
-- the rest goes to states_flush_all.
local function states_flush()
  for _, w in ipairs(CALL.sdirty or EMPTY) do
    local so = w.so
    local lo, b = next(so)
    local hi, b2 = next(so, lo)
    if w.sfull or (hi and next(so, hi) ~= nil) then
      states_flush_all(w)
    elseif not lo then
      -- registered, nothing changed
    elseif not hi then
      redis.call('SETRANGE', w.skey, fmt(lo - 1), b)
    elseif hi == lo + 1 then
      redis.call('SETRANGE', w.skey, fmt(lo - 1), b .. b2)
    elseif lo == hi + 1 then
      redis.call('SETRANGE', w.skey, fmt(hi - 1), b2 .. b)
    else
      states_flush_all(w)
    end
  end
end

-- wf_member is workflow w's member in the listing indexes.
local function wf_member(w) return pad15(tonumber(wget(w, 'c')) or 0) .. ':' .. w.id end

-- set_wf_state moves workflow w to state st and its index entry with it.
local function set_wf_state(w, st)
  local m = wf_member(w)
  redis.call('ZREM', P .. 'wf:' .. wget(w, 'st'), m)
  redis.call('ZADD', P .. 'wf:' .. st, '0', m)
  wset(w, 'st', st)
end

local function wf_ended_state(st) return st ~= 'running' and st ~= 'compensating' end

-- WEBHOOK's functions are in webhook.lua (included by finalize.lua).
local WEBHOOK = {}

-- end_wf ends workflow w in state st: its end and removal times, its
-- removal registered by finalize, and its webhook's delivery written.
local function end_wf(w, st, fx)
  set_wf_state(w, st)
  EV.add('workflow_ended', w.id, 0, st)
  w.m['en'] = NOW_S
  w.m['x'] = fmt(NOW + RETENTION)
  redis.call('HSET', w.key, 'en', NOW_S, 'x', w.m['x'])
  fx.wf_ended = true
  local e = bag('ended_w')
  e[#e + 1] = w
  WEBHOOK.deliver(w)
end

-- ---- scripts/get_workflow.lua
-- weir2_get_workflow: Reads a workflow record (every field of its hash).
-- Read-only.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  workflow ID
-- ARGV[5]  "1": return it even when its retention passed (awaits)
-- Reply:   field/value list of the workflow hash (spec/keys.md), then "S"
--          and the task-state string; for a workflow of more than
--          500 tasks only "L": the record is live, and Go reads
--          the hash and the state string itself in one MULTI (HGETALL
--          straight to the client costs a third of passing 40,000 fields
--          through Lua, and keeps this script short whatever the size)
-- Errors:  NOTFOUND
--
--!include call.lua
--!include workflow.lua

begin(KEYS, ARGV)
read_clock()
IGNORE_EXPIRY = ARGV[5] == '1'
local w = load_wf(ARGV[4])
if not w then return redis.error_reply('NOTFOUND workflow "' .. ARGV[4] .. '"') end
if (tonumber(wget(w, 'n')) or 0) > 500 then return {'L'} end -- READ_INLINE_TASKS
local out = redis.call('HGETALL', w.key)
out[#out + 1] = 'S'
out[#out + 1] = states_read(w)
return out
