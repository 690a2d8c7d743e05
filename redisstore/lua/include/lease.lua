-- lease.lua: leasing queued jobs to a claim, and what the claim hands the
-- worker with each (its Claimed).
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include sweep.lua
--!include text.lua
--!include rate.lua
--!include checkpoint.lua
--!include trace.lua
--!include ready.lua
--!include fast_claim.lua

-- quarantine keeps the ID of a job popped from queue q's ready set whose
-- record a claim cannot read (a key of another type, a hash without its
-- spec: written by something other than weir) in q:<q>:x for an operator,
-- instead of failing the claim after its first write (spec/scripts.md,
-- Rules); the rest of the call takes the job as gone.
local function quarantine(q, id)
  redis.call('ZADD', qkey(q, 'x'), NOW_S, id)
  bag('jobs')[id] = false
end

-- put_dep appends a dependency outcome's values that are not packed to
-- out (its result, then its error, each only when there is one) and
-- returns its packed part (spec/scripts.md, Replies): its task's spec,
-- state and flags ("r": a result follows, "e": an error follows), from
-- the values of one HMGET: spec, result, error.
local function put_dep(out, w, d, spec, r, e)
  local b = task_byte(w, d)
  if b == 'W' then
    e = 'workflow cancelled'
  elseif b == 'D' then
    e = 'deadline'
  elseif e == '' then
    e = nil
  end
  local n, fl = #out, ''
  if r then
    n = n + 1
    out[n] = r
    fl = 'r'
  end
  if e then
    out[n + 1] = e
    fl = fl .. 'e'
  end
  return (spec or '') .. '\n' .. task_state(w, d) .. '\n' .. fl
end

-- DEPS_INLINE: a claimed task with more dependencies than this gets "L"
-- and the list instead of their outcomes, which Go reads after the call
-- in pages (they ended, so they do not change): the claim of a wide join
-- stays short (spec/scripts.md, Cascades in bounded steps).
local DEPS_INLINE = 100

-- put_deps returns the packed part of the dependency outcomes of the
-- tasks listed in dp ("1,5,7", or nil), in that order: their count, then
-- each one's (put_dep, which appends their results and errors to out);
-- or "L" and dp when there are more than DEPS_INLINE. Tasks completed by
-- this call are answered from what it knows (a chain step's claim reads
-- nothing more).
local function put_deps(out, w, dp)
  local deps = ilist(dp)
  if #deps > DEPS_INLINE then return 'L' .. dp end
  if #deps == 0 then return '0' end
  local done, specs = w.done, w.specs
  if done and specs and #deps == 1 and done[deps[1]] ~= nil and specs[deps[1]] then
    local r = done[deps[1]]
    if r then
      out[#out + 1] = r
      return '1\n' .. specs[deps[1]] .. '\ncompleted\nr'
    end
    return '1\n' .. specs[deps[1]] .. '\ncompleted\n'
  end
  if #deps > 4 then states_read(w) end
  local pk = {fmt(#deps)}
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
      pk[#pk + 1] = put_dep(out, w, deps[x], v[b + 1], v[b + 2], v[b + 3])
    end
  end
  return table.concat(pk, '\n')
end

-- put_claimed appends job j's Claimed to out (spec/scripts.md, Replies):
-- one packed value, its fields joined by "\n" (none can hold one): id
-- spec created attempt token deadline expiries flags deps, where flags
-- has "p" when the payload (pay) follows, "e" when the error (e) does
-- and "c" when the checkpoint (ck) does, and deps is "0", or for a task
-- or undo the count and per dependency its spec, state and flags
-- (put_deps; or "L<dp>" for more than DEPS_INLINE), then "t<traceparent>"
-- (tp) and "r<ready-at>" (rd) when the job has them; then the values
-- that are never packed, each only when present: the payload, the
-- error, per dependency its result and error, the checkpoint. The rest
-- of a snapshot is implied: state running, no run-at, result or end, no
-- cancel request (a queued job has none); Go reads queue, priority and
-- retry policy from the spec.
local function put_claimed(out, j, spec, created, pay, a, token, dls, e, xp, dp, ck, tp, rd)
  local at = #out + 1
  -- (the packed value, written last)
  out[at] = ''
  local n = at
  if pay then
    n = n + 1
    out[n] = pay
  end
  if e == '' then e = nil end
  if e then out[n + 1] = e end
  local deps = '0'
  if j.kind == 'u' then
    local t = 't' .. j.is
    local r = redis.call('HMGET', j.wf.key, t, t .. '.' .. F_RESULT, t .. '.' .. F_ERROR)
    deps = '1\n' .. put_dep(out, j.wf, j.i, r[1], r[2], r[3])
  elseif j.kind ~= 'j' then
    deps = put_deps(out, j.wf, dp)
  end
  if ck then out[#out + 1] = ck end
  out[at] = j.id .. '\n' .. spec .. '\n' .. (created or '0') .. '\n' .. a .. '\n' .. token .. '\n' .. dls .. '\n' ..
    (xp or '0') .. '\n' .. (pay and 'p' or '') .. (e and 'e' or '') .. (ck and 'c' or '') .. '\n' .. deps ..
    trace_tail(tp) .. READY.tail(rd)
end

-- next_attempt is attempt count a (a string, false for none) plus one.
local NEXT_ATTEMPT = {['0'] = '1', ['1'] = '2', ['2'] = '3', ['3'] = '4', ['4'] = '5', ['5'] = '6'}
local function next_attempt(a)
  if not a then return '1' end
  return NEXT_ATTEMPT[a] or fmt(tonumber(a) + 1)
end

-- lease_job leases queued job j, popped from queue q (v: for a plain job,
-- the values of claiming's HMGET) until the deadline dl (dls formatted), appends its
-- Claimed to out and records the lease for claim_once.
local function lease_job(j, v, dl, dls, out, q)
  local spec, a, e, pay, created, dp, xp, ck, tp, rd
  local w, p = j.wf, j.pre
  if j.kind == 't' then
    -- a task without its spec (not written by weir) is quarantined
    -- before anything of it is written
    local t = 't' .. j.is
    v = redis.call('HMGET', w.key, t, p .. F_ATTEMPT, t .. '.' .. F_DEPS, p .. 'ck', F_TRACE, p .. F_READY)
    if not v[1] then
      quarantine(q, j.id)
      return false
    end
  end
  -- the counter, then the claim call's nonce, so that a token is not
  -- handed out again after a failover that lost the counter's last
  -- increments; a task's or undo's token carries its index (leased_job)
  local token = fmt(seq_next('lease')) .. '-' .. CALL.nonce
  if j.kind ~= 'j' then token = token .. '.' .. j.is end
  if j.kind == 'j' then
    spec, a, e, pay, created, xp, ck, tp, rd = v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]
    a = next_attempt(a)
    j.st = 'running'
    redis.call('HSET', j.key, F_STATE, 'running', F_ATTEMPT, a, F_TOKEN, token, F_DEADLINE, dls, 'w', CALL.wk)
  else
    if j.kind == 't' then
      spec, a, dp, ck, tp, rd = v[1], v[2], v[3], v[4], v[5], v[6]
      remember_spec(w, j.i, spec)
      created = wget(w, F_CREATED)
      pay = redis.call('HGET', w.pkey, j.is)
      set_task_state(w, j.i, 'running')
    else
      spec = job_spec(j)
      v = redis.call('HMGET', w.key, p .. F_ATTEMPT, p .. F_CREATED, p .. 'ck', F_TRACE, p .. F_READY)
      a, created, ck, tp, rd = v[1], v[2], v[3], v[4], v[5]
      pay = redis.call('HGET', w.pkey, 'u' .. j.is)
      j.st = 'running'
    end
    -- an error is left only by a failed attempt, and an expiry only by an
    -- attempt, so neither before attempt 1
    if a and a ~= '0' then
      local ex = redis.call('HMGET', w.key, p .. F_ERROR, p .. F_EXPIRIES)
      e, xp = ex[1], ex[2]
    end
    -- the flag read above: the checkpoint itself only when there is one
    ck = task_checkpoint(j, ck)
    a = next_attempt(a)
    if j.kind == 't' then
      redis.call('HSET', w.key, p .. F_ATTEMPT, a, p .. F_TOKEN, token, p .. F_DEADLINE, dls, p .. 'w', CALL.wk)
    else
      redis.call('HSET', w.key, p .. F_STATE, 'running', p .. F_ATTEMPT, a, p .. F_TOKEN, token, p .. F_DEADLINE, dls,
        p .. 'w', CALL.wk)
    end
  end
  j.spec = spec
  EV.add('started', j.id, a, '', CALL.wk)
  active_add_later(job_queue(j), dls, j.id)
  local leased = bag('leased')
  leased[#leased + 1] = j.id
  leased[#leased + 1] = token
  put_claimed(out, j, spec, created, pay, a, token, dls, e, xp, dp, ck, tp, rd)
  return true
end

-- reclaimed appends the Claimed of a job leased by an earlier run of the
-- same call (claim_once) when it still holds that lease, reading what
-- lease_job handed out; returns whether it did.
local function reclaimed(id, token, out)
  local j, tk, _, a, _, dls = leased_job(id, token)
  if not j or tk ~= token then return false end
  local spec, created, pay, e, dp, xp, ck, tp, rd = j.spec, nil, nil, nil, nil, nil, nil, nil, nil
  local p = j.pre
  if j.kind == 'j' then
    local v = redis.call('HMGET', j.key, F_CREATED, F_PAYLOAD, F_ERROR, F_EXPIRIES, 'ck', F_TRACE, F_READY)
    created, pay, e, xp, ck, tp, rd = v[1], v[2], v[3], v[4], v[5], v[6], v[7]
  else
    local w = j.wf
    local v = redis.call('HMGET', w.key, p .. F_CREATED, p .. F_ERROR, 't' .. j.is .. '.' .. F_DEPS, p .. F_EXPIRIES, p .. 'ck', F_TRACE, p .. F_READY)
    e, xp, tp, rd = v[2], v[4], v[6], v[7]
    ck = task_checkpoint(j, v[5])
    if j.kind == 't' then
      created, dp = wget(w, F_CREATED), v[3]
      pay = redis.call('HGET', w.pkey, j.is)
    else
      created = v[1]
      pay = redis.call('HGET', w.pkey, 'u' .. j.is)
    end
  end
  put_claimed(out, j, spec, created, pay, a, token, dls, e, xp, dp, ck, tp, rd)
  return true
end

-- job_and_state returns job id (j when this call has seen it, else
-- loaded) and its state, or nil when it is gone.
local function job_and_state(id, j)
  if j == nil then j = load_job(id) end
  if not j then return nil end
  return j, job_state(j)
end

-- claiming finds a job popped from queue q's ready set, and whether it is
-- still queued: a plain job with the fields lease_job hands out, in one
-- HMGET (a record it cannot read is quarantined).
local function claiming(id, q)
  local jobs = bag('jobs')
  local j = jobs[id]
  if j == nil and not string.find(id, '/', 1, true) then
    local key = P .. 'j:' .. id
    local v = redis.pcall('HMGET', key, F_STATE, F_ENDED, F_SPEC, F_ATTEMPT, F_ERROR, F_PAYLOAD, F_CREATED, F_EXPIRIES, 'ck', F_TRACE, F_READY)
    if v.err or (v[1] and not v[3]) then
      quarantine(q, id)
      return nil
    end
    if not v[1] or plain_expired(v[2]) then
      jobs[id] = false
      return nil
    end
    j = new_job('j', id, key, '', false, false, false, v[1], v[3])
    jobs[id] = j
    return v[1] == 'queued' and j, v
  end
  -- a task's or undo's workflow keys of another type (not written by
  -- weir) raise an error: quarantined rather than failing the claim
  local ok, found, st = pcall(job_and_state, id, j)
  if not ok then
    quarantine(q, id)
    return nil
  end
  j = found
  if not j or st ~= 'queued' then return nil end
  if j.kind == 'j' then
    -- seen earlier in this call (a job released, then claimed again)
    return j, redis.call('HMGET', j.key, F_STATE, F_ENDED, F_SPEC, F_ATTEMPT, F_ERROR, F_PAYLOAD, F_CREATED, F_EXPIRIES, 'ck', F_TRACE, F_READY)
  end
  return j
end

-- claim leases up to max jobs from queues, in order, skipping paused and
-- unknown queues; sweeps each queue first (at most SWEEP_PER_CLAIM expired
-- leases and due delayed jobs); a job popped that is no longer queued
-- (cancelled, its workflow gone) is dropped. Appends the Claimed to out and
-- returns how many. A sweep whose cascade ran out of the call's budget
-- stops it there (CALL.stopped, and CALL.stopped_at the queue's position).
local function claim(queues, max, lease_ms, out)
  -- a queue named twice is claimed from once (no table for one queue)
  local seen = #queues > 1 and {}
  local n = 0
  local dl = NOW + lease_ms
  local dls = fmt(dl)
  for qi, q in ipairs(queues) do
    if not seen or not seen[q] then
      if seen then seen[q] = true end
      local qs = qstate(q)
      if qs.w then
        if qs.p == '1' then
          wake_clear(q)
        else
          sweep(q, SWEEP_PER_CLAIM, nil)
          if CALL.stopped then
            -- an expiry's cascade ran out of the budget: the claim goes on
            -- from this queue in another call, once it is finished
            CALL.stopped_at = qi
            return n
          end
          local n0 = n
          -- a concurrency limit: at most room more leases of q
          local top, empty = max, false
          if qs.c then
            active_flush(q)
            top = math.min(max, n + math.max(0, tonumber(qs.c) - READY.active_count(q)))
          end
          -- a rate limit: at most room more starts of q (rate.lua)
          local room, had
          if qs.rl then
            room, had = RATE.room(q, qs)
            top = math.min(top, n + room)
          end
          while n < top do
            -- fewer than asked need not mean empty (stale elements are
            -- dropped): READY.pop says when it is
            local got, none
            if FAST then
              -- the first IDs, or the task this call's finish handed
              -- over (fast_ready.lua); plain jobs and tasks leased without
              -- per-job tables (fast_claim.lua, fast_task.lua)
              got, none = FF.ready_take(q, top - n)
              n = FF.lease(got, 1, q, n, dl, dls, out, claiming, lease_job)
            else
              got, none = READY.pop(q, top - n)
              for k = 1, #got do
                local j, v = claiming(got[k], q)
                if j and lease_job(j, v, dl, dls, out, q) then n = n + 1 end
              end
            end
            if none then
              empty = true
              break
            end
          end
          -- then the keyed jobs, across keys in rotation (keyed.lua)
          if qs.K and n < top then
            local kempty
            n, kempty = KEYED.keyed_claim(q, qs.kl, top, n, function(id)
              local j, v = claiming(id, q)
              return j and lease_job(j, v, dl, dls, out, q) or false
            end)
            empty = empty and kempty
          end
          -- every lease taken here ends at dl: one hint update
          if n > n0 then note_due(q, dl) end
          if room then RATE.started(q, qs, n - n0, had, empty) end
          if empty or (n < max and not qs.c and not room) then
            -- the ready set is empty (READY.pop said so)
            wake_clear(q)
            reset_push(q)
          end
          active_flush(q)
        end
      end
      if n == max then break end
    end
  end
  return n
end

-- claim_once is claim for a call named by nonce (random, made by Go for
-- each call and the same when go-redis sends the call again after a
-- broken connection): the call's leases are recorded under
-- claim:<nonce> for the length of a lease, and a run that finds the record
-- hands out those leases again (those still held) instead of leasing other
-- jobs, so a resent call orphans no job. first: the caller knows that no
-- earlier run of this call happened (a finish that settled an outcome: a
-- run before it would have settled it), so there is no record to look up.
-- A finish whose last outcome carries the call's mark (resent.lua: CALL.rw)
-- writes no record: its resend finds the leases by the mark.
local function claim_once(nonce, queues, max, lease_ms, out, first, worker)
  local key = P .. 'claim:' .. nonce
  local prev = not first and redis.call('GET', key)
  if prev then
    local n = 0
    for id, token in string.gmatch(prev, '([^ ]+) ([^ ]+)') do
      if reclaimed(id, token, out) then n = n + 1 end
    end
    return n
  end
  CALL.nonce = nonce
  -- what a lease writes as its attempt's w: "<start ms> <worker>"
  CALL.wk = NOW_S .. ' ' .. worker
  local n = claim(queues, max, lease_ms, out)
  -- none when a finish's last outcome keeps the call's mark (resent.lua)
  if n > 0 and not CALL.rw then redis.call('SET', key, join(CALL.leased, ' '), 'PX', fmt(lease_ms)) end
  return n
end

-- next_due returns the earliest delayed job or lease deadline of the
-- known, unpaused queues, or the next start a rate limit allows (RATE.due),
-- or 0.
local function next_due(queues)
  local best = 0
  for _, q in ipairs(queues) do
    local qs = qstate(q)
    if qs.w and qs.p ~= '1' then
      active_flush(q)
      for _, kind in ipairs({'d', 'a'}) do
        -- the lease set's first lease: below its sentinel (queue.lua)
        local top = kind == 'a' and READY.A_BELOW or '+inf'
        local r = redis.call('ZRANGEBYSCORE', qkey(q, kind), '-inf', top, 'WITHSCORES', 'LIMIT', '0', '1')
        if #r > 0 then
          local t = tonumber(r[2])
          if best == 0 or t < best then best = t end
        end
      end
      local t = RATE.due(q)
      if t > 0 and (best == 0 or t < best) then best = t end
    end
  end
  return best
end
