-- fast_chain.lua: the chain step written for its case (spec/scripts.md,
-- Fast paths, The chain step): a finish of one completed task whose one
-- dependent, alone in the claim's queue, is promoted and leased to the same
-- call's claim of one. It writes what fast_finish.lua's FF.task, the
-- hand-off and fast_task.lua's FF.lease_task write for that step, and
-- returns the same reply, in straight-line code: the reads first (the
-- awaiters' ZCARD, the queue's state, EXISTS of its list, one HMGET of the
-- finished task's and the workflow's fields with the next task's, one of
-- the dependent's when it is another, its payload), then the writes, without the claim's loop, the hand-off's
-- table, the gathered HSET or per-call bags.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include events.lua
--!include queue.lua
--!include finalize.lua
--!include fast_finish.lua

-- FF.chain runs the call of finish.lua's ARGV A (c the index of the
-- workflows KEEP names; one outcome, a claim of 1 from one queue) when its
-- case holds and returns its reply, finalized; or returns nil having
-- written nothing (finish.lua runs the call). The case: the namespace's
-- fast paths on, no cascade pending, nobody awaiting anything; a completed
-- outcome adding no tasks, retention above 0; a task leased with the
-- token, in a running workflow (not past its expiry, no cancel request,
-- unabsorbed failure, deadline or webhook) that goes on, without a
-- concurrency key, in the claim's queue; its dependents list one task of
-- the default priority in that queue, with no other open dependency (its
-- open count 1 and its dependencies the finished task), its spec there and
-- no checkpoint; the queue known, not paused, without a concurrency or
-- rate limit, its sweep reading nothing (due hint ahead of now), and no
-- unkeyed ready job nor stale element in it (FF.ready_empty, FF.hand_ok).
-- The open count and the workflow's rem, read with the HMGETs, are written
-- with the step's one HSET (where FF.task makes an HINCRBY of each).
function FF.chain(A, c)
  if not FAST or PENDING or A[7] ~= 'completed' or A[13] ~= '' or RETENTION <= 0 then return nil end
  local id, tok, q = A[5], A[6], A[c + 5]
  local s1 = string.find(id, '/', 1, true)
  if not s1 then return nil end
  local is = string.match(tok, '%.(%d+)$')
  if not is then return nil end
  local wid, name = string.sub(id, 1, s1 - 1), string.sub(id, s1 + 1)
  if string.find(name, '/', 1, true) then return nil end
  -- the control reads: awaiters (kept for the general code), the queue
  local any = redis.call('ZCARD', P .. 'wait:any') > 0
  CALL.any_wait = any
  if any then return nil end
  local s = qstate(q)
  local h = s.n
  if not s.w or s.p == '1' or s.c or s.rl or s.z or s.x or not h or (h ~= 'none' and tonumber(h) <= NOW) then
    return nil
  end
  if redis.call('EXISTS', qkey(q, 'l')) == 1 then
    -- FF.ready_empty's answer for the general code
    CALL.le = q
    return nil
  end
  local key = P .. 'w:' .. wid
  local t = 't' .. is
  local p = t .. '.'
  -- with the dependent's fields when it is the next task (a chain's
  -- tasks listed in order), so that the step reads its hash once
  local nx = fmt(tonumber(is) + 1)
  local d = 't' .. nx
  local dp = d .. '.'
  local v = redis.call('HMGET', key, W_STATE, W_EXPIRES, F_CREATED, W_CANCEL, W_UNABSORBED, CANCEL.AT, WEBHOOK.SPEC,
    p .. F_TOKEN, p .. F_LAST_SETTLED, p .. F_ATTEMPT, t, p .. F_DEPENDENTS, p .. 'w', W_REMAINING, dp .. F_OPEN, d,
    dp .. F_ATTEMPT, dp .. F_DEPS, dp .. 'ck', F_TRACE, dp .. F_ERROR, dp .. F_EXPIRIES)
  local a, spec, dn = v[10], v[11], v[12]
  if v[1] ~= 'running' or expired_at(v[2]) or v[4] == '1' or v[5] == '1' or v[6] or v[7] or v[8] ~= tok or not a or
    not spec or not dn or (v[9] and string.match(v[9], '^[^ ]*') == tok) or BUDGET < 1 then
    return nil
  end
  -- its name and queue, no concurrency key (keyed.lua's job_ckey)
  local sn, sq = string.match(spec, '^([^|]*)|([^|]*)|')
  if sn ~= name or sq ~= q or (string.find(spec, ':', 1, true) and
    string.match(spec, '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|:]*:([^|]*)|')) then
    return nil
  end
  -- one dependent, of the default priority, in q
  local ds, dname, dq, pr = string.match(dn, '^(%d+) ([^ ;]+) ([^ ;]+) ([^ ;]+)$')
  local rem = tonumber(v[14])
  if pr ~= '0' or dq ~= q or not rem or rem < 2 then return nil end
  local u
  if ds == nx then
    u = {v[15], v[16], v[17], v[18], v[19], v[20], v[21], v[22]}
  else
    d = 't' .. ds
    dp = d .. '.'
    u = redis.call('HMGET', key, dp .. F_OPEN, d, dp .. F_ATTEMPT, dp .. F_DEPS, dp .. 'ck', F_TRACE, dp .. F_ERROR,
      dp .. F_EXPIRIES)
  end
  local dspec = u[2]
  if u[1] ~= '1' or not dspec or u[4] ~= is or u[5] or string.match(dspec, '^[^|]*|([^|]*)') ~= q then return nil end
  local pkey = key .. ':p'
  local pay = redis.call('HGET', pkey, ds)
  -- the writes: the finished task's end, the dependent's promotion and
  -- lease, in one HSET, as FF.task and FF.lease_task write them
  local result = nil
  if A[8] == '1' then result = A[9] end
  local did = wid .. '/' .. dname
  local lease_ms = tonumber(A[c + 2])
  local dl = NOW + lease_ms
  local dls = fmt(dl)
  local cnt = (tonumber(SEQ.lease) or 0) + 1
  local nonce = A[c + 3]
  local token = fmt(cnt) .. '-' .. nonce .. '.' .. ds
  local wk = NOW_S .. ' ' .. A[c + 4]
  local da, e, xp = u[3], nil, nil
  if da and da ~= '0' then e, xp = u[7], u[8] end
  if da then da = fmt(tonumber(da) + 1) else da = '1' end
  local rd = NOW_S .. ':' .. NOW_S
  local ls = tok .. ' completed 0 running 0 ' .. did .. ' ' .. q
  local remS = fmt(rem - 1)
  if tonumber(a) > 1 then
    if result then
      redis.call('HSET', key, p .. F_ENDED, NOW_S, p .. F_RESULT, result, p .. F_ERROR, '', dp .. F_READY, rd, p .. F_TOKEN,
        '', p .. F_LAST_SETTLED, ls, dp .. F_ATTEMPT, da, dp .. F_TOKEN, token, dp .. F_DEADLINE, dls, dp .. 'w', wk,
        dp .. F_OPEN, '0', W_REMAINING, remS)
    else
      redis.call('HSET', key, p .. F_ENDED, NOW_S, p .. F_ERROR, '', dp .. F_READY, rd, p .. F_TOKEN, '', p .. F_LAST_SETTLED,
        ls, dp .. F_ATTEMPT, da, dp .. F_TOKEN, token, dp .. F_DEADLINE, dls, dp .. 'w', wk, dp .. F_OPEN, '0', W_REMAINING,
        remS)
    end
  elseif result then
    redis.call('HSET', key, p .. F_ENDED, NOW_S, p .. F_RESULT, result, dp .. F_READY, rd, p .. F_TOKEN, '',
      p .. F_LAST_SETTLED, ls, dp .. F_ATTEMPT, da, dp .. F_TOKEN, token, dp .. F_DEADLINE, dls, dp .. 'w', wk,
      dp .. F_OPEN, '0', W_REMAINING, remS)
  else
    redis.call('HSET', key, p .. F_ENDED, NOW_S, dp .. F_READY, rd, p .. F_TOKEN, '', p .. F_LAST_SETTLED, ls,
      dp .. F_ATTEMPT, da, dp .. F_TOKEN, token, dp .. F_DEADLINE, dls, dp .. 'w', wk, dp .. F_OPEN, '0', W_REMAINING,
      remS)
  end
  -- the state bytes: the finished task's c, the dependent's r (a
  -- dependent's index is above its dependencies')
  local i, j = tonumber(is), tonumber(ds)
  local skey = key .. ':s'
  if j == i + 1 then
    redis.call('SETRANGE', skey, fmt(i - 1), 'cr')
  else
    redis.call('SETRANGE', skey, fmt(i - 1), 'c')
    redis.call('SETRANGE', skey, fmt(j - 1), 'r')
  end
  -- the lease set, the completed list (FF.ended, FF.flush), the claim
  -- record (claim_once)
  local ak = qkey(q, 'a')
  redis.call('ZREM', ak, id)
  redis.call('ZADD', ak, dls, did)
  local ck = qkey(q, 'completed')
  redis.call('ZADD', ck, '0', '~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~', '0',
    pad15(NOW) .. ':' .. id)
  LISTS.trim(q)
  redis.call('SET', P .. 'claim:' .. nonce, did .. ' ' .. token, 'PX', fmt(lease_ms))
  -- what finalize writes: the events, the list's push counter (FF.ready_hold),
  -- the due hint (note_due), a wake-up token, the lease counter
  EV.add('completed', id, a, '', v[13])
  EV.add('queued', did, 0, '')
  EV.add('started', did, da, '', wk)
  qs_set(q, 'lt', (tonumber(s.lt) or 0) + 1)
  if h == 'none' or dl < tonumber(h) then qs_set(q, 'n', dl) end
  wake(q, 1)
  seq_set('lease', cnt)
  finalize()
  local out = {'1', id, '', 'completed', '0', 'running', '', '1', did, q, '1', did, dspec, v[3] or '0', pay and '1' or '',
    pay or '', da, token, dls, e or '', xp or '0', '1', spec, 'completed', result and '1' or '', result or '', '', '', ''}
  if u[6] then out[#out + 1] = '@t' .. u[6] end
  out[#out + 1] = '@r' .. rd
  return out
end
