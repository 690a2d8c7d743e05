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
    m = {[W_STATE] = st, [W_EXPIRES] = x, [F_CREATED] = c, [W_CANCEL] = cr}}
  wfs[id] = w
  return w
end

-- plain_expired: whether a plain job that ended at en is gone for this
-- call (its expiry is its end plus the retention). A read that sees past
-- retention (awaits) sees it until the latest removal time its end could
-- have given it (kept GRACE while awaited: finalize.lua's expire_records),
-- not until a sweep happens to remove it.
local function plain_expired(en)
  if not en then return false end
  if IGNORE_EXPIRY then return tonumber(en) + math.max(RETENTION, GRACE) <= NOW end
  return tonumber(en) + RETENTION <= NOW
end

-- load_wf returns the live workflow id, or nil.
local function load_wf(id)
  local w = bag('wfs')[id]
  if w ~= nil then return w or nil end
  local key = P .. 'w:' .. id
  local v = redis.call('HMGET', key, W_STATE, W_EXPIRES, F_CREATED, W_CANCEL)
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
local function wf_member(w)
  -- (pad15: a creation time of 13 digits padded by hand)
  local cr = wget(w, F_CREATED)
  if cr and string.find(cr, '^%d%d%d%d%d%d%d%d%d%d%d%d%d$') then return '00' .. cr .. ':' .. w.id end
  return pad15(tonumber(cr) or 0) .. ':' .. w.id
end

-- set_wf_state moves workflow w to state st and its index entry with it.
local function set_wf_state(w, st)
  local m = wf_member(w)
  redis.call('ZREM', P .. 'wf:' .. wget(w, W_STATE), m)
  redis.call('ZADD', P .. 'wf:' .. st, '0', m)
  wset(w, W_STATE, st)
end

local function wf_ended_state(st) return st ~= 'running' and st ~= 'compensating' end

-- WEBHOOK's functions are in webhook.lua (included by finalize.lua).
local WEBHOOK = {}

-- end_wf ends workflow w in state st: its end and removal times, its
-- removal registered by finalize, and its webhook's delivery written.
local function end_wf(w, st, fx)
  set_wf_state(w, st)
  EV.add('workflow_ended', w.id, 0, st)
  w.m[W_ENDED] = NOW_S
  w.m[W_EXPIRES] = fmt(NOW + RETENTION)
  redis.call('HSET', w.key, W_ENDED, NOW_S, W_EXPIRES, w.m[W_EXPIRES])
  fx.wf_ended = true
  local e = bag('ended_w')
  e[#e + 1] = w
  WEBHOOK.deliver(w)
end
