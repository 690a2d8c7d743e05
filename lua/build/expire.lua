-- weir2_expire: built from lua/scripts and lua/include by `go test ./redisstore -run TestBuiltIsCurrent -update`:
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

-- ---- include/job.lua
-- job.lua: finding a job by ID, reading and writing its fields, and its
-- static attributes (queue, priority, retry policy).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--
-- A job is a table {id, kind, key, pre, wf, i, is}:
--   kind 'j': a plain job; key j:<id>, its fields unprefixed
--   kind 't': task i of workflow wf; key w:<wf>, fields "t<i>.<f>"
--   kind 'u': the undo of task i; key w:<wf>, fields "u<i>.<f>"
-- is is i as a string (the index hash's value). A task's state is in the
-- workflow's state string (task_state); plain and undo jobs have F_STATE.

-- new_job makes a job table. A call may set more fields on it: st (plain
-- and undo jobs), spec, q, pr, ma, bo (job_attr), att and cr (read by a
-- finish), last and last_tok (its Settled in this call), x (a plain job's
-- removal time), unlink, marked (mark_ended). (Every field set costs a table write: Redis's Lua
-- spends more on those than on most commands.)
local function new_job(kind, id, key, pre, w, i, is, st, spec)
  return {kind = kind, id = id, key = key, pre = pre, wf = w, i = i, is = is, st = st, spec = spec}
end

-- task_job returns task i (is: the same as a string) of workflow w, once
-- per call.
local function task_job(w, i, is)
  local j = w.tj and w.tj[i]
  if j then return j end
  is = is or fmt(i)
  j = new_job('t', false, w.key, 't' .. is .. '.', w, i, is, false, false)
  if not w.tj then w.tj = {} end
  w.tj[i] = j
  return j
end

-- task_spec returns task i's spec string
-- "name|queue|priority|maxAttempts|backoffMs|timeoutMs|flags|undoQueue".
local function task_spec(w, i, is)
  local specs = w.specs
  if not specs then
    specs = {}
    w.specs = specs
  end
  local s = specs[i]
  if not s then
    s = redis.call('HGET', w.key, 't' .. (is or fmt(i)))
    specs[i] = s
  end
  return s
end

-- remember_spec keeps task i's spec, read with other fields.
local function remember_spec(w, i, spec)
  local specs = w.specs
  if not specs then
    specs = {}
    w.specs = specs
  end
  specs[i] = spec
end

-- job_id returns a job's ID; a task loaded by index learns its name from
-- its spec.
local function job_id(j)
  if not j.id then
    j.id = j.wf.id .. '/' .. string.match(task_spec(j.wf, j.i, j.is), '^[^|]*')
    if j.kind == 'u' then j.id = j.id .. '/undo' end
    bag('jobs')[j.id] = j
  end
  return j.id
end

-- undo_job returns the undo of task i of workflow w.
local function undo_job(w, i)
  local j = w.uj and w.uj[i]
  if j then return j end
  local is = fmt(i)
  j = new_job('u', false, w.key, 'u' .. is .. '.', w, i, is, false, false)
  if not w.uj then w.uj = {} end
  w.uj[i] = j
  return j
end

-- load_job finds a live job by ID (validated in Go: a plain ID,
-- "<wf>/<task>" or "<wf>/<task>/undo"), or nil.
local function load_job(id)
  local jobs = bag('jobs')
  local j = jobs[id]
  if j ~= nil then return j or nil end
  local s1 = string.find(id, '/', 1, true)
  if not s1 then
    local key = P .. 'j:' .. id
    local v = redis.call('HMGET', key, 's', 'en')
    if not v[1] or plain_expired(v[2]) then
      jobs[id] = false
      return nil
    end
    j = new_job('j', id, key, '', false, false, false, v[1], false)
    jobs[id] = j
    return j
  end
  local name, undo = string.sub(id, s1 + 1), false
  local s2 = string.find(name, '/', 1, true)
  if s2 then
    name, undo = string.sub(name, 1, s2 - 1), true
  end
  local w = load_wf(string.sub(id, 1, s1 - 1))
  local is = w and redis.call('HGET', wf_ikey(w), name)
  if not is then
    jobs[id] = false
    return nil
  end
  local i = tonumber(is)
  if not undo then
    j = task_job(w, i, is)
  else
    j = undo_job(w, i)
    j.st = redis.call('HGET', w.key, j.pre .. 's')
    if not j.st then
      jobs[id] = false
      return nil
    end
  end
  j.id = id
  jobs[id] = j
  return j
end

-- leased_job finds job id for a call that names one of its leases by its
-- token tok (finish, heartbeat), reading in the HMGET that finds it what
-- such calls need; returns j and its token, last settled, attempt, cancel
-- flag and lease deadline, or nil when the job is unknown. A task's or
-- undo's token ends with its index (".<i>"), so the job is found without
-- the name index; its spec's name must be the ID's.
local function leased_job(id, tok)
  local jobs = bag('jobs')
  local j = jobs[id]
  if j == false then return nil end
  local v
  if j then
    local p = j.pre
    v = redis.call('HMGET', j.key, p .. 'tk', p .. 'ls', p .. 'a', p .. 'cr', p .. 'dl')
    return j, v[1], v[2], v[3], v[4], v[5]
  end
  local s1 = string.find(id, '/', 1, true)
  if not s1 then
    local key = P .. 'j:' .. id
    v = redis.call('HMGET', key, 'tk', 'ls', 'a', 'cr', 'dl', 'spec', 's', 'en')
    if not v[7] or plain_expired(v[8]) then
      jobs[id] = false
      return nil
    end
    j = new_job('j', id, key, '', false, false, false, v[7], v[6])
    jobs[id] = j
    return j, v[1], v[2], v[3], v[4], v[5]
  end
  -- not a token of a task or undo: no lease of this job (nothing cached)
  local is = string.match(tok, '%.(%d+)$')
  if not is then return nil end
  local wid = string.sub(id, 1, s1 - 1)
  local name, undo = string.sub(id, s1 + 1), false
  local s2 = string.find(name, '/', 1, true)
  if s2 then name, undo = string.sub(name, 1, s2 - 1), true end
  local pre = (undo and 'u' or 't') .. is .. '.'
  local t = 't' .. is
  local w = bag('wfs')[wid]
  local o -- where the job's fields start in v
  if w == nil then
    local key = P .. 'w:' .. wid
    v = redis.call('HMGET', key, 'st', 'x', 'c', 'cr', pre .. 'tk', pre .. 'ls',
      pre .. 'a', pre .. 'cr', pre .. 'dl', t, t .. '.' .. 'dn', pre .. 's')
    w = wf_found(wid, key, v[1], v[2], v[3], v[4])
    o = 4
  elseif w then
    v = redis.call('HMGET', w.key, pre .. 'tk', pre .. 'ls', pre .. 'a', pre .. 'cr',
      pre .. 'dl', t, t .. '.' .. 'dn', pre .. 's')
    o = 0
  end
  if not w then return nil end
  local spec = v[o + 6]
  if not spec or string.match(spec, '^[^|]*') ~= name or (undo and not v[o + 8]) then return nil end
  local i = tonumber(is)
  if undo then
    j = undo_job(w, i)
    j.st = v[o + 8]
  else
    j = task_job(w, i, is)
    j.dn = v[o + 7]
  end
  j.id, j.spec = id, spec
  remember_spec(w, i, spec)
  jobs[id] = j
  return j, v[o + 1], v[o + 2], v[o + 3], v[o + 4], v[o + 5]
end

-- job_state returns a job's state.
local function job_state(j)
  if j.kind == 't' then return task_state(j.wf, j.i) end
  if not j.st then j.st = redis.call('HGET', j.key, j.pre .. 's') end
  return j.st
end

-- set_job_state changes a job's state: a task's in its workflow's overlay,
-- a plain or undo job's at once, or, when later is true, among the fields
-- the caller writes.
local function set_job_state(j, st, later)
  if j.kind == 't' then
    set_task_state(j.wf, j.i, st)
    return
  end
  j.st = st
  if not later then redis.call('HSET', j.key, j.pre .. 's', st) end
end

-- jget reads job fields: jget(j, f1, f2, ...) returns their values (false
-- when absent) in one HMGET, or one value in one HGET.
local function jget(j, f, ...)
  local n = select('#', ...)
  if n == 0 then return redis.call('HGET', j.key, j.pre .. f) end
  local args = {j.pre .. f, ...}
  for x = 2, n + 1 do args[x] = j.pre .. args[x] end
  return unpack(redis.call('HMGET', j.key, unpack(args)))
end

-- jset writes job fields: jset(j, f1, v1, f2, v2, ...) in one HSET.
local function jset(j, ...)
  local args = {...}
  for x = 1, #args, 2 do args[x] = j.pre .. args[x] end
  redis.call('HSET', j.key, unpack(args))
end

-- jdel removes job fields in one HDEL.
local function jdel(j, ...)
  local args = {...}
  for x = 1, #args do args[x] = j.pre .. args[x] end
  redis.call('HDEL', j.key, unpack(args))
end

-- job_spec returns a job's spec string: a plain job's F_SPEC, a task's or
-- undo's task spec.
local function job_spec(j)
  if not j.spec then
    if j.kind == 'j' then j.spec = redis.call('HGET', j.key, 'spec') else j.spec = task_spec(j.wf, j.i, j.is) end
  end
  return j.spec
end

-- job_attr sets a job's queue, priority, max attempts and backoff (ms) as
-- j.q, j.pr, j.ma, j.bo, parsed from its spec once, and returns them.
local function job_attr(j)
  if j.ma then return j.q, j.pr, j.ma, j.bo end
  local q, pr, ma, bo
  if j.kind == 'j' then
    q, pr, ma, bo = string.match(job_spec(j), '^([^|]*)|([^|]*)|([^|]*)|([^|]*)')
  else
    local s = job_spec(j)
    q, pr, ma, bo = string.match(s, '^[^|]*|([^|]*)|([^|]*)|([^|]*)|([^|]*)')
    if j.kind == 'u' then q = string.match(s, '([^|]*)$') end
  end
  j.q, j.pr, j.ma, j.bo = q, tonumber(pr), tonumber(ma), tonumber(bo)
  return j.q, j.pr, j.ma, j.bo
end

-- job_max_expiries returns a job's max expiries, parsed from its spec: a
-- plain job's optional sixth field (when a number: a unique job's key
-- comes after it), a task's or undo's "X<n>" in the
-- flags (the seventh field); 1 when absent (engine.DefaultMaxExpiries).
local function job_max_expiries(j)
  local x
  if j.kind == 'j' then
    x = string.match(job_spec(j), '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|(%d+)')
  else
    local flags = string.match(job_spec(j), '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|([^|:]*)')
    x = flags and string.match(flags, 'X(%d+)')
  end
  return tonumber(x) or 1
end

local function job_queue(j)
  local q = j.q
  if not q then
    local s = job_spec(j)
    if j.kind == 'j' then
      q = string.match(s, '^[^|]*')
    elseif j.kind == 't' then
      q = string.match(s, '^[^|]*|([^|]*)')
    else
      q = string.match(s, '([^|]*)$')
    end
    j.q = q
  end
  return q
end

-- ended_state: whether a job state is terminal.
local function ended_state(st) return st == 'completed' or st == 'failed' or st == 'cancelled' end

-- mark_ended registers a job that ended in this call, for finalize
-- (publish to waiters, removal time of a plain job).
local function mark_ended(j)
  if j.marked then return end
  j.marked = true
  local e = bag('ended_j')
  e[#e + 1] = j
end

-- ---- include/keyed.lua
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

-- ---- include/ready.lua
-- ready.lua: a job's ready-at (F_READY), from which a worker measures its
-- queue wait (the time from when it became ready to its claim) and, for a
-- promoted task, the promotion latency (from the end of the dependency
-- whose end promoted it to its push).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua

-- READY holds the functions of this file (one top-level local: a
-- script has at most 200).
local READY = {}

-- mark_ready records job j's ready-at rd: "<ms>" (push: now, or its due
-- time when pushed delayed; a sweep that readies it keeps that), or
-- "<ms>:<ms>" for a promoted task (promotion_ready). One field of the hash
-- of the job's record, overwritten by its next push.
function READY.mark_ready(j, rd)
  redis.call('HSET', j.key, j.pre .. 'rd', rd)
end

-- add_ready appends job j's ready-at that push left to its caller (later)
-- to hs, the fields of the HSET of j's hash the caller makes anyway.
function READY.add_ready(hs, j)
  if j.rd then
    hs[#hs + 1] = j.pre .. 'rd'
    hs[#hs + 1] = j.rd
    j.rd = nil
  end
end

-- promotion_ready is the ready-at of a task that the end of task k of w
-- promotes now: "<now>:<k's end>". k's end is now when it ended in this
-- call (its state byte changed in it); a cascade drained by a later call
-- reads it, once per k.
function READY.promotion_ready(w, k)
  local en = w.so and w.so[k] and NOW_S
  if not en then
    local ke = w.kend
    if not ke then
      ke = {}
      w.kend = ke
    end
    en = ke[k]
    if not en then
      en = redis.call('HGET', w.key, 't' .. fmt(k) .. '.' .. 'en') or NOW_S
      ke[k] = en
    end
  end
  return NOW_S .. ':' .. en
end

-- put_ready ends a Claimed (lease.lua) with "@r<ready-at>" (mark_ready's
-- value), when the job has one (every job pushed since ready-at was
-- recorded).
function READY.put_ready(out, rd)
  if rd then out[#out + 1] = '@r' .. rd end
end

-- ---- include/queue.lua
-- queue.lua: a queue's sets, pushing a job into it, its due hint, and the
-- wake-up tokens and lease-set writes that finalize and claim write late.
--
--!include call.lua
--!include events.lua
--!include fields.lua
--!include job.lua
--!include keyed.lua
--!include ready.lua
--
-- Queue q's keys: q:<q>:r ready (score (priority + 1000) * 2^40 + push
-- counter), q:<q>:d delayed (score: due ms), q:<q>:a leased (score: lease
-- deadline ms), q:<q>:w wake-up tokens, and q:<q>:s its state, a small
-- hash: w (present once the queue is known; until when a blocked claim may
-- wait on it), p ("1" while paused), n (due hint), k (whether its wake-up
-- list may hold tokens), push (its push counter), c (its concurrency
-- limit, absent for none), rl (its rate limit, rate.lua), kl (its
-- per-key limit, absent for none) and K ("1" once it had a keyed job:
-- keyed.lua). spec/keys.md says more.

local function qkey(q, kind) return P .. 'q:' .. q .. ':' .. kind end

-- qstate returns queue q's state, read with one HMGET once per call (a
-- field absent is false); qs_set changes a field (false: delete it) for
-- qs_flush, which finalize calls.
local function qstate(q)
  local all = bag('qs')
  local s = all[q]
  if not s then
    local v = redis.call('HMGET', qkey(q, 's'), 'w', 'p', 'n', 'k', 'push', 'c', 'rl', 'kl', 'K')
    s = {w = v[1], p = v[2], n = v[3], k = v[4], push = v[5], c = v[6], rl = v[7], kl = v[8], K = v[9]}
    all[q] = s
  end
  return s
end

local function qs_set(q, f, v)
  local s = qstate(q)
  s[f] = v
  local d = s.dirty
  if not d then
    d = {}
    s.dirty = d
    -- the changed queues in order, in the bag's array part (names are
    -- its string keys)
    local all = CALL.qs
    all[#all + 1] = q
  end
  d[f] = true
end

-- next_push returns queue q's next push counter, which orders a priority's
-- ready jobs FIFO; at PUSH_MAX it stays there (priority order holds, FIFO
-- among equals is lost: 2,100 years at 100k pushes/s without the queue
-- ever running empty).
local function next_push(q)
  local v = tonumber(qstate(q).push) or 0
  if v < PUSH_MAX then v = v + 1 end
  qs_set(q, 'push', v)
  return v
end

-- reset_push sets queue q's push counter back to 0 when q's ready set is
-- empty and the counter passed PUSH_RESET (written only then, so a queue
-- that runs empty at every claim costs no write for it), and no keyed job
-- is ready (they share the counter).
local function reset_push(q)
  local s = qstate(q)
  if (tonumber(s.push) or 0) > PUSH_RESET and not (s.K and redis.call('EXISTS', qkey(q, 'kr')) == 1) then
    qs_set(q, 'push', 0)
  end
end

local function qs_flush()
  for _, q in ipairs(CALL.qs or EMPTY) do
    local s = CALL.qs[q]
    local set, del = {}, nil
    for f in pairs(s.dirty) do
      local v = s[f]
      if v == false then
        del = del or {}
        del[#del + 1] = f
      else
        if type(v) == 'number' then v = fmt(v) end
        set[#set + 1] = f
        set[#set + 1] = v
      end
    end
    if #set > 0 then redis.call('HSET', qkey(q, 's'), unpack(set)) end
    if del then redis.call('HDEL', qkey(q, 's'), unpack(del)) end
  end
end

-- register_queue makes q known: in the queues hash and in its state.
local function register_queue(q)
  if qstate(q).w then return end
  redis.call('HSETNX', K_QUEUES, q, '0')
  qs_set(q, 'w', '0')
  bag('wake_new')[q] = true
end

-- note_due lowers queue q's due hint (its state's n) to t when the hint
-- is known and later. The hint is a time before which no lease of q ends
-- and no delayed job of q falls due ("none": both sets were empty; absent:
-- unknown); a sweep that finds it ahead of now reads nothing.
local function note_due(q, t)
  local h = qstate(q).n
  if h and (h == 'none' or t < tonumber(h)) then qs_set(q, 'n', t) end
end

-- wake asks finalize for n wake-up tokens on q; wake_clear for clearing
-- q's wake-up list instead (a claim left it empty, or it is paused).
local function wake(q, n)
  local w = bag('wake')
  if not w[q] then
    w[q] = 0
    -- the queues in order, in the bag's array part
    w[#w + 1] = q
  end
  w[q] = w[q] + n
end

local function wake_clear(q)
  bag('wake_del')[q] = true
  local w = CALL.wake
  if w and w[q] then w[q] = 0 end
end

-- push puts job j into its queue: delayed until ra when ra is after now,
-- else ready (and listed in fx.pushed); either asks for a wake-up token. The caller has stored or cleared
-- j's F_RUN_AT, and writes its state itself when later is true
-- (set_job_state) and its ready-at (add_ready) when later is true. rd is
-- j's ready-at as mark_ready stores it: nil for the time it is ready
-- (now, or ra when later), true to keep the one it has (a sweep readies
-- a job due since its ready-at), or a promotion's (promotion_ready). It
-- records the job's queued event (events.lua), unless j.rq says that its
-- caller records another.
local function push(j, ra, fx, later, rd)
  set_job_state(j, 'queued', later)
  if rd == nil then rd = fmt(math.max(ra, NOW)) end
  if rd ~= true then
    if later then j.rd = rd else READY.mark_ready(j, rd) end
  end
  local q, pr = j.q, j.pr
  if not pr then q, pr = job_attr(j) end
  register_queue(q)
  local id = job_id(j)
  -- a job queued again after an attempt has its event from settle.lua
  -- (retried), a due delayed job (rd true) none: it was queued already
  if j.rq then
    j.rq = nil
  elseif rd ~= true then
    EV.add('queued', id, 0, '')
  end
  if ra > NOW then
    redis.call('ZADD', qkey(q, 'd'), fmt(ra), id)
    note_due(q, ra)
    -- a claim blocked on q wakes to wait only until this job is due
    wake(q, 1)
    return
  end
  local ck = KEYED.job_ckey(j)
  if ck then
    local s = qstate(q)
    if not s.K then qs_set(q, 'K', '1') end
    KEYED.keyed_push(q, ck, id, fmt((pr + 1000) * PRIO_UNIT + next_push(q)), s.kl)
  else
    redis.call('ZADD', qkey(q, 'r'), fmt((pr + 1000) * PRIO_UNIT + next_push(q)), id)
  end
  wake(q, 1)
  local p = fx.pushed
  if not p then
    p = {}
    fx.pushed = p
  end
  p[#p + 1] = id
  p[#p + 1] = q
end

-- unqueue takes a queued job out of its ready or delayed set.
local function unqueue(j)
  local q, id = job_queue(j), job_id(j)
  local ck = KEYED.job_ckey(j)
  if ck then
    if not KEYED.keyed_unqueue(q, ck, id) then redis.call('ZREM', qkey(q, 'd'), id) end
    return
  end
  if redis.call('ZREM', qkey(q, 'r'), id) == 0 then redis.call('ZREM', qkey(q, 'd'), id) end
end

-- key_release frees the key slot of job j, whose lease ended (a job
-- without a key has none); a key that leaves the parked keys asks for a
-- wake-up token.
local function key_release(j)
  local ck = KEYED.job_ckey(j)
  if not ck then return end
  local q = job_queue(j)
  if KEYED.keyed_release(q, ck, qstate(q).kl) then wake(q, 1) end
end

-- Lease-set writes of many jobs are gathered per queue and written in one
-- ZREM and one ZADD: active_remove_later and active_add_later gather,
-- active_flush(q) writes q's (removals first), before any read of the set
-- and at the end of the call.
local function active_flush(q)
  local rm = CALL.arm and CALL.arm[q]
  if rm then
    CALL.arm[q] = nil
    for i = 1, #rm, 1000 do redis.call('ZREM', qkey(q, 'a'), unpack(rm, i, math.min(i + 999, #rm))) end
  end
  local add = CALL.aadd and CALL.aadd[q]
  if add then
    CALL.aadd[q] = nil
    for i = 1, #add, 1000 do redis.call('ZADD', qkey(q, 'a'), unpack(add, i, math.min(i + 999, #add))) end
  end
end

local function active_later(kind, q)
  local per = bag(kind)
  local list = per[q]
  if not list then
    list = {}
    per[q] = list
    local order = bag('aq')
    if not order[q] then
      order[q] = true
      order[#order + 1] = q
    end
  end
  return list
end

local function active_remove_later(q, id)
  local list = active_later('arm', q)
  list[#list + 1] = id
end

local function active_add_later(q, deadline_s, id)
  local list = active_later('aadd', q)
  list[#list + 1] = deadline_s
  list[#list + 1] = id
end

-- active_flush_all writes every queue's gathered lease-set writes.
local function active_flush_all()
  for _, q in ipairs(CALL.aq or EMPTY) do active_flush(q) end
end

-- ---- include/compensate.lua
-- compensate.lua: a workflow's compensation: creating its undo jobs in the
-- order the DAG allows, and what the end of each undo releases.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua

-- The start of a compensation runs in three steps, each bounded by the
-- call's BUDGET (spec/scripts.md, Cascades in bounded steps) and kept in P
-- work (k "u", h "<step>:<task>") when the budget runs out: 1, every
-- completed task that has an undo gets its undo job, pending, from task
-- 1 up; 2, from the last task down, each task's nearest compensated
-- descendants (those reached through tasks without an undo), made from its
-- dependents' (engine.nearestCompensated); 3, from the last task down,
-- each undo that waits for some gets their count (b) and is added to each
-- one's parents (pa), and the others are pushed, in reverse plan order.
-- The lists of step 2 stay in memory; a call that stops writes those it
-- made to the hash w:<id>:nc (a list shared by a chain of tasks without
-- undos as "=<task>"), read back by the calls after it, and deleted at
-- the end of step 3.

-- compensated reports whether task x of w gets an undo job: it completed
-- and has an undo.
local function compensated(w, und, x) return string.byte(und, x) == 49 and task_byte(w, x) == 'c' end

-- nc_list returns task d's nearest compensated descendants (a list, or
-- false for none): made by this call, or read from w:<id>:nc.
local function nc_list(w, nc, d)
  local l = nc[d]
  if l ~= nil then return l end
  local s = redis.call('HGET', wf_nkey(w), fmt(d))
  if s and string.sub(s, 1, 1) == '=' then
    local r = tonumber(string.sub(s, 2))
    l = nc[r]
    if l == nil then
      l = ilist(redis.call('HGET', wf_nkey(w), fmt(r)))
      nc[r] = l
    end
  elseif s then
    l = ilist(s)
  else
    l = false
  end
  nc[d] = l
  BUDGET = BUDGET - (l and #l or 0)
  return l
end

-- nc_flush writes the lists this call made (made: task -> true) to
-- w:<id>:nc, a shared list once and then as "=<task>".
local function nc_flush(w, nc, made)
  local f, first = {}, {}
  for d in pairs(made) do
    local l = nc[d]
    if l then
      f[#f + 1] = fmt(d)
      if first[l] then
        f[#f + 1] = '=' .. fmt(first[l])
      else
        first[l] = d
        f[#f + 1] = join(l, ',')
      end
    end
  end
  for i = 1, #f, 1000 do redis.call('HSET', wf_nkey(w), unpack(f, i, math.min(i + 999, #f))) end
end

-- compensation_step goes on with the start of w's compensation at step
-- st from task i (see above); origin: as cascade's.
local function compensation_step(w, st, i, fx, origin)
  local n = tonumber(wget(w, 'n'))
  local und = wget(w, 'und')
  states_read(w)
  local function stop(at_st, at)
    keep_work('k', 'u', 'w', w.id, 'o', origin or '', 'h', fmt(at_st) .. ':' .. fmt(at))
  end
  if st == 1 then
    local urem = tonumber(wget(w, 'urem')) or 0
    local pos = string.find(und, '1', i, true)
    while pos do
      if task_byte(w, pos) == 'c' then
        if BUDGET <= 0 then
          wset(w, 'urem', fmt(urem))
          return stop(1, pos)
        end
        BUDGET = BUDGET - 1
        local u = undo_job(w, pos)
        u.st = 'pending'
        jset(u, 's', 'pending', 'c', NOW_S)
        urem = urem + 1
      end
      pos = string.find(und, '1', pos + 1, true)
    end
    wset(w, 'urem', fmt(urem))
    st, i = 2, n
  end
  local nc, made = {}, {}
  if st == 2 then
    local mark = {}
    for v = i, 1, -1 do
      if BUDGET <= 0 then
        nc_flush(w, nc, made)
        return stop(2, v)
      end
      BUDGET = BUDGET - 1
      local ds = {}
      for d in string.gmatch(redis.call('HGET', w.key, 't' .. fmt(v) .. '.' .. 'dn') or '', '(%d+) [^;]*') do
        ds[#ds + 1] = tonumber(d)
      end
      local out = false
      if #ds == 1 and not compensated(w, und, ds[1]) then
        -- a chain without undos shares its dependent's list
        out = nc_list(w, nc, ds[1])
      elseif #ds > 0 then
        out = {}
        for _, d in ipairs(ds) do
          BUDGET = BUDGET - 1
          if compensated(w, und, d) then
            if mark[d] ~= v then
              mark[d] = v
              out[#out + 1] = d
            end
          else
            local l = nc_list(w, nc, d)
            if l then
              BUDGET = BUDGET - #l
              for _, y in ipairs(l) do
                if mark[y] ~= v then
                  mark[y] = v
                  out[#out + 1] = y
                end
              end
            end
          end
        end
        if #out == 0 then out = false end
      end
      nc[v] = out
      made[v] = true
    end
    st, i = 3, n
  end
  -- step 3: parents gathered per undo (in the order of the tasks that
  -- wait for it) and appended to its list at the end of the call
  local parents, order = {}, {}
  local function flush_parents()
    for _, y in ipairs(order) do
      local u = undo_job(w, y)
      local old = jget(u, 'pa')
      local add = join(parents[y], ',')
      jset(u, 'pa', old and (old .. ',' .. add) or add)
    end
  end
  for x = i, 1, -1 do
    if BUDGET <= 0 then
      flush_parents()
      nc_flush(w, nc, made)
      return stop(3, x)
    end
    BUDGET = BUDGET - 1
    if compensated(w, und, x) then
      local l = nc_list(w, nc, x)
      if l then
        jset(undo_job(w, x), 'b', fmt(#l))
        BUDGET = BUDGET - #l
        for _, y in ipairs(l) do
          local pl = parents[y]
          if not pl then
            pl = {}
            parents[y] = pl
            order[#order + 1] = y
          end
          pl[#pl + 1] = x
        end
      else
        push(undo_job(w, x), 0, fx)
      end
    end
  end
  flush_parents()
  redis.call('DEL', wf_nkey(w))
end

-- start_compensation moves workflow w to compensating: every completed
-- task that has an undo gets its undo job, pending; the undo of task X
-- waits for the undos of its nearest compensated descendants (those reached
-- from X through tasks without one); the undos that wait for none are
-- pushed, in reverse plan order. The work runs in bounded steps
-- (compensation_step).
local function start_compensation(w, reason, fx)
  set_wf_state(w, 'compensating')
  EV.add('workflow_compensating', w.id, 0, reason)
  wset(w, 'rs', reason)
  compensation_step(w, 1, 1, fx, CALL.origin)
end

-- release_undo_parents counts task i's undo, ended and no longer waiting
-- for its descendants, as done for its nearest compensated ancestors; an
-- ancestor's undo that ended while it still waited (cancelled) passes the
-- count on in turn, depth first.
local function release_undo_parents(w, i, fx)
  local stack = {{ilist(jget(undo_job(w, i), 'pa')), 1}}
  while #stack > 0 do
    local fr = stack[#stack]
    local p = fr[1][fr[2]]
    if not p then
      stack[#stack] = nil
    else
      fr[2] = fr[2] + 1
      local up = undo_job(w, p)
      local b = redis.call('HINCRBY', w.key, up.pre .. 'b', '-1')
      if b == 0 then
        local st = job_state(up)
        if st == 'pending' then
          push(up, 0, fx)
        elseif ended_state(st) then
          stack[#stack + 1] = {ilist(jget(up, 'pa')), 1}
        end
      end
    end
  end
end

-- undo_ended runs the consequences of the end of task i's undo: its
-- ancestors' undos released, and the workflow's end after the last one.
local function undo_ended(w, i, fx)
  local urem = redis.call('HINCRBY', w.key, 'urem', '-1')
  w.m['urem'] = fmt(urem)
  local u = undo_job(w, i)
  if job_state(u) ~= 'completed' then wset(w, 'ufail', '1') end
  if (tonumber(jget(u, 'b')) or 0) == 0 then release_undo_parents(w, i, fx) end
  if urem == 0 then
    if wflag(w, 'ufail') then
      end_wf(w, 'compensation_failed', fx)
    else
      end_wf(w, 'compensated', fx)
    end
  end
end

-- ---- include/signal_open.lua
-- signal_open.lua: opening a signal task (spec/states.md, Signal) where
-- another task is pushed: a root at submit, a promotion in a cascade; and
-- delaying a delayed task, or the roots of a workflow that starts later
-- (spec/states.md, Delayed tasks), there.
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--
-- Go marks a signal task where a push finds it, so that a promotion reads
-- nothing more: its entry in a dependents list (t<i>.dn) carries
-- "<priority>s<timeout ms>" for its priority, and its root index in a
-- submit's (or a drain's) list is "<index>s<timeout ms>". Its spec's flags
-- carry "S". An open task is the state byte "o"; with a timeout it waits in
-- its queue's delayed set until it opened plus the timeout (F_RUN_AT),
-- where a sweep fails it (signal_end.lua).
--
-- SIG holds the functions of signal tasks: one local for all of them (the
-- library's top level has few registers left).
local SIG = {}

-- SIG.open opens task j, a signal task, with a timeout of ms (0: none).
function SIG.open(j, ms, fx)
  set_job_state(j, 'open')
  EV.add('opened', job_id(j), 0, '')
  if ms <= 0 then return end
  local q = job_queue(j)
  register_queue(q)
  local ra = NOW + ms
  jset(j, 'ra', fmt(ra))
  redis.call('ZADD', qkey(q, 'd'), fmt(ra), job_id(j))
  note_due(q, ra)
  -- a claim blocked on q wakes to wait only until the timeout
  wake(q, 1)
end

-- SIG.delayed pushes task j delayed until ra (when after now; else ready).
function SIG.delayed(j, ra, fx)
  if ra > NOW then jset(j, 'ra', fmt(ra)) end
  push(j, ra, fx)
end

-- SIG.push pushes task j ready, or opens it when pr (its priority as its
-- dependents entry gives it) marks a signal task, or delays it when pr
-- ends with "d<delay ms>" (a delayed task: its dependencies ended now).
-- rd: the ready-at of a task pushed ready (ready.lua promotion_ready).
function SIG.push(j, pr, fx, rd)
  -- the marks stand before a concurrency key (":<key>"), which may hold
  -- any letter
  pr = string.match(pr, '^[^:]*')
  local s = string.find(pr, '[sd]')
  if not s then
    push(j, 0, fx, nil, rd)
  elseif string.byte(pr, s) == 115 then
    SIG.open(j, tonumber(string.sub(pr, s + 1)), fx)
  else
    j.pr = tonumber(string.sub(pr, 1, s - 1))
    SIG.delayed(j, NOW + tonumber(string.sub(pr, s + 1)), fx)
  end
end

-- SIG.root pushes (or opens) root r of workflow w, as a submit lists it:
-- "<index>", "<index>s<timeout ms>" (a signal task), or
-- "<index>[a<start ms>][d<delay ms>]": delayed until the later of now and
-- the workflow's start, plus its delay.
function SIG.root(w, r, fx)
  local is, rest = string.match(r, '^(%d+)(.*)$')
  local j = task_job(w, tonumber(is), is)
  if rest == '' then
    push(j, 0, fx)
    return
  end
  local ms = string.match(rest, '^s(%d+)$')
  if ms then
    SIG.open(j, tonumber(ms), fx)
    return
  end
  local at, d = string.match(rest, 'a(%d+)'), string.match(rest, 'd(%d+)')
  SIG.delayed(j, math.max(NOW, tonumber(at or '0')) + tonumber(d or '0'), fx)
end

-- ---- include/deadline.lua
-- deadline.lua: a workflow's deadline (spec/states.md, Deadline): a marker
-- "<workflow>/!deadline" in the delayed set of its first task's queue,
-- scored with the deadline; a sweep that finds it due cancels the
-- workflow (cancel.lua). The workflow's field CANCEL.AT holds the deadline
-- (absent: none), CANCEL.HIT is "1" once the deadline cancelled it.
--
--!include call.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua

-- CANCEL holds the functions of cancels (this file and cancel.lua): one
-- local for all of them (the library's top level has few registers left).
local CANCEL = {AT = 'wdl', HIT = 'wdh', SUFFIX = '/!deadline'}

-- CANCEL.marker_queue returns the queue that holds workflow w's marker: its
-- first task's.
function CANCEL.marker_queue(w)
  return string.match(task_spec(w, 1), '^[^|]*|([^|]*)')
end

-- CANCEL.drop_deadline takes workflow w's deadline marker out of its
-- queue's delayed set (a workflow without a deadline: nothing), once a
-- call.
function CANCEL.drop_deadline(w)
  if not wget(w, CANCEL.AT) then return end
  w.m[CANCEL.AT] = false
  local m = w.id .. CANCEL.SUFFIX
  redis.call('ZREM', qkey(CANCEL.marker_queue(w), 'd'), m)
end

-- ---- include/cascade.lua
-- cascade.lua: what the end of a task does to its workflow: promotion of
-- its dependents, cancellation of the dependents a failure or cancel
-- reaches, FailFast, and the workflow's end once every task ended.
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include compensate.lua
--!include signal_open.lua
--!include ready.lua
--!include deadline.lua

-- cancel_task ends a waiting, queued or pending job as cancelled with
-- reason, without its consequences (the caller runs those). A task's open
-- count goes below zero, so that no later decrement promotes it.
local function cancel_task(j, reason, fx)
  local st = job_state(j)
  if st == 'queued' or st == 'open' then
    unqueue(j)
    jdel(j, 'ra')
  end
  set_job_state(j, 'cancelled')
  if j.kind == 't' then
    jset(j, 'e', reason, 'en', NOW_S, 'o', '-1')
  else
    jset(j, 'e', reason, 'en', NOW_S)
  end
  local c = fx.cancelled
  if not c then
    c = {}
    fx.cancelled = c
  end
  c[#c + 1] = job_id(j)
  EV.add('cancelled', c[#c], 0, reason)
  mark_ended(j)
end

-- promoted returns dependent d of w (ds: the same as a string) as its
-- entry in a dependents list names it: with its ID, queue and priority
-- ("<priority>[s<timeout>|d<delay>][:<key>]": a signal or delay mark,
-- signal_open.lua, and its concurrency key, keyed.lua), so that its push
-- reads nothing.
local function promoted(w, d, ds, name, q, pr)
  local j = task_job(w, d, ds)
  if not j.id then
    j.id = w.id .. '/' .. name
    bag('jobs')[j.id] = j
  end
  if not j.q then
    local c = string.find(pr, ':', 1, true)
    j.q, j.pr = q, tonumber(string.match(pr, '^%-?%d+'))
    j.ck = c and string.sub(pr, c + 1) or false
  end
  return j
end

-- task_flags returns the flags of task i's spec: A Always, B a failure is
-- absorbed, U has an undo, E After given empty (a concurrency key after
-- ":" is not a flag).
local function task_flags(w, i)
  return string.match(task_spec(w, i), '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|([^|:]*)')
end

local function task_name(w, i) return string.match(task_spec(w, i), '^[^|]*') end

local function always(w, i) return string.byte(wget(w, 'alw'), i) == 49 end

-- tasks_all_ended decides a workflow's end once every task ended.
local function tasks_all_ended(w, fx)
  -- its deadline, if any, does nothing more
  CANCEL.drop_deadline(w)
  local und = wget(w, 'und')
  local compensable = false
  local pos = string.find(und, '1', 1, true)
  while pos do
    if task_byte(w, pos) == 'c' then
      compensable = true
      break
    end
    pos = string.find(und, '1', pos + 1, true)
  end
  local cr, fbc = wflag(w, 'cr'), wflag(w, 'fbc')
  if cr and (wflag(w, 'cu') or fbc) and compensable then
    start_compensation(w, fbc and 'failure' or 'cancel', fx)
  elseif cr then
    end_wf(w, 'cancelled', fx)
  elseif wflag(w, 'ua') and compensable then
    start_compensation(w, 'failure', fx)
  elseif wflag(w, 'ua') then
    end_wf(w, 'failed', fx)
  else
    end_wf(w, 'completed', fx)
  end
end

-- fail_fast goes on with a fired FailFast of w from task from: every task
-- that has not started, except Always ones, in plan order, is cancelled
-- ("fail_fast") and added to the work list, one unit of BUDGET each.
-- Returns where it stopped when the budget ran out (nil once done) and how
-- many it cancelled. The tasks are found in the state string as read (a C
-- search) and among the bytes this call changed (a retried task went back
-- to queued).
local function fail_fast(w, from, work, fx)
  local S = states_read(w)
  local alw = wget(w, 'alw')
  local extra, e = {}, 1
  for i, b in pairs(w.so or EMPTY) do
    if i >= from and (b == 'w' or b == 'q' or b == 'o') then
      local sb = string.sub(S, i, i)
      if sb ~= 'w' and sb ~= 'q' and sb ~= 'o' then extra[#extra + 1] = i end
    end
  end
  table.sort(extra)
  local n, x = 0, from
  while true do
    local s = string.find(S, '[wqo]', x)
    if extra[e] and (not s or extra[e] < s) then
      s = extra[e]
      e = e + 1
    end
    if not s then return nil, n end
    local b = task_byte(w, s)
    if (b == 'w' or b == 'q' or b == 'o') and string.byte(alw, s) ~= 49 then
      if BUDGET <= 0 then return s, n end
      BUDGET = BUDGET - 1
      cancel_task(task_job(w, s), 'fail_fast', fx)
      work[#work + 1] = s
      n = n + 1
    end
    x = s + 1
  end
end

-- The work list of a cascade that ran out of the call's budget (BUDGET,
-- call.lua) is kept in the hash P work until later calls finish it
-- (drain.lua): k "c" (a cascade; "r": a submit's roots, drain.lua), w the
-- workflow's ID, o the prefix of the task whose finish
-- started it (its stored Settled gets what the rest of the cascade
-- pushes and ends), h "<k>:<pos>" the task being processed and where its
-- dependents list goes on, l the tasks after it, "k,k,...", first in first
-- out, and f, while a FailFast that fired is still cancelling, the task it
-- goes on from (before anything else). The seq hash's pend is "1" while it
-- exists: at most one cascade is left at a time, since every call that
-- could start another finishes this one first or is refused
-- (spec/scripts.md, Cascades in bounded steps).

-- save_work keeps what is left of w's cascade: task k from byte pos of its
-- dependents list, then the unread tail of the kept list (from byte tp),
-- then the entries of work from head.
local function save_work(w, k, pos, tail, tp, work, head, origin, ff)
  local rest = {}
  if tail and tp <= #tail then rest[1] = string.sub(tail, tp) end
  for x = head, #work do rest[#rest + 1] = fmt(work[x]) end
  keep_work('k', 'c', 'w', w.id, 'o', origin or '', 'h', fmt(k) .. ':' .. fmt(pos), 'l', join(rest, ','),
    'f', ff and fmt(ff) or '')
end

-- count_ended takes n ended tasks off workflow w's count of tasks not
-- ended, and returns what is left.
local function count_ended(w, n)
  local rem = redis.call('HINCRBY', w.key, 'rem', fmt(-n))
  w.m['rem'] = fmt(rem)
  return rem
end

-- cascade runs the work list of workflow w: tasks that ended, first in
-- first out, as engine.Model does. A completed task decrements each
-- dependent's open count and pushes those it brings to zero; a failed or
-- cancelled one does that for Always dependents and cancels the others,
-- which end in turn. The list is task k (from byte pos of its dependents
-- list; nil: from its start, its own step not done yet), then the kept
-- tail (a string "k,k,...", or nil), then work, where the tasks this run
-- ends are added. ended counts tasks that ended and are not yet taken off
-- the workflow's remaining count. Each dependent visited takes one unit of
-- BUDGET; when none is left with work still to do, the rest is kept
-- (save_work) and the workflow's end waits for it. ff: a FailFast that
-- fired goes on cancelling from that task first.
local function cascade(w, k, pos, tail, work, ended, origin, fx, ff)
  local tp, head = 1, 1
  while k do
    local kb = task_byte(w, k)
    if not pos then
      if kb == 'f' and not string.find(task_flags(w, k), 'B', 1, true) then
        if not wflag(w, 'ua') then wset(w, 'ua', '1') end
        if not wflag(w, 'cr') then
          if not wflag(w, 'fbc') then wset(w, 'fbc', '1') end
          if wflag(w, 'ff') and not wflag(w, 'fff') then
            wset(w, 'fff', '1')
            ff = 1
          end
        end
      end
      pos = 1
    end
    if ff then
      local n
      ff, n = fail_fast(w, ff, work, fx)
      ended = ended + n
      if ff then
        save_work(w, k, pos, tail, tp, work, head, origin, ff)
        count_ended(w, ended)
        return
      end
    end
    local kj = task_job(w, k)
    local dn = kj.dn -- read with the task by a finish
    if dn == nil then dn = jget(kj, 'dn') end
    while dn do
      local s, e, ds, name, q, pr = string.find(dn, '(%d+) ([^ ;]+) ([^ ;]+) ([^ ;]+)', pos)
      if not s then break end
      if BUDGET <= 0 then
        save_work(w, k, s, tail, tp, work, head, origin)
        count_ended(w, ended)
        return
      end
      BUDGET = BUDGET - 1
      pos = e + 1
      local d = tonumber(ds)
      -- "f" first: an OnFailure dependent (spec/states.md, OnFailure tasks)
      local onf = string.byte(pr, 1) == 102
      if onf then pr = string.sub(pr, 2) end
      if kb == 'c' then
        -- a decrement of a dependent that no longer waits changes nothing:
        -- cancel_task leaves the open count below zero, and after a
        -- cancel of the workflow the state byte says
        if redis.call('HINCRBY', w.key, 't' .. ds .. '.' .. 'o', '-1') == 0 and
          (not wflag(w, 'cr') or task_byte(w, d) == 'w') then
          if onf and redis.call('HEXISTS', w.key, 't' .. ds .. '.' .. 'nf') == 0 then
            cancel_task(task_job(w, d, ds), 'no_failure', fx)
            work[#work + 1] = d
            ended = ended + 1
          else
            SIG.push(promoted(w, d, ds, name, q, pr), pr, fx, READY.promotion_ready(w, k))
          end
        end
      elseif task_byte(w, d) == 'w' then
        if always(w, d) then
          if redis.call('HINCRBY', w.key, 't' .. ds .. '.' .. 'o', '-1') == 0 then
            SIG.push(promoted(w, d, ds, name, q, pr), pr, fx, READY.promotion_ready(w, k))
          elseif onf then
            redis.call('HSET', w.key, 't' .. ds .. '.' .. 'nf', '1')
          end
        else
          cancel_task(task_job(w, d, ds), 'dependency ' .. task_name(w, k) .. ' ' .. TASK_STATE[kb], fx)
          work[#work + 1] = d
          ended = ended + 1
        end
      end
    end
    -- the next entry: from the kept tail first, then from work
    k, pos = nil, nil
    if tail and tp <= #tail then
      local s, e, v = string.find(tail, '(%d+)', tp)
      if s then
        k, tp = tonumber(v), e + 2
      else
        tp = #tail + 1
      end
    end
    if not k and head <= #work then
      k = work[head]
      head = head + 1
    end
  end
  if count_ended(w, ended) == 0 then
    -- a compensation started here completes the Settled of the finish
    -- that started the cascade, as the cascade's rest does
    CALL.origin = origin
    tasks_all_ended(w, fx)
  end
end

-- task_ended runs the consequences of task i's end (cascade); origin is
-- the task's field prefix when a finish ended it (its Settled is kept).
local function task_ended(w, i, fx, origin)
  cascade(w, i, nil, nil, {}, 1, origin, fx)
end

-- ---- include/dynamic.lua
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
--!include signal_open.lua
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
-- which Go turns into an engine.ValidationError.
function DYN.err(code, task, field, problem)
  return code .. ' ' .. task .. '|' .. field .. '|' .. problem
end

-- DYN.edges counts workflow w's dependency edges (n tasks), for a
-- workflow that has no count yet (its first growth).
function DYN.edges(w, n)
  local e = 0
  for a = 1, n, 1000 do
    local f = {}
    for i = a, math.min(a + 999, n) do f[#f + 1] = 't' .. fmt(i) .. '.' .. 'dp' end
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
  if dn == nil then dn = jget(j, 'dn') end
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
    local v = redis.call('HMGET', w.key, 'n', 'ed')
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
  if wflag(w, 'cr') or wflag(w, 'fff') then return {} end
  local gate, m = A[s] == '1', tonumber(A[s + 1])
  local fname = string.match(job_spec(j), '^[^|]*')
  EV.add('workflow_grown', w.id, 0, fname)
  local v = redis.call('HMGET', w.key, 'n', 'ed', 'alw', 'und', 'names', 'rk')
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
      local dp = redis.call('HGET', w.key, 't' .. gs .. '.' .. 'dp')
      redis.call('HSET', w.key, 't' .. gs .. '.' .. 'dp', (dp and dp ~= '') and (dp .. ',' .. add) or add)
      redis.call('HINCRBY', w.key, 't' .. gs .. '.' .. 'o', fmt(m))
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
      hs[#hs + 1], hs[#hs + 2] = p .. '.' .. 'dp', table.concat(deps[t], ',')
    end
    if open[t] > 0 then hs[#hs + 1], hs[#hs + 2] = p .. '.' .. 'o', fmt(open[t]) end
    if nf[t] and open[t] > 0 then hs[#hs + 1], hs[#hs + 2] = p .. '.' .. 'nf', '1' end
    if ndn > 0 then
      local all = {}
      for _, e in ipairs(ge) do all[#all + 1] = e end
      for _, e in ipairs(dn[t]) do all[#all + 1] = e end
      hs[#hs + 1], hs[#hs + 2] = p .. '.' .. 'dn', table.concat(all, ';')
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
    if cur == nil then cur = redis.call('HGET', w.key, 't' .. fmt(d) .. '.' .. 'dn') end
    local had = cur and cur ~= ''
    local add = table.concat(xe[d], ';')
    local new = had and (cur .. ';' .. add) or add
    redis.call('HSET', w.key, 't' .. fmt(d) .. '.' .. 'dn', new)
    tj.dn = new
    if d == f then j.dn = new end
    if d ~= f and not DYN.ENDED[task_byte(w, d)] then
      DYN.absorb(w, d, xa[d] and (not had or string.find(task_flags(w, d), 'B', 1, true) ~= nil))
    end
  end
  local nn = n + m
  hs[#hs + 1], hs[#hs + 2] = 'n', fmt(nn)
  hs[#hs + 1], hs[#hs + 2] = 'ed', fmt(ed)
  hs[#hs + 1], hs[#hs + 2] = 'alw', table.concat(alw)
  hs[#hs + 1], hs[#hs + 2] = 'und', table.concat(und)
  hs[#hs + 1], hs[#hs + 2] = 'names', table.concat(names, '\n')
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
  w.m['n'] = fmt(nn)
  w.m['alw'], w.m['und'], w.m['names'] = table.concat(alw), table.concat(und), table.concat(names, '\n')
  w.m['rem'] = fmt(redis.call('HINCRBY', w.key, 'rem', fmt(m)))
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

-- ---- include/waiters.lua
-- waiters.lua: whether anybody awaits a record (spec/scripts.md, Await).
--
--!include call.lua

-- awaited reports whether the waiter set key exists (Go removes a waiter's
-- member when it stops waiting, and the set's TTL drops the members of
-- waiters that crashed). The zset wait:any (one member per waiting call)
-- spares the look-up while nobody waits at all; both answers are kept for
-- the call.
local function awaited(key)
  local any = CALL.any_wait
  if any == nil then
    any = redis.call('ZCARD', P .. 'wait:any') > 0
    CALL.any_wait = any
  end
  if not any then return false end
  local c = bag('waitc')
  local v = c[key]
  if v == nil then
    v = redis.call('EXISTS', key) == 1
    c[key] = v
  end
  return v
end

-- ---- include/settle.lua
-- settle.lua: applying a finished attempt's outcome to a running job, and
-- what a job's end does next.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include job.lua
--!include queue.lua
--!include cascade.lua
--!include dynamic.lua
--!include compensate.lua
--!include waiters.lua

-- after_end runs the consequences of a job that just ended: a plain job's
-- removal time (j.x, for finalize: its end plus the retention), a task's
-- cascade, an undo's release. kept: the job's Settled is kept for a
-- repeated finish (a cascade left for later calls completes it there).
local function after_end(j, fx, kept)
  mark_ended(j)
  if j.kind == 'j' then
    j.x = NOW + RETENTION
  elseif j.kind == 'u' then
    undo_ended(j.wf, j.i, fx)
  elseif j.add then
    -- a completed finish that adds tasks (dynamic.lua)
    DYN.ended(j, fx, kept and j.pre)
  else
    task_ended(j.wf, j.i, fx, kept and j.pre)
  end
end

-- backoff_delay: the delay before retry n (n attempts made): backoff
-- doubled n - 1 times, at most MAX_BACKOFF.
local function backoff_delay(bo, n)
  local d = bo
  local i = 1
  while i < n and d < MAX_BACKOFF do
    d = d * 2
    i = i + 1
  end
  return math.min(d, MAX_BACKOFF)
end

-- requeue_expired queues running job j (its lease ran out, its expiry
-- budget not spent: xp, its expiries so far, is below its max expiries)
-- again at once: reason lease_expired, its expiries one more, the attempt
-- not counted. Returns its Settled.
local function requeue_expired(j, xp)
  active_remove_later(job_queue(j), j.id)
  key_release(j)
  local p = j.pre
  local hs = {p .. 'e', 'lease_expired', p .. 'xp', fmt(xp + 1), p .. 'tk', ''}
  if j.kind ~= 't' then
    hs[7] = p .. 's'
    hs[8] = 'queued'
  end
  local fx = {}
  EV.add('retried', j.id, j.att, 'lease_expired')
  j.rq = true
  push(j, 0, fx, true)
  READY.add_ready(hs, j)
  redis.call('HSET', j.key, unpack(hs))
  local s = {id = j.id, state = 'queued', run_at = 0, pushed = fx.pushed, wf_state = '', wf_ended = false}
  if j.wf then s.wf_state = wget(j.wf, 'st') end
  return s
end

-- encode_settled / decode_settled: the Settled kept with a job for a
-- repeated finish, "state runAt wfState ended id queue id queue ...". A
-- plain job that ended keeps "" (its end state is the answer).
local function encode_settled(s)
  local head = s.state .. ' ' .. fmt(s.run_at) .. ' ' .. (s.wf_state == '' and '-' or s.wf_state) .. ' ' ..
    (s.wf_ended and '1' or '0')
  if not s.pushed or #s.pushed == 0 then return head end
  return head .. ' ' .. join(s.pushed, ' ')
end

local function decode_settled(id, str)
  local t = {}
  for v in string.gmatch(str, '[^ ]+') do t[#t + 1] = v end
  local s = {id = id, state = t[1], run_at = tonumber(t[2]), wf_state = t[3], wf_ended = t[4] == '1', pushed = {}}
  if s.wf_state == '-' then s.wf_state = '' end
  for i = 5, #t do s.pushed[#s.pushed + 1] = t[i] end
  return s
end

-- settle applies an outcome (kind completed, failed, cancelled or released)
-- to running job j, whose attempt (j.att) and cancel flag (j.cr) the
-- caller read (retry_after: ms, as a string), writes the job's fields and returns its Settled {id, state,
-- run_at, pushed, wf_state, wf_ended}. tok is the finish's token, kept
-- with the Settled for a repeat (nil: the lease expired). The job's token
-- is cleared, so that only a running job holds one; its lease deadline
-- stays: it means something only while the job runs. A plain job
-- that ended with retention 0 while nobody awaits it is removed by
-- finalize instead, with nothing written.
local function settle(j, kind, result, err, nonretry, retry_after, tok)
  active_remove_later(job_queue(j), j.id)
  key_release(j)
  if j.kind == 'j' and kind == 'completed' and j.att == 1 and tok then
    -- the common case, written straight: a plain job's first attempt
    -- completes (no error to clear, nothing pushed)
    j.st = 'completed'
    EV.add('completed', j.id, 1, '')
    mark_ended(j)
    j.x = NOW + RETENTION
    local s = {id = j.id, state = 'completed', run_at = 0, wf_state = '', pushed = false, wf_ended = false}
    if RETENTION == 0 and not awaited(P .. 'await:j:' .. j.id) then
      j.unlink = true
      local u = bag('unlink')
      u[#u + 1] = j.key
    elseif result then
      redis.call('HSET', j.key, 's', 'completed', 'en', NOW_S, 'tk', '', 'ls', tok, 'r', result)
    else
      redis.call('HSET', j.key, 's', 'completed', 'en', NOW_S, 'tk', '', 'ls', tok)
    end
    return s
  end
  local fx = {}
  local p = j.pre
  local st, ra = 'completed', 0
  -- hs: the job's fields to write (field, value, ...)
  local hs
  if kind == 'completed' then
    hs = {p .. 'en', NOW_S}
    if result then
      hs[3] = p .. 'r'
      hs[4] = result
    end
    -- only a failed attempt leaves an error, and a later attempt is then 2
    if j.att > 1 then
      hs[#hs + 1] = p .. 'e'
      hs[#hs + 1] = ''
    end
  elseif kind == 'cancelled' then
    st = 'cancelled'
    hs = {p .. 'en', NOW_S, p .. 'e', err}
  elseif kind == 'released' then
    hs = {p .. 'a', fmt(j.att - 1)}
    if j.cr then
      st = 'cancelled'
      hs[3], hs[4], hs[5], hs[6] = p .. 'e', 'cancelled', p .. 'en', NOW_S
    else
      st = 'queued'
    end
  else
    hs = {p .. 'e', err}
    -- the attempts that count: those started, less the lease expiries
    -- that cost none (read only here, on the failure path)
    local counted = j.att
    if j.att > 1 then counted = j.att - (tonumber(jget(j, 'xp')) or 0) end
    if j.cr then
      st = 'cancelled'
    elseif not nonretry and counted < select(3, job_attr(j)) then
      st = 'queued'
      local delay = tonumber(retry_after)
      if delay == 0 then delay = backoff_delay(select(4, job_attr(j)), counted) end
      ra = NOW + delay
      hs[3], hs[4] = p .. 'ra', fmt(ra)
    else
      st = 'failed'
    end
    if st ~= 'queued' then
      hs[#hs + 1] = p .. 'en'
      hs[#hs + 1] = NOW_S
    end
  end
  if j.kind ~= 't' then
    hs[#hs + 1] = p .. 's'
    hs[#hs + 1] = st
  end
  -- the event: the attempt as the job keeps it (a released one's is not
  -- counted), the reason its error (none when completed)
  local ea, er = j.att, err or ''
  if kind == 'released' then
    ea, er = j.att - 1, j.cr and 'cancelled' or 'released'
  elseif st == 'completed' then
    er = ''
  end
  if st == 'queued' then
    EV.add('retried', j.id, ea, er)
    j.rq = true
    push(j, ra, fx, true)
  else
    EV.add(st, j.id, ea, er)
    set_job_state(j, st, true)
    if st == 'completed' and j.kind == 't' then
      -- what a claim in this call hands the task's dependents
      local d = j.wf.done
      if not d then
        d = {}
        j.wf.done = d
      end
      d[j.i] = result or false
    end
    after_end(j, fx, tok ~= nil)
  end
  local s = {id = j.id, state = st, run_at = ra, pushed = fx.pushed, wf_state = '', wf_ended = fx.wf_ended}
  if j.wf then s.wf_state = wget(j.wf, 'st') end
  if j.kind == 'j' and st ~= 'queued' then
    if RETENTION == 0 and not awaited(P .. 'await:j:' .. j.id) then
      j.unlink = true
      local u = bag('unlink')
      u[#u + 1] = j.key
      return s
    end
  end
  hs[#hs + 1] = p .. 'tk'
  hs[#hs + 1] = ''
  if tok then
    hs[#hs + 1] = p .. 'ls'
    if j.kind == 'j' and st ~= 'queued' then hs[#hs + 1] = tok else hs[#hs + 1] = tok .. ' ' .. encode_settled(s) end
  end
  READY.add_ready(hs, j)
  redis.call('HSET', j.key, unpack(hs))
  return s
end

-- ---- include/signal_end.lua
-- signal_end.lua: how a signal task ends (spec/states.md, Signal): by a
-- signal (scripts/signal.lua) or by its timeout, which a sweep finds due
-- in its queue's delayed set (sweep.lua).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include signal_open.lua
--!include settle.lua

-- SIG.finish ends open signal task j as kind ("completed" or "failed")
-- with result (completed; nil for none) or err (failed), with the
-- consequences of a finished task; sig, when given, records that a signal
-- of that kind ended it (F_SIGNAL), so that the same signal again is
-- known. Returns its Settled {id, state, run_at, pushed, wf_state,
-- wf_ended}.
function SIG.finish(j, kind, result, err, sig)
  local fx = {}
  unqueue(j)
  jdel(j, 'ra')
  local hs = {'en', NOW_S}
  if kind == 'completed' then
    if result then
      hs[3], hs[4] = 'r', result
    end
  else
    hs[3], hs[4] = 'e', err
  end
  if sig then
    hs[#hs + 1] = 'sg'
    hs[#hs + 1] = kind
  end
  jset(j, unpack(hs))
  set_job_state(j, kind)
  EV.add(kind, job_id(j), 0, kind == 'failed' and err or '')
  if kind == 'completed' then
    -- what a claim in this call hands the task's dependents
    local d = j.wf.done
    if not d then
      d = {}
      j.wf.done = d
    end
    d[j.i] = result or false
  end
  after_end(j, fx)
  return {id = job_id(j), state = kind, run_at = 0, pushed = fx.pushed, wf_state = wget(j.wf, 'st'),
    wf_ended = fx.wf_ended}
end

-- SIG.timeout fails open signal task j, found due by a sweep, with reason
-- "timeout", and adds its Settled to res.expired when res is given. (A
-- sweep whose call ran out of its budget calls it no more: sweep.lua puts
-- the rest back.)
function SIG.timeout(j, res)
  local s = SIG.finish(j, 'failed', nil, 'timeout')
  if res then res.expired[#res.expired + 1] = s end
end

-- ---- include/cancel.lua
-- cancel.lua: cancelling a running workflow (spec/states.md,
-- CancelWorkflow), by CancelWorkflow (scripts/cancel_workflow.lua) or by
-- its deadline, which a sweep finds due (sweep.lua).
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include cascade.lua
--!include waiters.lua
--!include deadline.lua
--!include events.lua

-- CANCEL.workflow cancels running workflow w whose cancel was not
-- requested yet: undo ("1" or "0") is whether a compensation may follow;
-- its waiting, queued and open tasks end cancelled, their state byte b
-- ("W": workflow cancelled, "D": its deadline); the IDs of its running
-- tasks, told to stop, are appended to stopping; fx collects what the end
-- decision pushes. Queued tasks leave their queues within the call's
-- budget, the rest in drain calls (which then decide the workflow's end).
-- Returns the task-state string before the cancel and how many tasks it
-- cancelled.
function CANCEL.workflow(w, undo, b, fx, stopping)
  wset(w, 'cr', '1')
  if undo == '1' then wset(w, 'cu', '1') end
  wset(w, 'cat', NOW_S)
  CANCEL.drop_deadline(w)
  local S = states_read(w)
  local so = w.so
  if so and next(so) then
    -- bytes this call changed already (a sweep's earlier handling, a
    -- drain): the string as it is now, the overlay emptied
    local at = {}
    for i in pairs(so) do at[#at + 1] = i end
    table.sort(at)
    local parts, prev = {}, 1
    for _, i in ipairs(at) do
      parts[#parts + 1] = string.sub(S, prev, i - 1)
      parts[#parts + 1] = so[i]
      prev = i + 1
    end
    parts[#parts + 1] = string.sub(S, prev)
    S = join(parts, '')
    w.so = {}
  end
  local pos = string.find(S, 'r', 1, true)
  while pos do
    local j = task_job(w, pos)
    jset(j, 'cr', '1')
    stopping[#stopping + 1] = job_id(j)
    pos = string.find(S, 'r', pos + 1, true)
  end
  -- queued tasks (and open signal tasks, which may wait in a delayed set)
  -- leave their queues, at most the call's budget of them here (left: where
  -- the rest starts)
  local left = nil
  pos = string.find(S, '[qo]')
  while pos do
    if BUDGET <= 0 then
      left = pos
      break
    end
    BUDGET = BUDGET - 1
    local j = task_job(w, pos)
    unqueue(j)
    jdel(j, 'ra')
    pos = string.find(S, '[qo]', pos + 1)
  end
  -- every waiting, queued or open task ends cancelled (b), in one pass
  local newS, k = string.gsub(S, '[wqo]', b)
  w.S = newS
  w.sfull = true
  states_dirty(w)
  if k > 0 and awaited(P .. 'await:wj:' .. w.id) then
    pos = string.find(S, '[wqo]')
    while pos do
      -- marked for its waiters only: in no job list (lists.lua)
      local j = task_job(w, pos)
      j.unlisted = true
      mark_ended(j)
      pos = string.find(S, '[wqo]', pos + 1)
    end
  end
  local rem = redis.call('HINCRBY', w.key, 'rem', fmt(-k))
  w.m['rem'] = fmt(rem)
  -- their events, in plan order, within what the budget leaves
  local ev = nil
  if k > 0 and EV.cfg ~= 'off' then ev = CANCEL.events(w, b, 1, 1) end
  if left or ev then
    -- the rest leave their queues and get their events in drain calls,
    -- which then decide the workflow's end (drain.lua, unqueue_rest)
    local rest = {}
    while left do
      rest[#rest + 1] = fmt(left)
      left = string.find(S, '[qo]', left + 1)
    end
    keep_work('k', 'q', 'w', w.id, 'l', join(rest, ','), 'e', ev or '', 'b', b)
  elseif rem == 0 then
    tasks_all_ended(w, fx)
  end
  return S, k
end

-- CANCEL.events writes the "cancelled" events of workflow w's tasks that
-- its cancel ended (state byte b: "W", or "D" for its deadline), in plan
-- order from task x (whose name starts at byte o of the workflow's names),
-- one unit of BUDGET each, so that a cancel of a workflow of many tasks
-- stays a bounded step. Returns nil when it wrote them all, else "x:o"
-- where the next call goes on.
function CANCEL.events(w, b, x, o)
  local S = states_read(w)
  local names = wget(w, 'names') or ''
  local reason = b == 'W' and 'workflow cancelled' or 'deadline'
  local at = string.find(S, b, x, true)
  while at do
    -- the name of task at: skip the names before it
    while x < at do
      o = string.find(names, '\n', o, true) + 1
      x = x + 1
    end
    if BUDGET <= 0 then return fmt(x) .. ':' .. fmt(o) end
    BUDGET = BUDGET - 1
    local e = string.find(names, '\n', o, true)
    EV.add('cancelled', w.id .. '/' .. string.sub(names, o, (e or 0) - 1), 0, reason)
    at = string.find(S, b, x + 1, true)
  end
  return nil
end

-- CANCEL.deadline handles deadline marker m (of workflow id) that a sweep
-- found due: a running workflow whose cancel was not requested is
-- cancelled with its UndoOnCancel, its unstarted tasks with reason
-- "deadline", and its Settled {id = m, state "cancelled", pushed,
-- wf_state, wf_ended} added to res.expired (res given); the running tasks
-- it asks to stop are published after finalize (CALL.stops). Returns false
-- when the workflow ended (or its cancel was requested) earlier in this
-- call, which took the marker out of the set: the sweep skips it.
function CANCEL.deadline(m, id, res)
  local w = load_wf(id)
  if not w or wget(w, 'st') ~= 'running' or wflag(w, 'cr') then return false end
  wset(w, CANCEL.HIT, '1')
  local fx = {}
  local stops = CALL.stops
  if not stops then
    stops = {}
    CALL.stops = stops
  end
  CANCEL.workflow(w, wget(w, 'uoc') or '0', 'D', fx, stops)
  if res then
    res.expired[#res.expired + 1] = {id = m, state = 'cancelled', run_at = 0, pushed = fx.pushed,
      wf_state = wget(w, 'st'), wf_ended = fx.wf_ended}
  end
  return true
end

-- ---- include/sweep.lua
-- sweep.lua: a queue's overdue leases and due delayed jobs.
--
--!include call.lua
--!include job.lua
--!include queue.lua
--!include settle.lua
--!include signal_end.lua
--!include cancel.lua

-- due_until reads the first max + 1 members of sorted set k with their
-- scores and returns those due by now (at most max), the score of the
-- first one not taken (nil when there is none), and the scores (strings)
-- of those taken.
local function due_until(k, max)
  local r = redis.call('ZRANGEBYSCORE', k, '-inf', '+inf', 'WITHSCORES', 'LIMIT', '0', fmt(max + 1))
  local due, at = {}, {}
  for x = 1, #r, 2 do
    local t = tonumber(r[x + 1])
    if t > NOW or #due == max then return due, t, at end
    due[#due + 1] = r[x]
    at[#at + 1] = r[x + 1]
  end
  return due, nil, at
end

-- sweep ends q's overdue leases (within the job's expiry budget it is
-- queued again at once, else its attempt failed; "lease_expired" either way),
-- then makes its due delayed jobs ready, each in (time, ID) order and at
-- most max of each. res, when given, collects {expired = {Settled...},
-- due = {id, queue, ...}}. It reads nothing while q's due hint lies ahead
-- of now, and stores the next hint after a sweep. max_leases and max_due,
-- when given, bound the leases and the delayed jobs instead (a sweep going
-- on from an earlier call that stopped; res.n counts the leases ended and
-- res.d the delayed jobs handled).
local function sweep(q, max, res, max_leases, max_due)
  local h = qstate(q).n
  if h and (h == 'none' or tonumber(h) > NOW) then return end
  local ak = qkey(q, 'a')
  active_flush(q)
  local due, na = due_until(ak, max_leases or max)
  for _, id in ipairs(due) do
    local j = load_job(id)
    if j and job_state(j) == 'running' then
      local a, cr, xp = jget(j, 'a', 'cr', 'xp')
      j.att, j.cr = tonumber(a) or 0, cr == '1'
      xp = tonumber(xp) or 0
      local s
      if not j.cr and xp < job_max_expiries(j) then
        -- within its expiry budget: queued again at once, not counted
        s = requeue_expired(j, xp)
      else
        s = settle(j, 'failed', nil, 'lease_expired', false, '0')
      end
      if res then
        res.expired[#res.expired + 1] = s
        res.n = (res.n or 0) + 1
      end
      -- its cascade ran out of the call's budget: the rest of the sweep
      -- waits for another call
      if CALL.stopped then return end
    else
      redis.call('ZREM', ak, id)
    end
  end
  active_flush(q)
  local dk = qkey(q, 'd')
  local nd, at
  max = max_due or max
  due, nd, at = due_until(dk, max)
  -- leases taken and jobs delayed later in this call lower it again
  if na and nd then
    qs_set(q, 'n', math.min(na, nd))
  elseif na or nd then
    qs_set(q, 'n', na or nd)
  else
    qs_set(q, 'n', 'none')
  end
  -- at most max handled, in order: one handled can end one taken after it
  -- (a signal task's timeout failing its workflow fast cancels another
  -- open one), which is skipped, and the room it leaves is taken from the
  -- set again (at most twice more), as the model takes one at a time
  local handled = 0
  for pass = 1, 3 do
    for i = 1, #due, 1000 do redis.call('ZREM', dk, unpack(due, i, math.min(i + 999, #due))) end
    local skipped, left = 0, 0
    for i, id in ipairs(due) do
      if CALL.stopped then
        -- a timeout's or a deadline's cascade ran out of the call's
        -- budget: the rest go back as they were, for the call that goes on after the drain
        redis.call('ZADD', dk, at[i], id)
        note_due(q, tonumber(at[i]))
        left = left + 1
      elseif string.sub(id, -10) == CANCEL.SUFFIX then
        -- a workflow's deadline (cancel.lua)
        if not CANCEL.deadline(id, string.sub(id, 1, -11), res) then skipped = skipped + 1 end
      else
        local j = load_job(id)
        local st = j and job_state(j)
        if st == 'queued' then
          jdel(j, 'ra')
          local fx = {}
          push(j, 0, fx, nil, true)
          if res and fx.pushed then append(res.due, fx.pushed) end
        elseif st == 'open' then
          -- a signal task's timeout (signal_end.lua)
          SIG.timeout(j, res)
        else
          skipped = skipped + 1
        end
      end
    end
    handled = handled + #due - skipped - left
    if res then res.d = handled end
    if skipped == 0 or handled >= max or CALL.stopped or pass == 3 then return end
    due, nd, at = due_until(dk, max - handled)
    if #due == 0 then return end
  end
end

-- ---- include/reply.lua
-- reply.lua: the parts of replies several transitions share. Every reply
-- is a flat array of strings (no nil inside: absent is ""), counts before
-- lists; redisstore/codec.go reads them.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua

-- put_list appends the number of items (list, nil for none, has per
-- strings each), then the items.
local function put_list(out, list, per)
  if not list then
    out[#out + 1] = '0'
    return
  end
  out[#out + 1] = fmt(#list / per)
  append(out, list)
end

-- put_settled appends a Settled: id code state runAt wfState wfEnded
-- nPushed (id queue)*; code is "" or LEASELOST.
local function put_settled(out, s)
  local n = #out
  out[n + 1] = s.id
  if s.code then
    out[n + 2] = s.code
    out[n + 3] = ''
    out[n + 4] = '0'
    out[n + 5] = ''
    out[n + 6] = ''
    out[n + 7] = '0'
    return
  end
  out[n + 2] = ''
  out[n + 3] = s.state
  out[n + 4] = fmt(s.run_at)
  out[n + 5] = s.wf_state
  out[n + 6] = s.wf_ended and '1' or ''
  put_list(out, s.pushed, 2)
end

-- put_snapshot appends job j's snapshot, 18 strings: id spec created
-- hasPayload payload state attempt runAt token deadline cancelRequested
-- hasResult result error ended expires expiries progress (checkpoint.lua). Go shows the token and deadline
-- only while running, and reads queue, priority and retry policy from the
-- spec.
local function put_snapshot(out, j)
  local v, pay, created, st, expires, pg
  if j.kind == 'j' then
    v = redis.call('HMGET', j.key, 'spec', 'a', 'ra', 'tk', 'dl', 'cr', 'r', 'e',
      'en', 'c', 'p', 's', 'xp', 'pg')
    created, pay, st, pg = v[10], v[11], v[12], v[14]
    v[11] = v[13] -- expiries, where the task branch reads them
    -- a plain job expires its retention after its end
    if v[9] then expires = fmt(tonumber(v[9]) + RETENTION) end
  else
    local w, pre = j.wf, j.pre
    v = redis.call('HMGET', w.key, 't' .. j.is, pre .. 'a', pre .. 'ra', pre .. 'tk', pre .. 'dl',
      pre .. 'cr', pre .. 'r', pre .. 'e', pre .. 'en', pre .. 'c', pre .. 'xp', pre .. 'pg')
    pg = v[12]
    expires = wget(w, 'x')
    if j.kind == 't' then
      created = wget(w, 'c')
      pay = redis.call('HGET', w.pkey, j.is)
      local b = task_byte(w, j.i)
      if b == 'W' or b == 'D' then
        v[8] = b == 'W' and 'workflow cancelled' or 'deadline'
        v[9] = wget(w, 'cat')
      end
    else
      created = v[10]
      pay = redis.call('HGET', w.pkey, 'u' .. j.is)
    end
    st = job_state(j)
  end
  local r = v[7]
  local n = #out
  out[n + 1] = j.id
  out[n + 2] = v[1]
  out[n + 3] = created or '0'
  out[n + 4] = pay and '1' or ''
  out[n + 5] = pay or ''
  out[n + 6] = st
  out[n + 7] = v[2] or '0'
  out[n + 8] = v[3] or '0'
  out[n + 9] = v[4] or ''
  out[n + 10] = v[5] or '0'
  out[n + 11] = v[6] or ''
  out[n + 12] = r and '1' or ''
  out[n + 13] = r or ''
  out[n + 14] = v[8] or ''
  out[n + 15] = v[9] or '0'
  out[n + 16] = expires or '0'
  out[n + 17] = v[11] or '0'
  out[n + 18] = pg or ''
end

-- queues_reply: the number of known queues, then per queue in name order
-- its name, "1" when paused (else ""), its ready, delayed and running
-- counts (ready: unkeyed and keyed), its concurrency limit ("0": none),
-- its rate limit ("<n>:<period ms>", "" for none) and its per-key limit
-- ("0": none).
local function queues_reply(out)
  local names = redis.call('HKEYS', K_QUEUES)
  table.sort(names, bytes_less)
  out[#out + 1] = fmt(#names)
  for _, q in ipairs(names) do
    local n = #out
    out[n + 1] = q
    out[n + 2] = redis.call('HGET', K_QUEUES, q) == '1' and '1' or ''
    out[n + 3] = fmt(redis.call('ZCARD', qkey(q, 'r')) + redis.call('ZCARD', qkey(q, 'kr')))
    out[n + 4] = fmt(redis.call('ZCARD', qkey(q, 'd')))
    out[n + 5] = fmt(redis.call('ZCARD', qkey(q, 'a')))
    local lim = redis.call('HMGET', qkey(q, 's'), 'c', 'rl', 'kl')
    out[n + 6] = lim[1] or '0'
    out[n + 7] = lim[2] or ''
    out[n + 8] = lim[3] or '0'
  end
end

-- ---- include/drain.lua
-- drain.lua: going on with a cascade that an earlier call left in P work
-- (cascade.lua, save_work) when it ran out of its budget, or with the
-- roots of a submit that did (push_roots).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include queue.lua
--!include cascade.lua
--!include cancel.lua

-- push_roots pushes the roots of workflow w listed in s ("i,i,...", each
-- possibly marked as signal_open.lua's SIG.root reads) from
-- byte sp, in that order, one unit of BUDGET each; when the budget runs
-- out it keeps the rest in P work (k "r") and stops the call, as a
-- cascade does.
local function push_roots(w, s, sp, fx)
  while true do
    local a, b, v = string.find(s, '([^,]+)', sp)
    if not a then return end
    if BUDGET <= 0 then
      keep_work('k', 'r', 'w', w.id, 'l', string.sub(s, a))
      return
    end
    BUDGET = BUDGET - 1
    SIG.root(w, v, fx)
    sp = b + 1
  end
end

-- unqueue_rest takes the tasks of workflow w listed in s ("i,i,...": a
-- cancel ended them) out of their queues, then writes the events of the
-- cancel from ev ("x:o", CANCEL.events; "" for none) for state byte cb,
-- one unit of BUDGET each, keeping the rest in P work (k "q") when the
-- budget runs out; then decides the workflow's end when no task of it is
-- left (as the cancel would have).
local function unqueue_rest(w, s, fx, ev, cb)
  local sp = 1
  while true do
    local a, b, v = string.find(s, '(%d+)', sp)
    if not a then break end
    if BUDGET <= 0 then
      keep_work('k', 'q', 'w', w.id, 'l', string.sub(s, a), 'e', ev, 'b', cb)
      return
    end
    BUDGET = BUDGET - 1
    local j = task_job(w, tonumber(v), v)
    unqueue(j)
    jdel(j, 'ra')
    sp = b + 1
  end
  local x, o = string.match(ev, '^(%d+):(%d+)$')
  if x then
    ev = CANCEL.events(w, cb, tonumber(x), tonumber(o))
    if ev then
      keep_work('k', 'q', 'w', w.id, 'l', '', 'e', ev, 'b', cb)
      return
    end
  end
  if tonumber(wget(w, 'rem')) == 0 then tasks_all_ended(w, fx) end
end

-- drain_work goes on with the kept cascade within the call's budget,
-- collecting what it pushes, cancels and ends in fx; when it finishes, P
-- work and the seq hash's pend go. The Settled kept for the finish that
-- started the cascade gets what this part pushed and the workflow's state
-- (and its end), so that a repeat of that finish returns what the whole
-- cascade did. Returns the workflow, or nil when it is gone.
local function drain_work(fx)
  local key = P .. 'work'
  local v = redis.call('HMGET', key, 'w', 'o', 'h', 'l', 'f', 'k', 'e', 'b')
  local w = v[1] and load_wf(v[1])
  local k, pos = string.match(v[3] or '', '^(%d+):(%d+)$')
  local origin = v[2] ~= '' and v[2] or nil
  PENDING = false
  if w and v[6] == 'r' then
    push_roots(w, v[4] or '', 1, fx)
  elseif w and v[6] == 'q' then
    if wget(w, 'st') == 'running' then unqueue_rest(w, v[4] or '', fx, v[7] or '', v[8] or 'W') end
  elseif w and v[6] == 'u' then
    if k and wget(w, 'st') == 'compensating' then compensation_step(w, tonumber(k), tonumber(pos), fx, origin) end
  elseif w and k and not wf_ended_state(wget(w, 'st')) then
    local tail = v[4]
    if tail == '' then tail = nil end
    cascade(w, tonumber(k), tonumber(pos), tail, {}, 0, origin, fx, tonumber(v[5]))
  end
  if not PENDING then
    redis.call('DEL', key)
    redis.call('HDEL', K_SEQ, 'pend')
  end
  if w and origin and (fx.pushed or fx.wf_ended) then
    -- the kept Settled is "tok state runAt wfState ended[ id queue]...":
    -- its workflow state and end are rewritten and this call's pushes
    -- appended, without reading the pushes already there (a wide fan-out
    -- keeps thousands: decoding them in every call made the last calls of
    -- its cascade the slowest)
    local f = origin .. 'ls'
    local ls = redis.call('HGET', w.key, f)
    local cuts, p = {}, 0
    for x = 1, 5 do
      p = ls and string.find(ls, ' ', p + 1, true)
      if not p then break end
      cuts[x] = p
    end
    if cuts[4] then
      local ended = string.sub(ls, cuts[4] + 1, (cuts[5] or (#ls + 1)) - 1) == '1' or fx.wf_ended
      local st = wget(w, 'st')
      local new = string.sub(ls, 1, cuts[3]) .. (st == '' and '-' or st) .. (ended and ' 1' or ' 0')
      if cuts[5] then new = new .. string.sub(ls, cuts[5]) end
      if fx.pushed then new = new .. ' ' .. join(fx.pushed, ' ') end
      redis.call('HSET', w.key, f, new)
    end
  end
  return w
end

-- drain_first lets a write call that could start a cascade go on with the
-- one left by an earlier call first; returns whether it found none, so
-- that the call may do its own work. A call that drained does no more:
-- it finalizes and answers PENDING (redisstore.Store drains what is left and
-- sends it again), so that none of its own early returns can skip the
-- finalize that writes what the drain did.
local function drain_first()
  if not PENDING then return true end
  drain_work({})
  return false
end

-- PENDING_REPLY is the error of a call that drain_first refused.

-- ---- include/unique.lua
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
  local v2 = redis.call('HMGET', P .. 'j:' .. id, 's', 'en')
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

-- ---- include/lists.lua
-- lists.lua: the ended lists of a queue, q:<q>:failed, q:<q>:cancelled
-- and q:<q>:completed (spec/keys.md): every job that ended in a call is
-- added by finalize (list_ended), with the members of its list that passed
-- retention trimmed in the same step, so that an entry lives from the
-- job's end until its end plus retention.
--
--!include call.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--
-- Members are "<ended ms, 15 digits>:<job ID>", all scores 0, so that a
-- list reads newest first with ZREVRANGEBYLEX and its entries past
-- retention leave with one ZREMRANGEBYLEX. Not listed: a plain job that
-- ended with retention 0 and was unlinked (j.unlink), and a task that
-- CancelWorkflow ended before it started (never marked ended, or marked
-- with j.unlisted for its waiters only).

-- Every list also holds the sentinel member, 65 bytes of '~' (written
-- inline: the library has no local to spare), after every "<15
-- digits>:<id>" member; listings read below it.

-- list_ended adds the jobs this call ended to their queue's ended list,
-- one ZADD and one trim per list.
local function list_ended()
  local ended = CALL.ended_j
  if not ended then return end
  local lists, order = {}, {}
  local prefix = pad15(NOW) .. ':'
  for _, j in ipairs(ended) do
    if not j.unlink and not j.unlisted then
      local st = job_state(j)
      if ended_state(st) then
        local k = qkey(job_queue(j), st)
        local l = lists[k]
        if not l then
          -- the sentinel first: a member longer than Redis's default
          -- zset-max-listpack-value keeps the list a skiplist, whose
          -- inserts cost the same however long it grows (a listpack is
          -- searched from its start); it sorts after every real member
          l = {'0', '~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~'}
          lists[k] = l
          order[#order + 1] = k
        end
        l[#l + 1] = '0'
        l[#l + 1] = prefix .. job_id(j)
      end
    end
  end
  local cut = NOW - RETENTION + 1
  for _, k in ipairs(order) do
    local l = lists[k]
    for i = 1, #l, 1000 do redis.call('ZADD', k, unpack(l, i, math.min(i + 999, #l))) end
    if cut > 0 then redis.call('ZREMRANGEBYLEX', k, '-', '(' .. pad15(cut)) end
  end
end

-- ---- include/rate.lua
-- rate.lua: a queue's rate limit, at most n starts (leases) in any window
-- of a period, enforced inside claim (spec/states.md, RateLimitQueue).
--
--!include call.lua
--!include queue.lua
--
-- The limit is field rl of the queue's state, "<n>:<period ms>", absent
-- for none, and ":<ms>" after it once a claim found the limit refusing
-- ready jobs: the time the next start is allowed, before which pushes
-- write no wake-up tokens (no claim could take the job). The starts that
-- may still count are the sorted set q:<q>:starts, score the start's time
-- (ms), member its lease token (unique), kept for one period after the
-- last start (PEXPIRE; kept with a test clock). One table holds the
-- functions (one top-level local of the library).

local RATE = {}

-- RATE.limit returns queue state qs's limit and period (ms), or nil.
function RATE.limit(qs)
  local n, per = string.match(qs.rl, '^(%d+):(%d+)')
  return tonumber(n), tonumber(per)
end

-- RATE.room drops queue q's starts older than the period and returns how
-- many more the limit lets start now, and how many it counts.
function RATE.room(q, qs)
  local n, per = RATE.limit(qs)
  local k = qkey(q, 'starts')
  redis.call('ZREMRANGEBYSCORE', k, '-inf', fmt(NOW - per))
  local have = redis.call('ZCARD', k)
  return math.max(0, n - have), have
end

-- RATE.started logs the last took leases of this call (bag leased: id,
-- token pairs in order) as starts of queue q now (had: the starts counted
-- before); when the limit then lets none more start and q still has ready
-- jobs (empty: the claim found its ready set empty), it keeps the time the
-- next start is allowed for next_due (CALL.rate_due) and in rl, and clears
-- q's wake-up list: no claim can take from q before then, and every claim
-- the limit refuses learns that time.
function RATE.started(q, qs, took, had, empty)
  local n, per = RATE.limit(qs)
  local k = qkey(q, 'starts')
  if took > 0 then
    local leased = bag('leased')
    local args = {}
    for i = #leased - 2 * took + 2, #leased, 2 do
      args[#args + 1] = NOW_S
      args[#args + 1] = leased[i]
    end
    for i = 1, #args, 1000 do redis.call('ZADD', k, unpack(args, i, math.min(i + 999, #args))) end
    -- the server's clock expires the key; a test clock's time need not
    -- follow it, so the key then stays (claims trim it)
    if TEST_NOW == '' then redis.call('PEXPIRE', k, fmt(per)) end
  end
  local have = had + took
  if empty or have < n or redis.call('EXISTS', qkey(q, 'r'), qkey(q, 'kr')) == 0 then return end
  -- the oldest start that must leave the window for one more to fit
  local r = redis.call('ZRANGE', k, fmt(have - n), fmt(have - n), 'WITHSCORES')
  local due = tonumber(r[2]) + per
  bag('rate_due')[q] = due
  wake_clear(q)
  local rl = fmt(n) .. ':' .. fmt(per) .. ':' .. fmt(due)
  if qs.rl ~= rl then qs_set(q, 'rl', rl) end
end

-- RATE.held reports whether queue q's rate limit refuses every start now
-- (a claim found it so, until the time kept in rl): a push then writes no
-- wake-up token for it.
function RATE.held(q)
  local rl = qstate(q).rl
  local t = rl and string.match(rl, '^%d+:%d+:(%d+)$')
  return t ~= nil and tonumber(t) > NOW
end

-- RATE.due returns the time the limit next lets queue q start a job, when
-- this call's claim found it refusing with jobs ready, else 0.
function RATE.due(q)
  local d = CALL.rate_due
  return d and d[q] or 0
end

-- ---- include/plain.lua
-- plain.lua: writing a new plain job from a call's arguments.
--
--!include call.lua
--!include fields.lua
--!include job.lua
--!include queue.lua

-- write_plain writes plain job id (key: its hash) from the enqueue values
-- at argv[b + 1 .. b + 7], argv being the call's ARGV (queue, priority,
-- spec, has payload, payload, run-at, fingerprint: enqueue.lua's order;
-- argv[b + 9], when given and not empty, its traceparent), and pushes it,
-- ready or delayed until ra (ms; now or before: ready), adding to fx.
local function write_plain(argv, id, key, b, ra, fx)
  local j = new_job('j', id, key, '', false, false, false, 'queued', argv[b + 3])
  j.q, j.pr = argv[b + 1], tonumber(argv[b + 2])
  bag('jobs')[id] = j
  local hs = {'spec', argv[b + 3], 'h', argv[b + 7], 'c', NOW_S, 's', 'queued'}
  if argv[b + 4] == '1' then
    hs[#hs + 1] = 'p'
    hs[#hs + 1] = argv[b + 5]
  end
  local tp = argv[b + 9]
  if tp and tp ~= '' then
    hs[#hs + 1] = 'tp'
    hs[#hs + 1] = tp
  end
  if ra > NOW then
    hs[#hs + 1] = 'ra'
    hs[#hs + 1] = fmt(ra)
  end
  push(j, ra, fx, true)
  READY.add_ready(hs, j)
  redis.call('HSET', key, unpack(hs))
  return j
end

-- ---- include/webhook.lua
-- webhook.lua: a workflow's webhook delivery (spec/states.md, Webhooks).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include plain.lua

-- The workflow-hash fields of a plan's webhook (spec/keys.md): its
-- delivery job's spec, fingerprint and payload, written by Go at submit.
WEBHOOK.SPEC, WEBHOOK.HASH, WEBHOOK.BODY = 'hk', 'hk.f', 'hk.b'
WEBHOOK.SUFFIX = '@webhook'
-- the workflow's run (absent: 1), the field a re-run increments
-- (rerun_workflow.lua): the delivery of run n > 1 is "<wf>@webhook.<n>"
WEBHOOK.RUN = 'run'

-- WEBHOOK.deliver writes the delivery job of ended workflow w, if it has a
-- webhook, as enqueue.lua writes a plain job: a live job under the
-- delivery's ID (that of its run) is left as it is.
function WEBHOOK.deliver(w)
  local spec = wget(w, WEBHOOK.SPEC)
  if not spec then return end
  local id = w.id .. WEBHOOK.SUFFIX
  local run = wget(w, WEBHOOK.RUN)
  if run then id = id .. '.' .. run end
  local key = P .. 'j:' .. id
  local old = redis.call('HMGET', key, 's', 'en')
  if old[1] and not plain_expired(old[2]) then return end
  if old[1] then
    -- the old record's retention passed: it goes first
    redis.call('ZREM', K_EXPIRY, 'j:' .. id)
    redis.call('UNLINK', key)
  end
  local v = redis.call('HMGET', w.key, WEBHOOK.HASH, WEBHOOK.BODY)
  write_plain({string.match(spec, '^[^|]*'), '0', spec, '1', v[2], '0', v[1]}, id, key, 0, 0, {})
end

-- ---- include/finalize.lua
-- finalize.lua: the end of every write call: ended records get their
-- removal time and their waiters a message, wake-up lists their tokens,
-- the gathered writes are written, and a few expired records are removed.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include waiters.lua
--!include unique.lua
--!include lists.lua
--!include rate.lua
--!include events.lua
--!include webhook.lua

-- note_gc lowers the seq hash's gc (the earliest removal time in the
-- expiry index: a time, "none", or absent for unknown) to at.
local function note_gc(at)
  local g = seq_get('gc')
  if g and (g == 'none' or at < tonumber(g)) then seq_set('gc', at) end
end

-- expire_records gives every record this call ended its removal time:
-- with the server's clock a PEXPIREAT of its keys; a workflow also an entry
-- in the expiry index (which removes its listing entries), and a plain job
-- one only with the test clock (the index is then the only removal). An
-- awaited record is published and kept GRACE past its retention. Returns
-- the publishes (channel, message, ...).
local function expire_records()
  local pub
  for _, w in ipairs(CALL.ended_w or EMPTY) do
    local st = w.m['st']
    local at = tonumber(w.m['x'])
    if awaited(P .. 'await:w:' .. w.id) then
      pub = pub or {}
      pub[#pub + 1] = P .. 'o:w:' .. w.id
      pub[#pub + 1] = st
      at = math.max(at, NOW + GRACE)
    end
    redis.call('ZADD', K_EXPIRY, fmt(at), 'w:' .. st .. ':' .. wf_member(w))
    note_gc(at)
    if TEST_NOW == '' then
      local ats = fmt(at)
      for _, k in ipairs({w.key, w.pkey, w.skey, wf_ikey(w)}) do redis.call('PEXPIREAT', k, ats) end
    end
  end
  for _, j in ipairs(CALL.ended_j or EMPTY) do
    if j.kind == 'j' then
      unique_release(j)
      if not j.unlink then
        local at = tonumber(j.x)
        if awaited(P .. 'await:j:' .. j.id) then
          pub = pub or {}
          pub[#pub + 1] = P .. 'o:j:' .. j.id
          pub[#pub + 1] = j.st
          at = math.max(at, NOW + GRACE)
        end
        if TEST_NOW == '' then
          redis.call('PEXPIREAT', j.key, fmt(at))
        else
          redis.call('ZADD', K_EXPIRY, fmt(at), 'j:' .. j.id)
          note_gc(at)
        end
      end
    elseif awaited(P .. 'await:wj:' .. j.wf.id) then
      pub = pub or {}
      pub[#pub + 1] = P .. 'o:j:' .. job_id(j)
      pub[#pub + 1] = job_state(j)
    end
  end
  return pub or EMPTY
end

-- gc removes up to GC_MAX records whose removal time passed: their keys
-- and their listing entries. A record created again under the same ID
-- since is left alone; the old one's listing entries go.
local function gc()
  local g = seq_get('gc')
  if g == 'none' or (g and tonumber(g) > NOW) then return end
  local due = redis.call('ZRANGEBYSCORE', K_EXPIRY, '-inf', NOW_S, 'LIMIT', '0', '20')
  for _, m in ipairs(due) do
    local keep = false
    if string.sub(m, 1, 1) == 'j' then
      local key = P .. 'j:' .. string.sub(m, 3)
      local en = redis.call('HGET', key, 'en')
      if en and tonumber(en) + RETENTION <= NOW then redis.call('UNLINK', key) end
    else
      local st, c, id = string.match(m, '^w:([^:]*):([^:]*):(.*)$')
      -- ended by an earlier call of this same finish: kept for it
      keep = KEEP[id]
      local key = P .. 'w:' .. id
      local v = not keep and redis.call('HMGET', key, 'c', 'x')
      -- the entry's record: gone (its TTL fired), still there and due, or
      -- replaced by a record submitted since under the same ID (whose own
      -- entries stay; the old record's index members go)
      local same = v and v[1] and pad15(tonumber(v[1])) == c
      if v and (not same or (v[2] and tonumber(v[2]) <= NOW)) then
        if same then redis.call('UNLINK', key, key .. ':p', key .. ':s', key .. ':i') end
        redis.call('ZREM', K_WF, c .. ':' .. id)
        redis.call('ZREM', P .. 'wf:' .. st, c .. ':' .. id)
      end
    end
    if not keep then redis.call('ZREM', K_EXPIRY, m) end
  end
  local first = redis.call('ZRANGE', K_EXPIRY, '0', '0', 'WITHSCORES')
  seq_set('gc', first[2] or 'none')
end

-- finalize writes everything the call gathered; every write call ends
-- with it, and publishes last.
local function finalize()
  -- the writes first: a SET of a state string would drop a TTL given before
  states_flush()
  -- leases that ended free slots of a queue with a concurrency limit: a
  -- claim blocked on it may take jobs again
  local arm = CALL.arm
  if arm then
    for _, q in ipairs(CALL.aq) do
      if arm[q] and qstate(q).c then wake(q, #arm[q]) end
    end
  end
  active_flush_all()
  local pub = expire_records()
  list_ended()
  -- wake-up lists: a clear is needed only while the list may hold tokens
  -- (seq field k:<q>); tokens only while a claim may be blocked on the
  -- queue (w:<q> ahead of now), for its first push, or with the test clock
  -- (whose now need not follow real time)
  local dels, pushes
  for q in pairs(CALL.wake_del or EMPTY) do
    if qstate(q).k ~= '0' then
      dels = dels or {}
      dels[#dels + 1] = q
      qs_set(q, 'k', '0')
    end
  end
  local wake, new = CALL.wake or EMPTY, CALL.wake_new or EMPTY
  for _, q in ipairs(wake) do
    local n = wake[q]
    if n > 0 and TEST_NOW == '' and not new[q] and (tonumber(qstate(q).w) or 0) < NOW then n = 0 end
    -- a queue whose rate limit refuses every start until later (rate.lua)
    if n > 0 and qstate(q).rl and RATE.held(q) then n = 0 end
    if n > 0 then
      pushes = pushes or {}
      pushes[#pushes + 1] = q
      pushes[q] = math.min(n, 1000)
      qs_set(q, 'k', '1')
    end
  end
  -- a drain call leaves the removals to other calls: the finish whose
  -- cascade it goes on with may still answer repeats of the workflow's
  -- jobs (finish.lua, KEEP)
  if not CALL.no_gc then gc() end
  qs_flush()
  seq_flush()
  EV.flush()
  local u = CALL.unlink
  if u then
    for i = 1, #u, 1000 do redis.call('UNLINK', unpack(u, i, math.min(i + 999, #u))) end
  end
  for _, q in ipairs(dels or EMPTY) do redis.call('DEL', qkey(q, 'w')) end
  for _, q in ipairs(pushes or EMPTY) do
    local toks = {}
    for i = 1, pushes[q] do toks[i] = '1' end
    local k = qkey(q, 'w')
    if redis.call('LPUSH', k, unpack(toks)) > 2000 then redis.call('LTRIM', k, '0', '999') end
  end
  for i = 1, #pub, 2 do redis.call('PUBLISH', pub[i], pub[i + 1]) end
  -- running tasks a sweep's deadline asked to stop (cancel.lua), as
  -- publish_stops below does
  local st = CALL.stops
  if st then
    for i = 1, #st, 1000 do redis.call('PUBLISH', P .. 'stop', table.concat(st, ' ', i, math.min(i + 999, #st))) end
  end
end

-- publish_stops tells the workers which running jobs this call asked to
-- stop (ids, in order) on the partition's channel P stop, 1,000 IDs a
-- message separated by spaces, so that their handlers stop before the next
-- heartbeat (redisstore.Store.WatchStops). Called after finalize: PUBLISH is
-- never refused, not even by a full server.
local function publish_stops(ids)
  for i = 1, #ids, 1000 do
    redis.call('PUBLISH', P .. 'stop', table.concat(ids, ' ', i, math.min(i + 999, #ids)))
  end
end

-- ---- scripts/expire.lua
-- weir2_expire: Sweeps every queue, by name: leases whose deadline is not
-- after now end their attempt as failed ("lease_expired"), then due
-- delayed jobs become ready; at most max of each per queue.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  max per queue
-- ARGV[5]  "<k>/<d>/<queue>" or none: go on from that queue (by name), k
--          of its leases ended and d of its delayed jobs handled already
--          (where an earlier call stopped)
-- Reply:   nExpired, Settled* (reply.lua), nDue, (job ID, queue)*, then
--          "P<k>/<d>/<queue>" when an expiry's or a timeout's cascade ran
--          out of the call's budget: the sweep stopped after it, in that
--          queue, k of whose leases it ended and d of whose delayed jobs it
--          handled (drain, then expire from there)
-- Errors:  PENDING (drain.lua: drain, then send the call again)
--
--!include call.lua
--!include sweep.lua
--!include reply.lua
--!include drain.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
allow_full()
if not drain_first() then
  finalize()
  return redis.error_reply('PENDING a cascade left by an earlier call is still being finished')
end
local max = tonumber(ARGV[4])
local names = redis.call('HKEYS', K_QUEUES)
table.sort(names, bytes_less)
-- where an earlier call stopped: in queue "from", k of its leases ended and
-- d of its delayed jobs handled
local k, d, from = string.match(ARGV[5] or '', '^(%d+)/(%d+)/(.+)$')
k, d = tonumber(k) or 0, tonumber(d) or 0
local res = {expired = {}, due = {}}
for _, q in ipairs(names) do
  if not from or not bytes_less(q, from) then
    res.n, res.d = 0, 0
    local left, left_due = max, max
    if q == from then left, left_due = max - k, max - d end
    sweep(q, max, res, left, left_due)
    if CALL.stopped then
      CALL.stopped_at = fmt(res.n + max - left) .. '/' .. fmt(res.d + max - left_due) .. '/' .. q
      break
    end
  end
end
finalize()
local out = {fmt(#res.expired)}
for _, s in ipairs(res.expired) do put_settled(out, s) end
put_list(out, res.due, 2)
if CALL.stopped then out[#out + 1] = 'P' .. CALL.stopped_at end
return out
