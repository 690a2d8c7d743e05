-- settle.lua: applying a finished attempt's outcome to a running job, and
-- what a job's end does next.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include job.lua
--!include queue.lua
--!include cascade.lua
--!include compensate.lua
--!include waiters.lua

-- after_end runs the consequences of a job that just ended: a plain job's
-- removal time, a task's cascade, an undo's release.
local function after_end(j, fx, hs)
  mark_ended(j)
  if j.kind == 'j' then
    local x = fmt(NOW + RETENTION)
    j.x = x
    if hs then
      hs[#hs + 1] = F_EXPIRES
      hs[#hs + 1] = x
    else
      jset(j, F_EXPIRES, x)
    end
  elseif j.kind == 'u' then
    undo_ended(j.wf, j.i, fx)
  else
    task_ended(j.wf, j.i, fx)
  end
end

local function end_job(j, st, fx, hs)
  set_job_state(j, st, hs)
  hs[#hs + 1] = F_ENDED
  hs[#hs + 1] = NOW_S
  after_end(j, fx, hs)
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

-- settle applies an outcome (kind completed, failed, cancelled or released)
-- to running job j, whose attempt (j.att) and cancel flag (j.cr) the
-- caller read. It returns the Settled {id, state, run_at, pushed, wf_state,
-- wf_ended} and the job's fields to write (field, value, ...), which the
-- caller writes in one HSET with its own. The lease token and deadline
-- stay: they mean something only while the job runs.
local function settle(j, kind, result, err, nonretry, retry_after)
  local q, _, ma, bo = job_attr(j)
  active_remove_later(q, j.id)
  local fx = {pushed = {}, cancelled = {}}
  local hs = {}
  local ra = 0
  if kind == 'completed' then
    if result then
      hs[1] = F_RESULT
      hs[2] = result
    end
    -- only a failed attempt leaves an error, and then a later one counts 2
    if j.att > 1 then
      hs[#hs + 1] = F_ERROR
      hs[#hs + 1] = ''
    end
    end_job(j, 'completed', fx, hs)
  elseif kind == 'cancelled' then
    hs[1] = F_ERROR
    hs[2] = err
    end_job(j, 'cancelled', fx, hs)
  elseif kind == 'released' then
    hs[1] = F_ATTEMPT
    hs[2] = fmt(j.att - 1)
    if j.cr then
      hs[3] = F_ERROR
      hs[4] = 'cancelled'
      end_job(j, 'cancelled', fx, hs)
    else
      push(j, 0, fx, hs)
    end
  else
    hs[1] = F_ERROR
    hs[2] = err
    if j.cr then
      end_job(j, 'cancelled', fx, hs)
    elseif not nonretry and j.att < ma then
      local delay = retry_after
      if delay == 0 then delay = backoff_delay(bo, j.att) end
      ra = NOW + delay
      hs[3] = F_RUN_AT
      hs[4] = fmt(ra)
      push(j, ra, fx, hs)
    else
      end_job(j, 'failed', fx, hs)
    end
  end
  local s = {id = j.id, state = job_state(j), run_at = ra, pushed = fx.pushed, wf_state = '', wf_ended = fx.wf_ended}
  if j.wf then s.wf_state = wget(j.wf, W_STATE) end
  return s, hs
end

-- encode_settled / decode_settled: the Settled kept with a job for a
-- repeated finish, "state runAt wfState ended id queue id queue ...".
local function encode_settled(s)
  local t = {s.state, fmt(s.run_at), s.wf_state == '' and '-' or s.wf_state, s.wf_ended and '1' or '0'}
  append(t, s.pushed)
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

-- write_settled writes what settle gathered for job j (and the caller's
-- fields with it). A plain job that ended with retention 0 while nobody
-- awaits it is removed instead, by finalize, with nothing written.
local function write_settled(j, hs)
  if j.kind == 'j' and RETENTION == 0 and ended_state(j.st) and not awaited(P .. 'wait:j:' .. j.id) then
    j.unlink = true
    local u = bag('unlink')
    u[#u + 1] = j.key
    return
  end
  if #hs > 0 then jset(j, unpack(hs)) end
end
