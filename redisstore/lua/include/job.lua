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
    local v = redis.call('HMGET', key, F_STATE, F_ENDED)
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
    j.st = redis.call('HGET', w.key, j.pre .. F_STATE)
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
    v = redis.call('HMGET', j.key, p .. F_TOKEN, p .. F_LAST_SETTLED, p .. F_ATTEMPT, p .. F_CANCEL, p .. F_DEADLINE)
    return j, v[1], v[2], v[3], v[4], v[5]
  end
  local s1 = string.find(id, '/', 1, true)
  if not s1 then
    local key = P .. 'j:' .. id
    v = redis.call('HMGET', key, F_TOKEN, F_LAST_SETTLED, F_ATTEMPT, F_CANCEL, F_DEADLINE, F_SPEC, F_STATE, F_ENDED)
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
    v = redis.call('HMGET', key, W_STATE, W_EXPIRES, F_CREATED, W_CANCEL, pre .. F_TOKEN, pre .. F_LAST_SETTLED,
      pre .. F_ATTEMPT, pre .. F_CANCEL, pre .. F_DEADLINE, t, t .. '.' .. F_DEPENDENTS, pre .. F_STATE)
    w = wf_found(wid, key, v[1], v[2], v[3], v[4])
    o = 4
  elseif w then
    v = redis.call('HMGET', w.key, pre .. F_TOKEN, pre .. F_LAST_SETTLED, pre .. F_ATTEMPT, pre .. F_CANCEL,
      pre .. F_DEADLINE, t, t .. '.' .. F_DEPENDENTS, pre .. F_STATE)
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
  if not j.st then j.st = redis.call('HGET', j.key, j.pre .. F_STATE) end
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
  if not later then redis.call('HSET', j.key, j.pre .. F_STATE, st) end
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
    if j.kind == 'j' then j.spec = redis.call('HGET', j.key, F_SPEC) else j.spec = task_spec(j.wf, j.i, j.is) end
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
