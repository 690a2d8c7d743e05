-- lease.lua: leasing queued jobs to a claim, and what the claim hands the
-- worker with each (its Claimed).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include sweep.lua

-- put_dep appends a dependency outcome: its task's spec, state, hasResult,
-- result, error (the values of one HMGET: spec, result, error).
local function put_dep(out, w, d, spec, r, e)
  local n = #out
  out[n + 1] = spec
  out[n + 2] = task_state(w, d)
  out[n + 3] = r and '1' or ''
  out[n + 4] = r or ''
  out[n + 5] = e or ''
  if task_byte(w, d) == 'W' then out[n + 5] = 'workflow cancelled' end
end

-- put_deps appends the count and the outcomes of the tasks listed in dp
-- ("1,5,7", or nil), in that order.
local function put_deps(out, w, dp)
  local deps = ilist(dp)
  out[#out + 1] = fmt(#deps)
  if #deps > 4 then states_read(w) end
  for first = 1, #deps, 300 do
    local last = math.min(first + 299, #deps)
    local f = {}
    for x = first, last do
      local t = 't' .. fmt(deps[x])
      f[#f + 1] = t
      f[#f + 1] = t .. '.' .. F_RESULT
      f[#f + 1] = t .. '.' .. F_ERROR
    end
    local v = redis.call('HMGET', w.key, unpack(f))
    for x = first, last do
      local b = 3 * (x - first)
      put_dep(out, w, deps[x], v[b + 1], v[b + 2], v[b + 3])
    end
  end
end

-- lease_job leases queued job j until now + lease_ms and appends its
-- Claimed to out: id spec created hasPayload payload attempt token
-- deadline error nDeps (spec state hasResult result error)*. The rest of
-- a snapshot is implied: state running, no run-at, result or end, no
-- cancel request (a queued job has none), and Go reads queue, priority
-- and retry policy from the spec.
local function lease_job(j, lease_ms, out)
  local spec, a, e, pay, created, dp
  if j.kind == 'j' then
    spec, a, e, pay, created = jget(j, F_SPEC, F_ATTEMPT, F_ERROR, F_PAYLOAD, F_CREATED)
    j.spec = spec
  elseif j.kind == 't' then
    local w = j.wf
    local v = redis.call('HMGET', w.key, 't' .. j.is, j.pre .. F_ATTEMPT, j.pre .. F_DEPS)
    spec, a, dp = v[1], v[2], v[3]
    j.spec = spec
    w.specs = w.specs or {}
    w.specs[j.i] = spec
    -- an error is left only by a failed attempt, so never before attempt 1
    if a and a ~= '0' then e = jget(j, F_ERROR) end
    pay = redis.call('HGET', w.pkey, j.is)
    created = wget(w, F_CREATED)
  else
    spec = job_spec(j)
    a, e, created = jget(j, F_ATTEMPT, F_ERROR, F_CREATED)
    pay = redis.call('HGET', j.wf.pkey, 'u' .. j.is)
  end
  local attempt = fmt((tonumber(a) or 0) + 1)
  local token = fmt(seq_next('lease'))
  local dl = NOW + lease_ms
  local dls = fmt(dl)
  if j.kind == 't' then
    set_task_state(j.wf, j.i, 'running')
    jset(j, F_ATTEMPT, attempt, F_TOKEN, token, F_DEADLINE, dls)
  else
    j.st = 'running'
    jset(j, F_STATE, 'running', F_ATTEMPT, attempt, F_TOKEN, token, F_DEADLINE, dls)
  end
  active_add_later(job_queue(j), dl, j.id)
  local n = #out
  out[n + 1] = j.id
  out[n + 2] = spec
  out[n + 3] = created or '0'
  out[n + 4] = pay and '1' or ''
  out[n + 5] = pay or ''
  out[n + 6] = attempt
  out[n + 7] = token
  out[n + 8] = dls
  out[n + 9] = e or ''
  if j.kind == 'j' then
    out[n + 10] = '0'
  elseif j.kind == 'u' then
    out[n + 10] = '1'
    local t = 't' .. j.is
    local v = redis.call('HMGET', j.wf.key, t, t .. '.' .. F_RESULT, t .. '.' .. F_ERROR)
    put_dep(out, j.wf, j.i, v[1], v[2], v[3])
  else
    put_deps(out, j.wf, dp)
  end
end

-- claim leases up to max jobs from queues, in order, skipping paused and
-- unknown queues; sweeps each queue first (at most SWEEP_PER_CLAIM expired
-- leases and due delayed jobs); a job popped that is no longer queued
-- (cancelled, its workflow gone) is dropped. Appends the Claimed to out and
-- returns how many. The claim's queues' seq fields (w:, p:, n:, k:) were
-- read with the clock.
local function claim(queues, max, lease_ms, out)
  local seen = {}
  local n = 0
  for _, q in ipairs(queues) do
    if not seen[q] then
      seen[q] = true
      if seq_get('w:' .. q) then
        if seq_get('p:' .. q) == '1' then
          wake_clear(q)
        else
          sweep(q, SWEEP_PER_CLAIM, nil)
          local rk = qkey(q, 'r')
          local n0 = n
          while n < max do
            local want = max - n
            local got = redis.call('ZPOPMIN', rk, want)
            for k = 1, #got, 2 do
              local j = load_job(got[k])
              if j and job_state(j) == 'queued' then
                lease_job(j, lease_ms, out)
                n = n + 1
              end
            end
            -- fewer than asked: the queue is empty, no second ZPOPMIN
            if #got < 2 * want then break end
          end
          -- every lease taken here ends at now + lease_ms: one hint update
          if n > n0 then note_due(q, NOW + lease_ms) end
          if n < max then wake_clear(q) end
          active_flush(q)
        end
      end
      if n == max then break end
    end
  end
  return n
end

-- next_due returns the earliest delayed job or lease deadline of the
-- known, unpaused queues, or 0.
local function next_due(queues)
  local best = 0
  for _, q in ipairs(queues) do
    if seq_get('w:' .. q) and seq_get('p:' .. q) ~= '1' then
      active_flush(q)
      for _, kind in ipairs({'d', 'a'}) do
        local r = redis.call('ZRANGE', qkey(q, kind), 0, 0, 'WITHSCORES')
        if #r > 0 then
          local t = tonumber(r[2])
          if best == 0 or t < best then best = t end
        end
      end
    end
  end
  return best
end
