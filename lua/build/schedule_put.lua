-- weir2_schedule_put: built from lua/scripts and lua/include by `go test ./redisstore -run TestBuiltIsCurrent -update`:
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

-- ---- scripts/schedule_put.lua
-- weir2_schedule_put: Creates a schedule, or replaces the spec of one
-- (which keeps its paused flag and its last tick); its next tick becomes
-- the one given.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  schedule name
-- ARGV[5]  spec (JSON, engine.EncodeScheduleSpec; stored, never read here)
-- ARGV[6]  "j" a job schedule, "w" a workflow schedule
-- ARGV[7]  next tick, ms
-- ARGV[8]  most schedules a partition holds (engine.MaxSchedules)
-- ARGV[9]  overlap policy ("allow" or "skip", resolved)
-- Publishes the name on P schedules (redisstore.Store.WatchSchedules).
-- Reply:   created ("1" or ""), revision; or "LIMIT" when the partition
--          holds the most schedules already (nothing written)
--
--!include call.lua
--!include finalize.lua

begin(KEYS, ARGV)
local name, key = ARGV[4], P .. 's:' .. ARGV[4]
read_clock()
local v = redis.call('HMGET', key, 'r', 'p')
if not v[1] and redis.call('ZCARD', P .. 'sched') >= tonumber(ARGV[8]) then
  return {'LIMIT'}
end
local rev = (tonumber(v[1]) or 0) + 1
redis.call('HSET', key, 'd', ARGV[5], 'k', ARGV[6], 'o', ARGV[9], 'r', fmt(rev), 'n', ARGV[7])
redis.call('ZADD', P .. 'sched', ((v[2] == '1' or ARGV[7] == '0') and '+inf' or ARGV[7]), name)
finalize()
-- workers sleeping until their earliest tick read the schedules again
redis.call('PUBLISH', P .. 'schedules', name)
if v[1] then return {'', fmt(rev)} end
return {'1', fmt(rev)}
