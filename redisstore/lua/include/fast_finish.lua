-- fast_finish.lua: the fast paths of a finish (spec/scripts.md, Fast
-- paths): a completed outcome of a plain job, and of a workflow task with
-- the promotion of the dependents its end brings to zero open
-- dependencies (a chain's next task, a fan-in's join) and its workflow's
-- completion when it was the last task. Written for their case with
-- locals and direct writes instead of the general code's job, workflow
-- and Settled tables; they write exactly the keys, fields and bytes, the
-- events and the reply that settle.lua, cascade.lua and finalize.lua
-- write for the same outcome (redisstore's TestFastPathsWriteTheSame).
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include events.lua
--!include queue.lua
--!include deadline.lua
--!include finalize.lua
--!include fast_task.lua
--
-- A call's pending writes are in CALL (begin resets it): fsk, flo, fsb the
-- run of state bytes not yet written (the key of a workflow's state
-- string, the index of its first byte, the bytes), fel the ended lists'
-- members by list key (LISTS.ended's ZADD arguments, the keys in order in
-- its array part, the queue of each by its members' table), fpre the members' prefix. FF.flush writes them; the
-- general code never sees a workflow or job of this call before they are
-- written (finish.lua flushes before any outcome it settles and before
-- its claim).

-- FF (call.lua) holds the functions of this file.

-- FF.flush writes the call's pending state bytes and ended-list members.
-- Before the call's claim (claim true), it also hands the claim what the
-- general code would have kept of the workflow whose task the last fast
-- outcome completed, when that pushed its one dependent into an empty
-- queue (the next step of a chain of its own: building the tables costs
-- more than it saves when the claim takes another job): the workflow's fields
-- read and the task's spec and result, so that the claim of a chain's next
-- task reads nothing more (lease.lua's put_deps), as after settle.lua;
-- the pending state bytes of that workflow go into its overlay, which
-- finalize writes with the claim's own (workflow.lua's states_flush).
function FF.flush(claim)
  local wid = CALL.fw
  if claim and wid then
    local wfs = bag('wfs')
    if wfs[wid] == nil then
      local v, key, i = CALL.fwv, P .. 'w:' .. wid, CALL.fwi
      local w = {id = wid, key = key, skey = key .. ':s', pkey = key .. ':p',
        m = {[W_STATE] = v[1], [W_EXPIRES] = v[2], [F_CREATED] = v[3], [W_CANCEL] = v[4], [W_UNABSORBED] = v[5],
          [CANCEL.AT] = v[6], [WEBHOOK.SPEC] = v[7]},
        done = {[i] = CALL.fwr}, specs = {[i] = v[11]}}
      wfs[wid] = w
      if CALL.fsk == w.skey then
        states_dirty(w)
        local lo, sb = CALL.flo, CALL.fsb
        for x = 1, #sb do w.so[lo + x - 1] = string.sub(sb, x, x) end
        CALL.fsk = nil
      end
    end
  end
  -- a task handed to the claim (fast_task.lua) keeps its bytes and its
  -- workflow's HSET pending for the claim's own
  if not CALL.hand then FF.run_write() end
  local el = CALL.fel
  if not el then return end
  CALL.fel = nil
  for _, key in ipairs(el) do
    local l = el[key]
    for i = 1, #l, 1000 do redis.call('ZADD', key, unpack(l, i, math.min(i + 999, #l))) end
    LISTS.trim(el[l])
  end
end

-- FF.ended adds job id, completed now, to queue q's completed list (as
-- LISTS.ended does).
function FF.ended(q, id)
  local el = CALL.fel
  local l
  if not el then
    el = {}
    CALL.fel = el
    CALL.fpre = pad15(NOW) .. ':'
  elseif q == CALL.feq then
    -- the list of the last call's queue (a batch's jobs share one)
    l = CALL.fell
  end
  if not l then
    local k = qkey(q, 'completed')
    l = el[k]
    if not l then
      l = {'0', '~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~'}
      el[k] = l
      el[#el + 1] = k
      el[l] = q
    end
    CALL.feq, CALL.fell = q, l
  end
  local n = #l
  l[n + 1] = '0'
  l[n + 2] = CALL.fpre .. id
end

-- FF.finish settles the outcome at A[b .. b + 8] (finish.lua's ARGV) on a
-- fast path when its case holds: the namespace's fast paths on, no
-- cascade pending, a completed outcome that adds no tasks, retention above
-- 0 (a record kept: a repeat in the same call finds its Settled), nobody
-- awaiting anything, and a job the call has not met before. It appends
-- the Settled to out and returns true, or returns false having written
-- nothing (the general code settles the outcome).
function FF.finish(out, A, b)
  if not FAST or PENDING or A[b + 2] ~= 'completed' or A[b + 8] ~= '' or RETENTION <= 0 then return false end
  local id = A[b]
  local jobs = CALL.jobs
  if jobs and jobs[id] ~= nil then return false end
  local any = CALL.any_wait
  if any == nil then
    -- as awaited (waiters.lua) reads it, once a call
    any = redis.call('ZCARD', P .. 'wait:any') > 0
    CALL.any_wait = any
  end
  if any then return false end
  local result = nil
  if A[b + 3] == '1' then result = A[b + 4] end
  local s1 = string.find(id, '/', 1, true)
  if not s1 then return FF.plain(out, id, A[b + 1], result) end
  return FF.task(out, id, A[b + 1], result, s1)
end

-- FF.plain completes plain job id leased with token tok: a job with
-- neither a concurrency key nor a unique key held until its end.
function FF.plain(out, id, tok, result)
  local key = P .. 'j:' .. id
  -- the token decides: a record that holds it is there (its state, end
  -- and last finish unread), running and not ended (settle.lua clears
  -- the token with every end, and writes the last finish only then), and
  -- its lease is not finished (a lease's token is new: the lease counter's)
  local v = redis.call('HMGET', key, F_TOKEN, F_ATTEMPT, F_SPEC, 'w')
  local spec, a = v[3], v[2]
  if v[1] ~= tok or not spec or not a then return false end
  -- its spec's checks and queue, kept for the next job of the same spec
  -- (a batch's jobs mostly share one)
  local q
  if spec == CALL.fps then
    q = CALL.fpq
  else
    if string.find(spec, '|K', 1, true) or (string.byte(spec, -65) == 117 and string.byte(spec, -66) == 124) then
      return false
    end
    q = string.match(spec, '^[^|]*')
    CALL.fps, CALL.fpq = spec, q
  end
  -- its removal from the lease set (queue.lua's active_remove_later)
  local rm = CALL.arm
  rm = rm and rm[q] or active_later('arm', q)
  rm[#rm + 1] = id
  EV.add('completed', id, a, '', v[4])
  -- from here the first word of its ls: with a finish + claim's mark
  -- (resent.lua) when it is the call's last outcome
  if id == CALL.ri then tok = FF.rs_tok(id, tok) end
  -- a later attempt clears the error of the failed one before it
  if a ~= '1' and tonumber(a) > 1 then
    if result then
      redis.call('HSET', key, F_STATE, 'completed', F_ENDED, NOW_S, F_TOKEN, '', F_LAST_SETTLED, tok, F_RESULT, result,
        F_ERROR, '')
    else
      redis.call('HSET', key, F_STATE, 'completed', F_ENDED, NOW_S, F_TOKEN, '', F_LAST_SETTLED, tok, F_ERROR, '')
    end
  elseif result then
    redis.call('HSET', key, F_STATE, 'completed', F_ENDED, NOW_S, F_TOKEN, '', F_LAST_SETTLED, tok, F_RESULT, result)
  else
    redis.call('HSET', key, F_STATE, 'completed', F_ENDED, NOW_S, F_TOKEN, '', F_LAST_SETTLED, tok)
  end
  -- its removal time (finalize.lua's expire_records)
  XB.add(id, NOW + RETENTION)
  FF.ended(q, id)
  -- its Settled, packed (reply.lua's put_settled)
  out[#out + 1] = id .. '\n\ncompleted\n0\n\n\n0'
  return true
end

-- FF.task completes task id ("<wf>/<name>", s1 the "/") leased with token
-- tok, in a running workflow without a cancel request, an unabsorbed
-- failure, a deadline or a webhook; the task without a concurrency key,
-- its dependents plain ones (no signal, delay, key or OnFailure marks),
-- no more than the call's budget. A dependent whose open count reaches 0
-- is pushed ready; the workflow completes when no task is left.
function FF.task(out, id, tok, result, s1)
  -- (the last "."'s: a greedy match tries fewer places than '%.(%d+)$')
  local is = string.match(tok, '^.*%.(%d+)$')
  if not is then return false end
  local wid, name = string.sub(id, 1, s1 - 1), string.sub(id, s1 + 1)
  if string.find(name, '/', 1, true) then return false end
  local wfs = CALL.wfs
  if wfs and wfs[wid] ~= nil then return false end
  local key = P .. 'w:' .. wid
  local t = 't' .. is
  local p = t .. '.'
  -- its last finish unread: only a running task holds its token
  -- (settle.lua clears it with the last finish it writes, and a lease's
  -- token is new); its spec at v[11] (FF.flush)
  local v = redis.call('HMGET', key, W_STATE, W_EXPIRES, F_CREATED, W_CANCEL, W_UNABSORBED, CANCEL.AT, WEBHOOK.SPEC,
    p .. F_TOKEN, p .. F_ATTEMPT, p .. F_DEPENDENTS, t, p .. 'w')
  local a, spec, dn = v[9], v[11], v[10]
  -- its name and queue (a spec starts "<name>|<queue>|")
  local sn, q
  if spec then sn, q = string.match(spec, '^([^|]*)|([^|]*)') end
  if v[1] ~= 'running' or expired_at(v[2]) or v[4] == '1' or v[5] == '1' or v[6] or v[7] or v[8] ~= tok or not a or
    not spec or sn ~= name then
    return false
  end
  -- a concurrency key (keyed.lua's job_ckey)
  if string.find(spec, ':', 1, true) and string.match(spec, '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|:]*:([^|]*)|') then
    return false
  end
  -- its dependents: every one plain, and no more than the budget
  local nd = 0
  if dn then
    local pos = 1
    while true do
      local s, e, pr = string.find(dn, '%d+ [^ ;]+ [^ ;]+ ([^ ;]+)', pos)
      if not s then break end
      if not string.find(pr, '^%-?%d+$') then return false end
      nd = nd + 1
      pos = e + 1
    end
    if nd > BUDGET then return false end
  end
  active_remove_later(q, id)
  EV.add('completed', id, a, '', v[12])
  local skey = key .. ':s'
  local i = tonumber(is)
  FF.byte(skey, i, 'c')
  -- the HSET of the workflow's hash: the task's fields, with the ready-at
  -- of the dependents it promotes and the workflow's end
  -- (room for 8 values: a promotion's and a completion's grow it past 4)
  local hs = {p .. F_ENDED, NOW_S, nil, nil, nil, nil, nil, nil}
  if result then
    hs[3] = p .. F_RESULT
    hs[4] = result
  end
  if a ~= '1' and tonumber(a) > 1 then
    hs[#hs + 1] = p .. F_ERROR
    hs[#hs + 1] = ''
  end
  -- (the Settled, packed, is written at the end: ps holds its pushes)
  local ps, np, alone, hand, hq, hds = '', 0, false, nil, nil, nil
  if nd > 0 then
    -- promotion_ready: the task ended now
    local rd = NOW_S .. ':' .. NOW_S
    local pos = 1
    for _ = 1, nd do
      local _, e, ds, dname, dq, pr = string.find(dn, '(%d+) ([^ ;]+) ([^ ;]+) ([^ ;]+)', pos)
      pos = e + 1
      BUDGET = BUDGET - 1
      if redis.call('HINCRBY', key, 't' .. ds .. '.' .. F_OPEN, '-1') == 0 then
        local did = wid .. '/' .. dname
        FF.byte(skey, tonumber(ds), 'q')
        hs[#hs + 1] = 't' .. ds .. '.' .. F_READY
        hs[#hs + 1] = rd
        register_queue(dq)
        EV.add('queued', did, 0, '')
        local p0 = tonumber(pr)
        -- alone in its queue (a chain of its own): the claim of this call
        -- is about to take it, handed over when it can (fast_task.lua; a
        -- task of the default priority only)
        if nd == 1 then alone = FF.ready_empty(dq) end
        if alone and p0 == 0 and FF.hand_ok(dq) then
          hand, hq, hds = did, dq, ds
          FF.ready_hold(dq)
        else
          READY.push_ready(dq, p0, did)
        end
        wake(dq, 1)
        np = np + 1
        ps = ps .. ' ' .. did .. ' ' .. dq
      end
    end
  end
  local wst, ended = 'running', '0'
  if redis.call('HINCRBY', key, W_REMAINING, '-1') == 0 then
    -- its last task: the workflow completes (cascade.lua's tasks_all_ended
    -- and workflow.lua's end_wf; finalize.lua's expire_records)
    wst, ended = 'completed', '1'
    -- (pad15: a creation time of 13 digits padded by hand)
    local cr = v[3]
    local m
    if cr and string.find(cr, '^%d%d%d%d%d%d%d%d%d%d%d%d%d$') then
      m = '00' .. cr .. ':' .. wid
    else
      m = pad15(tonumber(cr) or 0) .. ':' .. wid
    end
    redis.call('ZREM', P .. 'wf:running', m)
    redis.call('ZADD', P .. 'wf:completed', '0', m)
    EV.add('workflow_ended', wid, 0, 'completed')
    local at = NOW + RETENTION
    local x = fmt(at)
    hs[#hs + 1] = W_STATE
    hs[#hs + 1] = 'completed'
    hs[#hs + 1] = W_ENDED
    hs[#hs + 1] = NOW_S
    hs[#hs + 1] = W_EXPIRES
    hs[#hs + 1] = x
    redis.call('ZADD', K_EXPIRY, x, 'w:completed:' .. m)
    XB.note(at)
    if TEST_NOW == '' then
      local pk, ik = key .. ':p', key .. ':i'
      redis.call('PEXPIREAT', key, x)
      redis.call('PEXPIREAT', pk, x)
      redis.call('PEXPIREAT', skey, x)
      redis.call('PEXPIREAT', ik, x)
    end
  end
  -- what FF.flush hands the call's claim
  if alone and ended == '0' and not hand then
    CALL.fw, CALL.fwv, CALL.fwi, CALL.fwr = wid, v, i, result or false
  else
    CALL.fw = nil
  end
  hs[#hs + 1] = p .. F_TOKEN
  hs[#hs + 1] = ''
  hs[#hs + 1] = p .. F_LAST_SETTLED
  hs[#hs + 1] = FF.rs_tok(id, tok) .. ' completed 0 ' .. wst .. ' ' .. ended .. ps
  if hand then
    -- the claim writes hs with the lease's fields
    FF.hand_off(hand, hq, key, hds, is, spec, result or false, NOW_S .. ':' .. NOW_S, hs)
  else
    redis.call('HSET', key, unpack(hs))
  end
  FF.ended(q, id)
  -- its Settled, packed (reply.lua's put_settled): its pushes are ps's
  -- pairs, separated by spaces there (no ID or queue holds one)
  if np == 0 then
    out[#out + 1] = id .. '\n\ncompleted\n0\n' .. wst .. '\n' .. (ended == '1' and '1' or '') .. '\n0'
  else
    out[#out + 1] = id .. '\n\ncompleted\n0\n' .. wst .. '\n' .. (ended == '1' and '1' or '') .. '\n' ..
      (np == 1 and '1' or fmt(np)) .. string.gsub(ps, ' ', '\n')
  end
  return true
end

-- FF.countdown settles, on the fan-in's count-down path, the outcomes of
-- finish.lua's ARGV A from index x (of k) that are completed tasks of one
-- workflow in a row, each with one dependent, the same for all (a
-- fan-in's roots and their join), as FF.task would one by one: those
-- whose ends leave the workflow's rem above 0 (no completion: the outcome
-- that brings it to 0 is FF.task's), up to the one whose end brings the
-- dependent's open count to 0 and promotes it (its push or hand-off to
-- the call's claim, hq the claim's first queue or false: as FF.task's).
-- One HMGET of the workflow's fields and every task's, one HGET of the
-- open count, one HSET of every task's fields with the open count and rem
-- written with their new values (FF.task: an HMGET, two HINCRBY and an
-- HSET a task); the events, state bytes, lease-set removals, ended-list
-- members and Settled as FF.task's. Returns how many outcomes it settled,
-- 0 (having written nothing) when fewer than 2.
function FF.countdown(out, A, x, k, hq)
  if not FAST or PENDING or RETENTION <= 0 then return 0 end
  local b = 5 + 9 * x
  local id = A[b]
  local s1 = string.find(id, '/', 1, true)
  if not s1 then return 0 end
  local wid = string.sub(id, 1, s1 - 1)
  local pre = wid .. '/'
  -- the run: completed outcomes adding no tasks, of tasks of wid, each
  -- once (an ID is compared with the run's before it: a run is at most
  -- the budget), at most the budget
  -- idx: their indexes (their tokens' ends)
  local n, idx = 0, FF.t16()
  local lim = math.min(k - x, BUDGET)
  while n < lim do
    local c = b + 9 * n
    local cid = A[c]
    if A[c + 2] ~= 'completed' or A[c + 8] ~= '' or string.sub(cid, 1, s1) ~= pre or
      string.find(cid, '/', s1 + 1, true) then
      break
    end
    local z = b
    while z < c and A[z] ~= cid do z = z + 9 end
    if z < c then break end
    local is = string.match(A[c + 1], '^.*%.(%d+)$')
    if not is then break end
    n = n + 1
    idx[n] = is
  end
  if n < 2 then return 0 end
  local jobs, wfs = CALL.jobs, CALL.wfs
  if (wfs and wfs[wid] ~= nil) then return 0 end
  local any = CALL.any_wait
  if any == nil then
    any = redis.call('ZCARD', P .. 'wait:any') > 0
    CALL.any_wait = any
  end
  if any then return 0 end
  local key = P .. 'w:' .. wid
  -- each task's token, attempt, spec, dependents and worker (its last
  -- finish unread, as FF.task's: only a running task holds its token)
  local f = FF.t64()
  f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8] = W_STATE, W_EXPIRES, F_CREATED, W_CANCEL, W_UNABSORBED, CANCEL.AT,
    WEBHOOK.SPEC, W_REMAINING
  local nf = 8
  for y = 1, n do
    local is = idx[y]
    local t = 't' .. is
    local p = t .. '.'
    f[nf + 1], f[nf + 2], f[nf + 3], f[nf + 4], f[nf + 5] = p .. F_TOKEN, p .. F_ATTEMPT, t, p .. F_DEPENDENTS, p .. 'w'
    nf = nf + 5
  end
  local v = redis.call('HMGET', key, unpack(f, 1, nf))
  if v[1] ~= 'running' or expired_at(v[2]) or v[4] == '1' or v[5] == '1' or v[6] or v[7] then return 0 end
  local rem = tonumber(v[8])
  -- each task leased with its token, its name, no concurrency key, one
  -- plain dependent, the same for all: the run ends before the first
  -- that is not
  -- qs: their queues (a spec starts "<name>|<queue>|")
  local dn0 = nil
  local m, qs = 0, FF.t16()
  for y = 1, n do
    local c = b + 9 * (y - 1)
    local cid = A[c]
    if jobs and jobs[cid] ~= nil then break end
    local o = 3 + 5 * y
    local a, spec, dn = v[o + 2], v[o + 3], v[o + 4]
    if v[o + 1] ~= A[c + 1] or not a or not spec or not dn then break end
    local sn, q = string.match(spec, '^([^|]*)|([^|]*)')
    if not sn or cid ~= pre .. sn then break end
    qs[y] = q
    if string.find(spec, ':', 1, true) and string.match(spec, '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|[^|:]*:([^|]*)|') then
      break
    end
    if dn0 then
      if dn ~= dn0 then break end
    elseif not string.match(dn, '^%d+ [^ ;]+ [^ ;]+ %-?%d+$') then
      break
    end
    dn0 = dn
    m = y
  end
  if m < 2 or not rem then return 0 end
  local ds, dname, dq, pr = string.match(dn0, '^(%d+) ([^ ;]+) ([^ ;]+) ([^ ;]+)$')
  local op = 't' .. ds .. '.' .. F_OPEN
  local open = tonumber(redis.call('HGET', key, op))
  if not open then return 0 end
  -- no completion; the end that brings the open count to 0 (the run's
  -- last then) promotes the dependent
  m = math.min(m, open, rem - 1)
  if m < 2 then return 0 end
  BUDGET = BUDGET - m
  local skey = key .. ':s'
  local hs, h = FF.t64(), 0
  local n0 = #out
  local ri = CALL.ri
  -- the state bytes: each run of adjacent indexes in one FF.byte (bi its
  -- first, bn how many)
  local bi, bn = 0, 0
  -- (lq, ll: the last task's queue and its lease-set removals)
  local lq, ll
  for y = 1, m do
    local c = b + 9 * (y - 1)
    local cid, tok = A[c], A[c + 1]
    local o = 3 + 5 * y
    local a = v[o + 2]
    local is = idx[y]
    local p = 't' .. is .. '.'
    local q = qs[y]
    if q ~= lq then lq, ll = q, active_later('arm', q) end
    ll[#ll + 1] = cid
    EV.add('completed', cid, a, '', v[o + 5])
    local i = tonumber(is)
    if bn > 0 and i == bi + bn then
      bn = bn + 1
    else
      if bn > 0 then FF.byte(skey, bi, bn == 1 and 'c' or string.rep('c', bn)) end
      bi, bn = i, 1
    end
    hs[h + 1], hs[h + 2] = p .. F_ENDED, NOW_S
    h = h + 2
    if A[c + 3] == '1' then
      hs[h + 1], hs[h + 2] = p .. F_RESULT, A[c + 4]
      h = h + 2
    end
    if a ~= '1' and tonumber(a) > 1 then
      hs[h + 1], hs[h + 2] = p .. F_ERROR, ''
      h = h + 2
    end
    hs[h + 1], hs[h + 2], hs[h + 3], hs[h + 4] = f[o + 1], '', p .. F_LAST_SETTLED,
      (cid == ri and FF.rs_tok(cid, tok) or tok) .. ' completed 0 running 0'
    h = h + 4
    FF.ended(q, cid)
    -- its Settled, packed (reply.lua's put_settled)
    n0 = n0 + 1
    out[n0] = cid .. '\n\ncompleted\n0\nrunning\n\n0'
  end
  FF.byte(skey, bi, bn == 1 and 'c' or string.rep('c', bn))
  if m < open then
    hs[h + 1], hs[h + 2], hs[h + 3], hs[h + 4] = op, fmt(open - m), W_REMAINING, fmt(rem - m)
    redis.call('HSET', key, unpack(hs, 1, h + 4))
    -- what FF.flush hands the claim: nothing (as after FF.task's outcome
    -- that promotes nothing)
    CALL.fw = nil
    return m
  end
  -- the last one's end promotes the dependent did, as FF.task's: its
  -- pushed pair in its last finish (hs[h]) and its Settled (packed, with
  -- the pair), its ready-at,
  -- its push or its hand-off to the call's claim (hq, the claim's first
  -- queue: finish.lua's CALL.hq, when the last is the call's last
  -- outcome), and what FF.flush hands the claim
  local did = wid .. '/' .. dname
  hs[h] = hs[h] .. ' ' .. did .. ' ' .. dq
  out[n0] = A[b + 9 * (m - 1)] .. '\n\ncompleted\n0\nrunning\n\n1\n' .. did .. '\n' .. dq
  FF.byte(skey, tonumber(ds), 'q')
  local rd = NOW_S .. ':' .. NOW_S
  hs[h + 1], hs[h + 2], hs[h + 3], hs[h + 4], hs[h + 5], hs[h + 6] = 't' .. ds .. '.' .. F_READY, rd, op, '0',
    W_REMAINING, fmt(rem - m)
  register_queue(dq)
  EV.add('queued', did, 0, '')
  local p0 = tonumber(pr)
  local alone = FF.ready_empty(dq)
  if hq and x + m == k then CALL.hq = hq end
  local c = b + 9 * (m - 1)
  local o = 3 + 5 * m
  local r = A[c + 3] == '1' and A[c + 4] or false
  if alone and p0 == 0 and FF.hand_ok(dq) then
    FF.ready_hold(dq)
    wake(dq, 1)
    -- the claim writes hs with the lease's fields
    FF.hand_off(did, dq, key, ds, idx[m], v[o + 3], r, rd, hs)
    CALL.fw = nil
    return m
  end
  READY.push_ready(dq, p0, did)
  wake(dq, 1)
  redis.call('HSET', key, unpack(hs, 1, h + 6))
  if alone then
    -- (FF.flush reads the workflow's fields at 1 to 7, the task's spec at
    -- 11)
    CALL.fw, CALL.fwv, CALL.fwi, CALL.fwr = wid, {v[1], v[2], v[3], v[4], v[5], v[6], v[7], nil, nil, nil, v[o + 3]},
      tonumber(idx[m]), r
  else
    CALL.fw = nil
  end
  return m
end
