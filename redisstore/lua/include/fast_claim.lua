-- fast_claim.lua: the claim's fast path (spec/scripts.md, Fast paths):
-- leasing the plain jobs a claim popped from a queue's ready set without
-- the general code's per-job tables, writing what claiming and lease_job
-- (lease.lua) write for each.
--
--!include call.lua
--!include fields.lua
--!include workflow.lua
--!include queue.lua
--!include events.lua
--!include fast_task.lua

-- FF.lease leases the jobs of got (their IDs, every step-th value: 1
-- for ZRANGE's reply, 2 for ZPOPMIN's), taken out of queue q's ready set
-- by a claim, until dl (dls formatted), appending
-- their Claimed to out, and returns n plus the jobs it leased. A plain job
-- that this call has not seen, whose record is queued, has its spec and is
-- not past retention, is leased here: one HMGET (claiming's), one HSET
-- (lease_job's), its started event, its lease in the queue's lease-set
-- write, its token in the call's claim record and its Claimed, with the
-- tokens from the seq hash's lease counter kept in a local. A workflow's
-- task goes to FF.lease_task (fast_task.lua). Every other ID (an undo, a
-- job seen earlier in the call, a record that is gone, not queued or
-- unreadable, a task FF.lease_task leaves) goes to claiming and lease_job,
-- the general code, given by the caller (lease.lua includes this file).
-- FF.DIG: the decimal digits, by value + 1 (FF.lease's tokens)
FF.DIG = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9'}

function FF.lease(got, step, q, n, dl, dls, out, claiming, lease_job)
  local nonce = CALL.nonce
  local cnt -- the lease counter while this loop holds it (else SEQ's)
  -- the lease-set write and the claim record's list, with their lengths
  -- (na, nl), held from this loop's first lease to the next call of the
  -- general code or FF.lease_task, which may append to them
  local aadd, leased, na, nl
  -- a token's counter is formatted without string.format for most: hn the
  -- counter without its last digit, hs that formatted ('' for 0), the
  -- last digit from dig
  local dig, hn, hs = FF.DIG, nil, nil
  for k = 1, #got, step do
    local id = got[k]
    local jobs = CALL.jobs
    local v, key, c2
    if jobs and jobs[id] ~= nil then
      -- seen earlier in the call: the general code
    elseif not string.find(id, '/', 1, true) then
      key = P .. 'j:' .. id
      -- claiming's fields, its end, error and expiries read only when the
      -- record has an attempt: a queued record without one has none of
      -- them, new (write_plain) or retried (retry_job.lua deletes them
      -- with the attempt; a checkpoint stays, so ck is read)
      v = redis.pcall('HMGET', key, F_STATE, F_SPEC, F_ATTEMPT, F_PAYLOAD, F_CREATED, 'ck', F_TRACE, F_READY)
      if v.err or v[1] ~= 'queued' or not v[2] then
        v = nil
      elseif v[3] then
        local w = redis.call('HMGET', key, F_ENDED, F_ERROR, F_EXPIRIES)
        if plain_expired(w[1]) then v = nil else v[9], v[10] = w[2], w[3] end
      end
    else
      c2 = FF.lease_task(id, dls, out, cnt, got, k, step)
      aadd = nil
    end
    if c2 then
      -- a workflow's task, leased on its own fast path
      cnt = c2
      n = n + 1
    elseif v then
      cnt = (cnt or tonumber(seq_get('lease')) or 0) + 1
      local d = cnt % 10
      local h = (cnt - d) / 10
      if h ~= hn then
        hn = h
        hs = h > 0 and fmt(h) or ''
      end
      local token
      d = dig[d + 1]
      if d then token = hs .. d .. '-' .. nonce else token = fmt(cnt) .. '-' .. nonce end
      local a = v[3]
      if a then a = fmt(tonumber(a) + 1) else a = '1' end
      redis.call('HSET', key, F_STATE, 'running', F_ATTEMPT, a, F_TOKEN, token, F_DEADLINE, dls, 'w', CALL.wk)
      EV.add('started', id, a, '', CALL.wk)
      if not aadd then
        aadd = active_later('aadd', q)
        leased = bag('leased')
        na, nl = #aadd, #leased
      end
      aadd[na + 1] = dls
      aadd[na + 2] = id
      leased[nl + 1] = id
      leased[nl + 2] = token
      na, nl = na + 2, nl + 2
      -- its Claimed, packed (lease.lua's put_claimed)
      local pay, e, ck, tp, rd = v[4], v[9], v[6], v[7], v[8]
      if e == '' then e = nil end
      local m = #out + 1
      out[m] = id .. '\n' .. v[2] .. '\n' .. (v[5] or '0') .. '\n' .. a .. '\n' .. token .. '\n' .. dls .. '\n' ..
        (v[10] or '0') .. '\n' .. (pay and 'p' or '') .. (e and 'e' or '') .. (ck and 'c' or '') .. '\n0' ..
        (tp and '\nt' .. tp or '') .. (rd and '\nr' .. rd or '')
      if pay then
        m = m + 1
        out[m] = pay
      end
      if e then
        m = m + 1
        out[m] = e
      end
      if ck then out[m + 1] = ck end
      n = n + 1
    else
      -- the general code, with the counter where it reads it and the
      -- state bytes it may read written
      FF.run_write()
      aadd = nil
      if cnt then
        seq_set('lease', cnt)
        cnt = nil
      end
      local j, jv = claiming(id, q)
      if j and lease_job(j, jv, dl, dls, out, q) then n = n + 1 end
    end
  end
  if cnt then seq_set('lease', cnt) end
  FF.run_write()
  return n
end
