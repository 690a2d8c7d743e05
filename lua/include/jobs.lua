-- jobs.lua: loading jobs and workflows, pushing, settling, leasing,
-- sweeping. Needs core.lua. A job is a table:
--   {id, kind = 'j' (plain) | 't' (task) | 'u' (undo), key, pre, wf, i}
-- whose fields live in hash `key` under the names `pre .. field`:
--   plain job  weir:{..}:j:<id>   fields without prefix
--   task i     weir:{..}:w:<wf>   fields "t<i>.<field>"
--   undo of i  weir:{..}:w:<wf>   fields "u<i>.<field>"
-- Dynamic job fields: s state, a attempt, ra runAt, tk token, dl deadline,
-- cr cancel requested, r result, e error, en ended, o open dependencies,
-- lt/ls last finish token and its Settled, b/pa undo blockers and parents,
-- c created (undo). See spec/keys.md.

local task_ended, undo_ended -- defined in workflow.lua

-- expired: an ended record whose retention passed before this script.
local function expired(key)
  if IGNORE_EXPIRY then return false end
  local x = hget(key, 'x')
  if not x or x == '' or x == '0' then return false end
  if dirty(key, 'x') then return false end
  return tonumber(x) <= NOW
end

-- The scalar fields of a workflow hash and of a task / undo job, read with
-- one HMGET when the workflow or job is first used (the fields a finish or
-- a claim reads anyway; see spec/keys.md).
local WF_FIELDS = {'st', 'n', 'x', 'c', 'rs', 'ff', 'uoc', 'cr', 'cu', 'cat', 'en', 'rem', 'ua', 'fbc', 'fff', 'urem', 'ufail', 'alw', 'und'}
local JOB_FIELDS = {'a', 'ra', 'tk', 'dl', 'cr', 'r', 'e', 'en', 'o', 'lt', 'ls'}
local UNDO_FIELDS = {'s', 'a', 'ra', 'tk', 'dl', 'cr', 'r', 'e', 'en', 'lt', 'ls', 'c', 'b', 'pa'}
local function prefetch_job(w, pre, i, fields)
  local want = {'t' .. tostring(i)}
  for _, f in ipairs(fields) do want[#want + 1] = pre .. f end
  prefetch(w.key, want)
end

local WFS = {}
local function load_wf(id)
  local w = WFS[id]
  if w ~= nil then return w or nil end
  local key = P .. 'w:' .. id
  prefetch(key, WF_FIELDS)
  if not hget(key, 'st') or expired(key) then
    WFS[id] = false
    return nil
  end
  w = {id = id, key = key, pkey = key .. ':p', skey = key .. ':s', ikey = key .. ':i', n = num(hget(key, 'n')), specs = {}, tj = {}, uj = {},
    SO = {}, SN = 0}
  WFS[id] = w
  return w
end

-- tname returns task i's name: the first field of its spec.
local function tname(w, i)
  local s = hget(w.key, 't' .. tostring(i))
  local e = string.find(s, '|', 1, true)
  return string.sub(s, 1, e - 1)
end

-- spec parses task i's spec: name|queue|prio|attempts|backoff|timeout|flags|undoQueue|deps|dependents
local function spec(w, i)
  local sp = w.specs[i]
  if sp then return sp end
  local f = split(hget(w.key, 't' .. tostring(i)), '|')
  sp = {
    name = f[1], q = f[2], pr = tonumber(f[3]), ma = tonumber(f[4]), bo = tonumber(f[5]),
    to = tonumber(f[6]), flags = f[7], uq = f[8], deps = ilist(f[9]), dnts = ilist(f[10]),
  }
  sp.absorb = string.find(sp.flags, 'B', 1, true) ~= nil
  w.specs[i] = sp
  return sp
end

local function always(w, i) return string.byte(hget(w.key, 'alw'), i) == 49 end
local function has_undo(w, i) return string.byte(hget(w.key, 'und'), i) == 49 end

local JOBS = {}
local function tjob(w, i)
  local j = w.tj[i]
  if j then return j end
  local pre = 't' .. tostring(i) .. '.'
  prefetch_job(w, pre, i, JOB_FIELDS)
  j = {id = w.id .. '/' .. tname(w, i), kind = 't', key = w.key, pre = pre, wf = w, i = i}
  w.tj[i] = j
  JOBS[j.id] = j
  return j
end
local function ujob(w, i)
  local j = w.uj[i]
  if j then return j end
  local pre = 'u' .. tostring(i) .. '.'
  prefetch_job(w, pre, i, UNDO_FIELDS)
  j = {id = w.id .. '/' .. tname(w, i) .. '/undo', kind = 'u', key = w.key, pre = pre, wf = w, i = i}
  w.uj[i] = j
  JOBS[j.id] = j
  return j
end

-- load_job finds a live job by ID (validated in Go), or nil.
local function load_job(id)
  local j = JOBS[id]
  if j ~= nil then return j or nil end
  local s1 = string.find(id, '/', 1, true)
  if not s1 then
    local key = P .. 'j:' .. id
    if not hload(key) or not hget(key, 's') or expired(key) then
      JOBS[id] = false
      return nil
    end
    j = {id = id, kind = 'j', key = key, pre = ''}
    JOBS[id] = j
    return j
  end
  local rest = string.sub(id, s1 + 1)
  local s2 = string.find(rest, '/', 1, true)
  local name, kind = rest, 't'
  if s2 then
    if string.sub(rest, s2 + 1) ~= 'undo' then
      JOBS[id] = false
      return nil
    end
    name, kind = string.sub(rest, 1, s2 - 1), 'u'
  end
  local w = load_wf(string.sub(id, 1, s1 - 1))
  local i = w and hget(w.ikey, name)
  if not i then
    JOBS[id] = false
    return nil
  end
  i = tonumber(i)
  if kind == 't' then return tjob(w, i) end
  if not hget(w.key, 'u' .. tostring(i) .. '.s') then
    JOBS[id] = false
    return nil
  end
  return ujob(w, i)
end

local function jget(j, f) return hget(j.key, j.pre .. f) end
local function jset(j, f, v) hset(j.key, j.pre .. f, v) end

-- Task states live in one string per workflow (key w:<id>:s), one byte per
-- task in plan order; W is "cancelled by CancelWorkflow", whose error is
-- "workflow cancelled" and whose end time is the workflow's field cat.
-- Changes are kept in an overlay (w.SO) and written by finalize.
local CH = {waiting = 'w', queued = 'q', running = 'r', completed = 'c', failed = 'f', cancelled = 'x'}
local ST = {w = 'waiting', q = 'queued', r = 'running', c = 'completed', f = 'failed', x = 'cancelled', W = 'cancelled'}
local SDIRTY = {}
local function wS(w)
  if not w.S then w.S = redis.call('GET', w.skey) or '' end
  return w.S
end
local function tchar(w, i) return w.SO[i] or string.sub(wS(w), i, i) end
local function tstate(w, i) return ST[tchar(w, i)] end
local function set_tstate(w, i, st)
  wS(w)
  if not w.SO[i] then w.SN = w.SN + 1 end
  w.SO[i] = CH[st]
  if not w.sdirty then
    w.sdirty = true
    SDIRTY[#SDIRTY + 1] = w
  end
end
local function jstate(j)
  if j.kind == 't' then return tstate(j.wf, j.i) end
  return hget(j.key, j.pre .. 's')
end
local function set_state(j, st)
  if j.kind == 't' then set_tstate(j.wf, j.i, st) else jset(j, 's', st) end
end
-- terr / jerr / jended: a task's error and end time, W included.
local function terr(w, i)
  if tchar(w, i) == 'W' then return 'workflow cancelled' end
  return hget(w.key, 't' .. tostring(i) .. '.e')
end
local function jerr(j)
  if j.kind == 't' then return terr(j.wf, j.i) end
  return jget(j, 'e')
end
local function jended(j)
  if j.kind == 't' and tchar(j.wf, j.i) == 'W' then return hget(j.wf.key, 'cat') end
  return jget(j, 'en')
end

-- jattr: queue, priority, attempts, backoff, timeout of a job.
local function jattr(j)
  local a = j.attr
  if a then return a end
  if j.kind == 'j' then
    a = {q = hget(j.key, 'q'), pr = num(hget(j.key, 'pr')), ma = num(hget(j.key, 'ma')),
      bo = num(hget(j.key, 'bo')), to = num(hget(j.key, 'to'))}
  else
    local sp = spec(j.wf, j.i)
    a = {q = sp.q, pr = sp.pr, ma = sp.ma, bo = sp.bo, to = sp.to}
    if j.kind == 'u' then a.q = sp.uq end
  end
  j.attr = a
  return a
end

local function new_fx() return {pushed = {}, cancelled = {}, wf_ended = false} end

local function mark_ended(j)
  if not ENDED_JSET[j.id] then
    ENDED_JSET[j.id] = true
    ENDED_J[#ENDED_J + 1] = j
  end
end

-- note_due lowers queue q's due hint (seq field n:<queue>) to t when it
-- is known and later. The hint is a time before which no lease of q ends
-- and no delayed job of q falls due ("none": neither set has a member;
-- absent: unknown); a sweep that finds it ahead of now reads nothing, and
-- a sweep stores the next due time it saw. Every lease taken or shortened
-- and every job delayed calls this; removals leave the hint low, which
-- costs at most one read too many. (Helpers are defined late in the files
-- when they can: each top-level function is a closure made on every call.)
local function note_due(q, t)
  local h = hget(K_SEQ, 'n:' .. q)
  if h and (h == 'none' or t < tonumber(h)) then hset(K_SEQ, 'n:' .. q, fmt(t)) end
end

-- push puts a job in its queue: ready now, or delayed until its runAt.
local function push(j, fx)
  set_state(j, 'queued')
  local a = jattr(j)
  if not hget(K_SEQ, wq(a.q)) then
    -- first push seen by the seq hash: register the queue, and wake
    -- whoever waits on it (claims register as waiters on known queues only)
    if not hget(K_QUEUES, a.q) then hset(K_QUEUES, a.q, '0') end
    hset(K_SEQ, wq(a.q), '0')
    WAKE_NEW[a.q] = true
  end
  local ra = num(jget(j, 'ra'))
  if ra > NOW then
    zadd(qkey(a.q, 'd'), ra, j.id)
    note_due(a.q, ra)
    return
  end
  if ra ~= 0 then jset(j, 'ra', nil) end
  local seq = next_seq('push')
  zadd(qkey(a.q, 'r'), (a.pr + 1000) * PRIO_UNIT + seq, j.id)
  wake(a.q, 1)
  local p = fx.pushed
  p[#p + 1] = j.id
  p[#p + 1] = a.q
end

local function unqueue(j)
  local q = jattr(j).q
  if zrem(qkey(q, 'r'), j.id) == 0 then zrem(qkey(q, 'd'), j.id) end
end

-- cancel_task ends a waiting, queued or pending job as cancelled, without
-- its consequences.
local function cancel_task(j, reason, fx)
  if jstate(j) == 'queued' then
    unqueue(j)
    if jget(j, 'ra') then jset(j, 'ra', nil) end
  end
  set_state(j, 'cancelled')
  jset(j, 'e', reason)
  jset(j, 'en', NOW_S)
  fx.cancelled[#fx.cancelled + 1] = j.id
  mark_ended(j)
end

-- after_end runs the consequences of a job that just ended.
local function after_end(j, fx)
  mark_ended(j)
  if j.kind == 'j' then
    jset(j, 'x', fmt(NOW + RETENTION))
  elseif j.kind == 'u' then
    undo_ended(j.wf, j.i, fx)
  else
    task_ended(j.wf, j.i, fx)
  end
end

local function end_job(j, state, fx)
  set_state(j, state)
  jset(j, 'en', NOW_S)
  if jget(j, 'ra') then jset(j, 'ra', nil) end
  after_end(j, fx)
end

local function backoff_delay(bo, attempt)
  local d = bo
  local i = 1
  while i < attempt and d < MAX_BACKOFF do
    d = d * 2
    i = i + 1
  end
  if d > MAX_BACKOFF then d = MAX_BACKOFF end
  return d
end

-- settle applies an outcome to a running job and returns its Settled:
-- {id, state, run_at, pushed, wf_state, wf_ended}.
local function settle(j, kind, result, err, nonretry, retry_after)
  local a = jattr(j)
  zrem_later(qkey(a.q, 'a'), j.id)
  -- tk and dl stay: they mean something only while running (no HDEL)
  local fx = new_fx()
  if err == '' then err = nil end
  if kind == 'completed' then
    jset(j, 'r', result)
    jset(j, 'e', nil)
    end_job(j, 'completed', fx)
  elseif kind == 'cancelled' then
    jset(j, 'e', err)
    end_job(j, 'cancelled', fx)
  elseif kind == 'released' then
    jset(j, 'a', fmt(num(jget(j, 'a')) - 1))
    if jget(j, 'cr') then
      jset(j, 'e', 'cancelled')
      end_job(j, 'cancelled', fx)
    else
      push(j, fx)
    end
  else
    jset(j, 'e', err)
    local att = num(jget(j, 'a'))
    if jget(j, 'cr') then
      end_job(j, 'cancelled', fx)
    elseif not nonretry and att < a.ma then
      local delay = retry_after
      if delay == 0 then delay = backoff_delay(a.bo, att) end
      jset(j, 'ra', fmt(NOW + delay))
      push(j, fx)
    else
      end_job(j, 'failed', fx)
    end
  end
  local s = {id = j.id, state = jstate(j), run_at = num(jget(j, 'ra')), pushed = fx.pushed,
    wf_state = '', wf_ended = fx.wf_ended}
  if j.wf then s.wf_state = hget(j.wf.key, 'st') end
  return s
end

-- encode_settled / decode_settled: the Settled kept on a job for repeats,
-- "state runAt wfState ended id queue id queue ...".
local function encode_settled(s)
  local t = {s.state, fmt(s.run_at), s.wf_state == '' and '-' or s.wf_state, s.wf_ended and '1' or '0'}
  for _, v in ipairs(s.pushed) do t[#t + 1] = v end
  return join(t, ' ')
end
local function decode_settled(id, str)
  local t = {}
  for v in string.gmatch(str, '[^ ]+') do t[#t + 1] = v end
  local s = {id = id, state = t[1], run_at = tonumber(t[2]), wf_state = t[3], wf_ended = t[4] == '1', pushed = {}}
  if s.wf_state == '-' then s.wf_state = '' end
  for i = 5, #t do s.pushed[#s.pushed + 1] = t[i] end
  return s
end

-- sweep expires q's overdue leases, then makes its due delayed jobs ready,
-- each in (time, ID) order and at most max of each. res, when given,
-- collects {expired = {Settled...}, due = {id, queue, ...}}. It reads
-- nothing when q's due hint (seq field n:<queue>, see note_due) lies ahead
-- of now, and stores the next hint after a sweep.
local function sweep(q, max, res)
  local h = hget(K_SEQ, 'n:' .. q)
  if h and (h == 'none' or tonumber(h) > NOW) then return end
  -- due_until reads the first max + 1 members of sorted set k with their
  -- scores and returns those due by now (at most max), and the score of
  -- the first one not taken (nil when there is none)
  local function due_until(k, max)
    zflush(k)
    local r = redis.call('ZRANGEBYSCORE', k, '-inf', '+inf', 'WITHSCORES', 'LIMIT', 0, max + 1)
    local due = {}
    for x = 1, #r, 2 do
      local t = tonumber(r[x + 1])
      if t > NOW or #due == max then return due, t end
      due[#due + 1] = r[x]
    end
    return due, nil
  end
  local ak = qkey(q, 'a')
  local due, na = due_until(ak, max)
  for _, id in ipairs(due) do
    local j = load_job(id)
    if j then
      local s = settle(j, 'failed', nil, 'lease_expired', false, 0)
      if res then res.expired[#res.expired + 1] = s end
    else
      zrem(ak, id)
    end
  end
  local dk = qkey(q, 'd')
  local nd
  due, nd = due_until(dk, max)
  -- leases taken and jobs delayed later in this call lower it again
  if na and nd then
    hset(K_SEQ, 'n:' .. q, fmt(math.min(na, nd)))
  elseif na or nd then
    hset(K_SEQ, 'n:' .. q, fmt(na or nd))
  else
    hset(K_SEQ, 'n:' .. q, 'none')
  end
  for i = 1, #due, 1000 do redis.call('ZREM', dk, unpack(due, i, math.min(i + 999, #due))) end
  for _, id in ipairs(due) do
    local j = load_job(id)
    if j then
      if jget(j, 'ra') then jset(j, 'ra', nil) end
      local fx = new_fx()
      push(j, fx)
      if res then
        for _, v in ipairs(fx.pushed) do res.due[#res.due + 1] = v end
      end
    end
  end
end
