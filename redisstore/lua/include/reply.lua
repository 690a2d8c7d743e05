-- reply.lua: the parts of replies several transitions share. Every reply
-- is a flat array of strings (no nil inside: absent is ""), counts before
-- lists; redisstore/codec.go reads them. A Settled (put_settled) and a
-- Claimed (lease.lua's put_claimed) are packed: their fields that cannot
-- hold a newline joined by "\n" into one value, a Claimed's binary and
-- free-text ones after it (spec/scripts.md, Replies).
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

-- put_settled appends a Settled, packed (spec/scripts.md, Replies): one
-- value, "id code state runAt wfState wfEnded nPushed (id queue)*" joined
-- by "\n" (none of them can hold one); code is "" or LEASELOST.
local function put_settled(out, s)
  if s.code then
    out[#out + 1] = s.id .. '\n' .. s.code .. '\n\n0\n\n\n0'
    return
  end
  local ps, pushed = s.pushed, '\n0'
  if ps and #ps > 0 then pushed = '\n' .. fmt(#ps / 2) .. '\n' .. table.concat(ps, '\n') end
  out[#out + 1] = s.id .. '\n\n' .. s.state .. '\n' .. fmt(s.run_at) .. '\n' .. s.wf_state .. '\n' ..
    (s.wf_ended and '1' or '') .. pushed
end

-- put_snapshot appends job j's snapshot, 20 strings: id spec created
-- hasPayload payload state attempt runAt token deadline cancelRequested
-- hasResult result error ended expires expiries progress (checkpoint.lua)
-- attempt history (attempts.lua: w, then ah). Go shows the token and deadline
-- only while running, and reads queue, priority and retry policy from the
-- spec.
local function put_snapshot(out, j)
  local v, pay, created, st, expires, pg
  if j.kind == 'j' then
    v = redis.call('HMGET', j.key, F_SPEC, F_ATTEMPT, F_RUN_AT, F_TOKEN, F_DEADLINE, F_CANCEL, F_RESULT, F_ERROR,
      F_ENDED, F_CREATED, F_PAYLOAD, F_STATE, F_EXPIRIES, 'pg', 'w', 'ah')
    created, pay, st, pg = v[10], v[11], v[12], v[14]
    v[11] = v[13] -- expiries, where the task branch reads them
    v[12], v[13] = v[15], v[16] -- w and ah, where the task branch reads them
    -- a plain job expires its retention after its end
    if v[9] then expires = fmt(tonumber(v[9]) + RETENTION) end
  else
    local w, pre = j.wf, j.pre
    v = redis.call('HMGET', w.key, 't' .. j.is, pre .. F_ATTEMPT, pre .. F_RUN_AT, pre .. F_TOKEN, pre .. F_DEADLINE,
      pre .. F_CANCEL, pre .. F_RESULT, pre .. F_ERROR, pre .. F_ENDED, pre .. F_CREATED, pre .. F_EXPIRIES, pre .. 'pg',
      pre .. 'w', pre .. 'ah')
    pg = v[12]
    v[12], v[13] = v[13], v[14]
    expires = wget(w, W_EXPIRES)
    if j.kind == 't' then
      created = wget(w, F_CREATED)
      pay = redis.call('HGET', w.pkey, j.is)
      local b = task_byte(w, j.i)
      if b == 'W' or b == 'D' then
        v[8] = b == 'W' and 'workflow cancelled' or 'deadline'
        v[9] = wget(w, W_CANCEL_AT)
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
  out[n + 19] = v[12] or ''
  out[n + 20] = v[13] or ''
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
    out[n + 3] = fmt(READY.count(q) + redis.call('ZCARD', qkey(q, 'kr')))
    out[n + 4] = fmt(redis.call('ZCARD', qkey(q, 'd')))
    out[n + 5] = fmt(READY.active_count(q))
    local s = qstate(q)
    out[n + 6] = s.c or '0'
    out[n + 7] = s.rl or ''
    out[n + 8] = s.kl or '0'
  end
end
