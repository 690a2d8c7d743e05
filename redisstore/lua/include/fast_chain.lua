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
-- token, in a running workflow (never past its expiry: none yet; no cancel request,
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
  -- the task's index follows the token's first '.' (a nonce is hex): a
  -- token of another form reads no field of it below (its tk absent)
  local dot = string.find(tok, '.', 1, true)
  if not dot then return nil end
  local is = string.sub(tok, dot + 1)
  local wid, name = string.sub(id, 1, s1 - 1), string.sub(id, s1 + 1)
  if string.find(name, '/', 1, true) then return nil end
  -- the control reads: awaiters and the queue's list, in one EXISTS
  -- (an empty set or list is no key), their answers kept for the general
  -- code (when either is there, the ZCARD says which); the queue's state
  -- is read last, with only the fields the step uses (the general code
  -- reads it whole when it needs it)
  local qp = P .. 'q:' .. q .. ':'
  if redis.call('EXISTS', P .. 'wait:any', qp .. 'l') > 0 then
    local any = redis.call('ZCARD', P .. 'wait:any') > 0
    CALL.any_wait = any
    -- else FF.ready_empty's answer for the general code
    if not any then CALL.le = q end
    return nil
  end
  CALL.any_wait = false
  local key = P .. 'w:' .. wid
  local t = 't' .. is
  local p = t .. '.'
  -- with the dependent's fields when it is the next task (a chain's
  -- tasks listed in order), so that the step reads its hash once
  local nx = FF.dinc(is)
  if not nx then return nil end
  local d = 't' .. nx
  local dp = d .. '.'
  -- (the names of fields the step writes too, made once)
  local ptk, pls, dpa, dpo = p .. F_TOKEN, p .. F_LAST_SETTLED, dp .. F_ATTEMPT, dp .. F_OPEN
  -- (not its expiry: a workflow has one only once ended, a re-run
  -- deletes it with the state it sets; spec/keys.md, w:<id>)
  -- (its last finish unread: only a running task holds its token;
  -- settle.lua clears it with the last finish it writes, and a lease's
  -- token is new)
  local v = redis.call('HMGET', key, W_STATE, F_CREATED, W_CANCEL, W_UNABSORBED, CANCEL.AT, WEBHOOK.SPEC,
    ptk, p .. F_ATTEMPT, t, p .. F_DEPENDENTS, p .. 'w', W_REMAINING, dpo, d, dpa, dp .. F_DEPS, dp .. 'ck', F_TRACE)
  local a, spec, dn = v[8], v[9], v[10]
  if v[1] ~= 'running' or v[3] == '1' or v[4] == '1' or v[5] or v[6] or v[7] ~= tok or not a or
    not spec or not dn or BUDGET < 1 then
    return nil
  end
  -- its name and queue (a spec starts "<name>|<queue>|"), no concurrency
  -- key (keyed.lua's job_ckey)
  if string.find(spec, name .. '|' .. q .. '|', 1, true) ~= 1 or (string.find(spec, ':', 1, true) and
    string.match(spec, '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|:]*:([^|]*)|')) then
    return nil
  end
  -- one dependent, of the default priority, in q
  local ds, dname, dq, pr = string.match(dn, '^(%d+) ([^ ;]+) ([^ ;]+) ([^ ;]+)$')
  -- (the workflow's rem, a count of tasks, is a canonical decimal)
  local rem = v[12]
  if pr ~= '0' or dq ~= q or not rem or rem == '1' or rem == '0' then
    return nil
  end
  -- the dependent's open count, spec, attempt, dependencies, checkpoint
  -- flag and the trace context: at u[o + 1 .. o + 6]
  local u, o = v, 12
  if ds ~= nx then
    d = 't' .. ds
    dp = d .. '.'
    dpa, dpo = dp .. F_ATTEMPT, dp .. F_OPEN
    u, o = redis.call('HMGET', key, dpo, d, dpa, dp .. F_DEPS, dp .. 'ck', F_TRACE), 0
  end
  local dspec = u[o + 2]
  if u[o + 1] ~= '1' or not dspec or u[o + 4] ~= is or u[o + 5] or
    string.find(dspec, dname .. '|' .. q .. '|', 1, true) ~= 1 then
    return nil
  end
  -- the queue's state, whole (READY.state: one HGETALL), kept for the
  -- general code when the step leaves
  local sv = READY.state(q)
  local h = sv.n
  -- (times in ms are canonical decimals: of equal length, they compare
  -- as strings; a shorter one is the smaller)
  if not sv.w or sv.p == '1' or sv.c or sv.rl or sv.z or sv.x or not h or
    (h ~= 'none' and (#h < #NOW_S or (#h == #NOW_S and h <= NOW_S))) then
    qstate(q, sv)
    return nil
  end
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
  -- the lease counter's next value (the seq hash's lease, absent: 0)
  local cnts = SEQ.lease
  if cnts then cnts = FF.dinc(cnts) else cnts = '1' end
  local nonce = A[c + 3]
  local token = cnts .. '-' .. nonce .. '.' .. ds
  local worker = A[c + 4]
  local wk = NOW_S .. ' ' .. worker
  -- an attempt after the first: its last error and expiries for the
  -- reply, read only then
  local da, e, xp = u[o + 3], nil, nil
  if da and da ~= '0' then
    local ex = redis.call('HMGET', key, dp .. F_ERROR, dp .. F_EXPIRIES)
    e, xp = ex[1], ex[2]
  end
  if da then da = FF.dinc(da) else da = '1' end
  local rd = NOW_S .. ':' .. NOW_S
  -- with the call's mark for its resend (resent.lua)
  local lsn = FF.rs_tok(id, tok) .. ' completed 0 running 0 ' .. did .. ' ' .. q
  local remS = FF.ddec(rem)
  -- (an attempt is 1 or more)
  if a ~= '1' then
    if result then
      redis.call('HSET', key, p .. F_ENDED, NOW_S, p .. F_RESULT, result, p .. F_ERROR, '', dp .. F_READY, rd, ptk,
        '', pls, lsn, dpa, da, dp .. F_TOKEN, token, dp .. F_DEADLINE, dls, dp .. 'w', wk,
        dpo, '0', W_REMAINING, remS)
    else
      redis.call('HSET', key, p .. F_ENDED, NOW_S, p .. F_ERROR, '', dp .. F_READY, rd, ptk, '', pls,
        lsn, dpa, da, dp .. F_TOKEN, token, dp .. F_DEADLINE, dls, dp .. 'w', wk, dpo, '0', W_REMAINING,
        remS)
    end
  elseif result then
    redis.call('HSET', key, p .. F_ENDED, NOW_S, p .. F_RESULT, result, dp .. F_READY, rd, ptk, '',
      pls, lsn, dpa, da, dp .. F_TOKEN, token, dp .. F_DEADLINE, dls, dp .. 'w', wk,
      dpo, '0', W_REMAINING, remS)
  else
    redis.call('HSET', key, p .. F_ENDED, NOW_S, dp .. F_READY, rd, ptk, '', pls, lsn,
      dpa, da, dp .. F_TOKEN, token, dp .. F_DEADLINE, dls, dp .. 'w', wk, dpo, '0', W_REMAINING,
      remS)
  end
  -- the state bytes: the finished task's c, the dependent's r (a
  -- dependent's index is above its dependencies')
  local skey = key .. ':s'
  local i1 = FF.ddec(is)
  if ds == nx then
    redis.call('SETRANGE', skey, i1, 'cr')
  else
    redis.call('SETRANGE', skey, i1, 'c')
    redis.call('SETRANGE', skey, fmt(tonumber(ds) - 1), 'r')
  end
  -- the lease set, the completed list (FF.ended, FF.flush), the claim
  -- record (claim_once)
  local ak = qp .. 'a'
  redis.call('ZREM', ak, id)
  redis.call('ZADD', ak, dls, did)
  local ck = qp .. 'completed'
  -- (pad15(NOW), made by hand for a now of 13 digits)
  local m
  if #NOW_S == 13 then m = '00' .. NOW_S .. ':' .. id else m = pad15(NOW) .. ':' .. id end
  redis.call('ZADD', ck, '0', '~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~', '0', m)
  -- the queue's ended lists, when a trim is due (LISTS.trim): through the
  -- queue state's bag, so that finalize writes its et (FF.chain_end)
  if LISTS.due(sv.et) then
    qstate(q, sv)
    LISTS.trim(q)
    CALL.ltr = true
  end
  if not CALL.rw then redis.call('SET', P .. 'claim:' .. nonce, did .. ' ' .. token, 'PX', fmt(lease_ms)) end
  FF.chain_end(q, qp, sv, id, a, v[11], did, da, worker, wk, dl, dls, cnts)
  -- the reply, made whole by one constructor (no growth past its size):
  -- the Settled packed (reply.lua's put_settled), the Claimed packed (lease.lua's put_claimed), then its values never
  -- packed, those present first (Redis reads a reply table to its first
  -- nil, so the absent ones end it)
  local tp = u[o + 6]
  if e == '' then e = nil end
  local x1, x2, x3 = pay, e, result
  if not x2 then x2, x3 = x3, nil end
  if not x1 then x1, x2, x3 = x2, x3, nil end
  return {'1', id .. '\n\ncompleted\n0\nrunning\n\n1\n' .. did .. '\n' .. q, '1',
    did .. '\n' .. dspec .. '\n' .. (v[2] or '0') .. '\n' .. da .. '\n' .. token .. '\n' .. dls .. '\n' .. (xp or '0') ..
    '\n' .. (pay and 'p' or '') .. (e and 'e' or '') .. '\n1\n' .. spec .. '\ncompleted\n' .. (result and 'r' or '') ..
    (tp and '\nt' .. tp or '') .. '\nr' .. rd, x1, x2, x3}
end

-- FF.dinc and FF.ddec return s + 1 and s - 1 for s the canonical decimal
-- of an integer (1 or more for FF.ddec): by its last digit when that does
-- not carry, else with tonumber and fmt; nil when s is not a number.
function FF.dinc(s)
  local b = string.byte(s, -1)
  if b and b >= 48 and b < 57 then return string.sub(s, 1, -2) .. string.char(b + 1) end
  local n = tonumber(s)
  return n and fmt(n + 1)
end

function FF.ddec(s)
  local b = string.byte(s, -1)
  if b and b > 48 and b <= 57 then return string.sub(s, 1, -2) .. string.char(b - 1) end
  local n = tonumber(s)
  return n and fmt(n - 1)
end

-- FF.chain_end writes what finalize writes after a chain step (queue q's
-- keys' prefix qp, its state as read, sv; the finished task id of attempt
-- a, its field w; the dependent did leased with attempt da by worker, its
-- field w wk, until dl, dls its decimal; cnts the lease counter's new
-- value): the events, the list's push counter (FF.ready_hold), the due
-- hint (note_due), a wake-up token (only while a claim may be blocked on
-- q, or with the test clock: finalize's rule) and the lease counter with
-- the call's now. In the common case (no seq field changed before, no
-- sweep of expired records due, events off or with the default cap) it
-- writes them itself, without the bags; else through qstate, qs_set, wake,
-- seq_set, EV.add and finalize.
function FF.chain_end(q, qp, sv, id, a, w, did, da, worker, wk, dl, dls, cnts)
  local g = SEQ.gc
  local ev = EV.cfg
  local ns = #NOW_S
  if CALL.ltr or SEQ_DIRTY ~= EMPTY or SEQ.fresh or
    not (g == 'none' or (g and (#g > ns or (#g == ns and g > NOW_S)))) or (ev and ev ~= 'off') then
    qstate(q, sv)
    EV.add('completed', id, a, '', w)
    EV.add('queued', did, 0, '')
    EV.add('started', did, da, '', wk)
    qs_set(q, 'lt', (tonumber(sv.lt) or 0) + 1)
    local h = sv.n
    if h == 'none' or dl < tonumber(h) then qs_set(q, 'n', dl) end
    wake(q, 1)
    seq_set('lease', cnts)
    finalize()
    return
  end
  local h = sv.n
  local lt = sv.lt
  if lt then lt = FF.dinc(lt) else lt = '1' end
  -- (w is present: FF.chain's case; h is none or after now)
  local qw = sv.w
  local tk = TEST_NOW ~= '' or #qw > ns or (#qw == ns and qw >= NOW_S)
  local sk = qp .. 's'
  if h == 'none' or #dls < #h or (#dls == #h and dls < h) then
    if tk then
      redis.call('HSET', sk, 'lt', lt, 'n', dls, 'k', '1')
    else
      redis.call('HSET', sk, 'lt', lt, 'n', dls)
    end
  elseif tk then
    redis.call('HSET', sk, 'lt', lt, 'k', '1')
  else
    redis.call('HSET', sk, 'lt', lt)
  end
  if NOW > CLOCK_LAST then
    redis.call('HSET', K_SEQ, 'lease', cnts, 'now', NOW_S)
  else
    redis.call('HSET', K_SEQ, 'lease', cnts)
  end
  if not ev then
    -- EV.add's lines: the worker of a field w is what follows its first
    -- space
    local sp = w and string.find(w, ' ', 1, true)
    local e1
    if sp and sp < #w then
      e1 = 'completed ' .. id .. ' ' .. a .. ' 0  ' .. string.sub(w, sp + 1) .. '\nqueued ' .. did .. ' 0 0 \nstarted ' .. did ..
        ' ' .. da
    else
      e1 = 'completed ' .. id .. ' ' .. a .. ' 0 \nqueued ' .. did .. ' 0 0 \nstarted ' .. did .. ' ' .. da
    end
    if worker ~= '' then e1 = e1 .. ' 0  ' .. worker else e1 = e1 .. ' 0 ' end
    redis.call('XADD', P .. 'events', 'MAXLEN', '~', EV.MAXLEN, '*', 't', NOW_S, 'e', e1)
  end
  if tk then
    local k = qp .. 'w'
    if redis.call('LPUSH', k, '1') > 2000 then redis.call('LTRIM', k, '0', '999') end
  end
end
