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
--!include attempts.lua

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
  local hs = {p .. F_ERROR, 'lease_expired', p .. F_EXPIRIES, fmt(xp + 1), p .. F_TOKEN, ''}
  if j.kind ~= 't' then
    hs[7] = p .. F_STATE
    hs[8] = 'queued'
  end
  local w = FF.archive(j, hs, 'expired', 'lease_expired')
  local fx = {}
  EV.add('retried', j.id, j.att, 'lease_expired', w)
  j.rq = true
  push(j, 0, fx, true)
  READY.add_ready(hs, j)
  redis.call('HSET', j.key, unpack(hs))
  local s = {id = j.id, state = 'queued', run_at = 0, pushed = fx.pushed, wf_state = '', wf_ended = false}
  if j.wf then s.wf_state = wget(j.wf, W_STATE) end
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
    EV.add('completed', j.id, 1, '', EV.cfg ~= 'off' and jget(j, 'w') or nil)
    mark_ended(j)
    j.x = NOW + RETENTION
    local s = {id = j.id, state = 'completed', run_at = 0, wf_state = '', pushed = false, wf_ended = false}
    if RETENTION == 0 and not awaited(P .. 'await:j:' .. j.id) then
      j.unlink = true
      local u = bag('unlink')
      u[#u + 1] = j.key
    else
      -- with a finish + claim's mark (resent.lua)
      local t = CALL.rn and FF.rs_tok(j.id, tok) or tok
      if result then
        redis.call('HSET', j.key, F_STATE, 'completed', F_ENDED, NOW_S, F_TOKEN, '', F_LAST_SETTLED, t, F_RESULT, result)
      else
        redis.call('HSET', j.key, F_STATE, 'completed', F_ENDED, NOW_S, F_TOKEN, '', F_LAST_SETTLED, t)
      end
    end
    return s
  end
  local fx = {}
  local p = j.pre
  local st, ra = 'completed', 0
  -- the attempt's w, for its events (read before archive clears it)
  local w = jget(j, 'w')
  -- hs: the job's fields to write (field, value, ...)
  local hs
  if kind == 'completed' then
    hs = {p .. F_ENDED, NOW_S}
    if result then
      hs[3] = p .. F_RESULT
      hs[4] = result
    end
    -- only a failed attempt leaves an error, and a later attempt is then 2
    if j.att > 1 then
      hs[#hs + 1] = p .. F_ERROR
      hs[#hs + 1] = ''
    end
  elseif kind == 'cancelled' then
    st = 'cancelled'
    hs = {p .. F_ENDED, NOW_S, p .. F_ERROR, err}
  elseif kind == 'released' then
    hs = {p .. F_ATTEMPT, fmt(j.att - 1)}
    FF.archive(j, hs, 'released', '')
    if j.cr then
      st = 'cancelled'
      -- appended: FF.archive's fields come before these
      local n = #hs
      hs[n + 1], hs[n + 2], hs[n + 3], hs[n + 4] = p .. F_ERROR, 'cancelled', p .. F_ENDED, NOW_S
    else
      st = 'queued'
    end
  else
    hs = {p .. F_ERROR, err}
    -- the attempts that count: those started, less the lease expiries
    -- that cost none (read only here, on the failure path)
    local counted = j.att
    if j.att > 1 then counted = j.att - (tonumber(jget(j, F_EXPIRIES)) or 0) end
    if j.cr then
      st = 'cancelled'
    elseif not nonretry and counted < select(3, job_attr(j)) then
      st = 'queued'
      local delay = tonumber(retry_after)
      if delay == 0 then delay = backoff_delay(select(4, job_attr(j)), counted) end
      ra = NOW + delay
      hs[3], hs[4] = p .. F_RUN_AT, fmt(ra)
    else
      st = 'failed'
    end
    if st ~= 'queued' then
      hs[#hs + 1] = p .. F_ENDED
      hs[#hs + 1] = NOW_S
    end
    -- an attempt that does not end its job by a finish moves into the
    -- history: retried, or its lease expired (no token)
    if not tok then
      FF.archive(j, hs, 'expired', 'lease_expired')
    elseif st == 'queued' then
      FF.archive(j, hs, 'failed', err)
    end
  end
  if j.kind ~= 't' then
    hs[#hs + 1] = p .. F_STATE
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
    EV.add('retried', j.id, ea, er, w)
    j.rq = true
    push(j, ra, fx, true)
  else
    EV.add(st, j.id, ea, er, w)
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
  if j.wf then s.wf_state = wget(j.wf, W_STATE) end
  if j.kind == 'j' and st ~= 'queued' then
    if RETENTION == 0 and not awaited(P .. 'await:j:' .. j.id) then
      j.unlink = true
      local u = bag('unlink')
      u[#u + 1] = j.key
      return s
    end
  end
  hs[#hs + 1] = p .. F_TOKEN
  hs[#hs + 1] = ''
  if tok then
    -- with a finish + claim's mark (resent.lua) when the job ended and the
    -- claim runs
    local t = tok
    if CALL.rn and st ~= 'queued' and not CALL.stopped then t = FF.rs_tok(j.id, tok) end
    hs[#hs + 1] = p .. F_LAST_SETTLED
    if j.kind == 'j' and st ~= 'queued' then hs[#hs + 1] = t else hs[#hs + 1] = t .. ' ' .. encode_settled(s) end
  end
  READY.add_ready(hs, j)
  redis.call('HSET', j.key, unpack(hs))
  return s
end
