-- finalize.lua: the end of every write call: ended records get their
-- removal time and their waiters a message, wake-up lists their tokens,
-- the gathered writes are written, and a few expired records are removed.
--
--!include call.lua
--!include fields.lua
--!include text.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include waiters.lua
--!include unique.lua
--!include lists.lua
--!include rate.lua
--!include events.lua
--!include webhook.lua

-- XB holds the removal of ended records (spec/keys.md, Retention and
-- removal), as one top-level local: a plain job that ends goes into the
-- retention bucket of the minute of its removal time, P xb:<minute> (one
-- RPUSH a call and bucket, no PEXPIREAT), indexed in P xb (member the
-- minute, score the bucket's due time, the end of that minute) when the
-- call makes the bucket; a workflow into P expiry at its removal time. The
-- seq hash's gc is the earliest due time of both (a time, "none", or
-- absent for unknown), so that a call sweeps only when something is due.
-- W is a bucket's width in ms; EXPIRE the records an expire call (the
-- workers' periodic sweep) may remove, so that removal goes on while
-- nothing ends. gs and gn: XB.gc's last gc read and its number.
local XB = {W = 60000, EXPIRE = 500}

-- XB.note lowers the seq hash's gc to at.
function XB.note(at)
  local g = seq_get('gc')
  if g and (g == 'none' or at < tonumber(g)) then seq_set('gc', at) end
end

-- XB.add puts plain job id, which this call ended, into the bucket of its
-- removal time at. The call's jobs share one removal time (now +
-- retention; an awaited one's is later): the list of the last one is kept
-- at hand (CALL.xa, CALL.xl), so that a job costs an append.
function XB.add(id, at)
  local l = CALL.xl
  if at ~= CALL.xa then
    local k = P .. 'xb:' .. fmt(math.floor(at / XB.W))
    local b = CALL.xb
    if not b then
      b = {}
      CALL.xb = b
    end
    l = b[k]
    if not l then
      l = {}
      b[k] = l
      b[#b + 1] = k
    end
    CALL.xa, CALL.xl = at, l
  end
  l[#l + 1] = id
end

-- XB.flush writes the call's buckets (finalize calls it when CALL.xb
-- holds some): one RPUSH each, and the index entry of a bucket the push
-- made. A bucket takes pushes only before its due
-- time (a removal time is never before now, and now never goes back), so
-- no sweep has emptied it and dropped its entry meanwhile.
function XB.flush()
  local b = CALL.xb
  CALL.xb, CALL.xa, CALL.xl = nil, nil, nil
  local xn = 0
  for _, k in ipairs(b) do
    local l = b[k]
    xn = xn + #l
    local n = 0
    for i = 1, #l, 1000 do n = redis.call('RPUSH', k, unpack(l, i, math.min(i + 999, #l))) end
    if n == #l then
      local m = string.sub(k, #P + 4)
      local due = (tonumber(m) + 1) * XB.W
      redis.call('ZADD', P .. 'xb', fmt(due), m)
      XB.note(due)
    end
  end
  CALL.xn = xn
end

-- XB.gc removes up to GC_MAX records whose removal time passed, plus two
-- for each record the call ended (an expire call: CALL.gc_max), their
-- keys and a workflow's listing entries (P wf, P wf:<state>, P wf:id):
-- the due entries of P expiry
-- first, then the due buckets' IDs, popped from their heads (a bucket
-- leaves the index once empty). A record created again under the same ID
-- is left alone. Then it stores the next gc.
function XB.gc()
  local g = seq_get('gc')
  if g == 'none' then return end
  if g then
    -- gc's number, kept from the last call (of a library) that read the
    -- same gc (XB.gs, XB.gn): a tonumber costs some 2,000 instructions
    if g ~= XB.gs then XB.gs, XB.gn = g, tonumber(g) end
    if XB.gn > NOW then return end
  end
  local left = CALL.gc_max or GC_MAX + 2 * (CALL.xn or 0)
  local del = {}
  -- job removes plain job id when its record is due: ended, and its end
  -- plus retention not after now (a record created again under the ID
  -- since its entry was written is not, unless it is due itself)
  local function job(id)
    local key = P .. 'j:' .. id
    local en = redis.call('HGET', key, F_ENDED)
    if en and tonumber(en) + RETENTION <= NOW then del[#del + 1] = key end
  end
  local due = redis.call('ZRANGEBYSCORE', K_EXPIRY, '-inf', NOW_S, 'LIMIT', '0', fmt(left))
  for _, m in ipairs(due) do
    left = left - 1
    local keep = false
    if string.byte(m) == 106 then
      -- j:<id>: a plain job's entry, written before retention buckets
      job(string.sub(m, 3))
    else
      local st, c, id = string.match(m, '^w:([^:]*):([^:]*):(.*)$')
      -- ended by an earlier call of this same finish: kept for it
      keep = KEEP[id]
      local key = P .. 'w:' .. id
      local v = not keep and redis.call('HMGET', key, F_CREATED, W_EXPIRES)
      -- the entry's record: gone (its TTL fired), still there and due, or
      -- replaced by a record submitted since under the same ID (whose own
      -- entries stay; the old record's index members go)
      local same = v and v[1] and pad15(tonumber(v[1])) == c
      if v and (not same or (v[2] and tonumber(v[2]) <= NOW)) then
        if same then redis.call('UNLINK', key, key .. ':p', key .. ':s', key .. ':i') end
        -- the ID leaves P wf:id with the record (a record submitted since
        -- under the same ID keeps it)
        if same or not v[1] then redis.call('ZREM', P .. 'wf:id', id) end
        redis.call('ZREM', K_WF, c .. ':' .. id)
        redis.call('ZREM', P .. 'wf:' .. st, c .. ':' .. id)
      end
    end
    if not keep then redis.call('ZREM', K_EXPIRY, m) end
  end
  local xk = P .. 'xb'
  if left > 0 then
    due = redis.call('ZRANGEBYSCORE', xk, '-inf', NOW_S, 'LIMIT', '0', fmt(left))
    for _, m in ipairs(due) do
      if left <= 0 then break end
      local ids = redis.call('LPOP', P .. 'xb:' .. m, left) or EMPTY
      for _, id in ipairs(ids) do job(id) end
      -- fewer than asked: the bucket is empty (and gone); else the next
      -- sweep finds it so
      if #ids < left then redis.call('ZREM', xk, m) end
      left = left - #ids
    end
  end
  for i = 1, #del, 1000 do redis.call('UNLINK', unpack(del, i, math.min(i + 999, #del))) end
  local a = redis.call('ZRANGE', K_EXPIRY, '0', '0', 'WITHSCORES')[2]
  local b = redis.call('ZRANGE', xk, '0', '0', 'WITHSCORES')[2]
  if a and b and tonumber(b) < tonumber(a) then a = b end
  seq_set('gc', a or b or 'none')
end

-- expire_records gives every record this call ended its removal time: a
-- workflow an entry in the expiry index (which removes its keys and its
-- listing entries) and, with the server's clock, a PEXPIREAT of its keys;
-- a plain job a place in a retention bucket (XB.add). An awaited record is
-- published and kept GRACE past its retention. Returns the publishes
-- (channel, message, ...).
local function expire_records()
  local pub
  for _, w in ipairs(CALL.ended_w or EMPTY) do
    local st = w.m[W_STATE]
    local at = tonumber(w.m[W_EXPIRES])
    if awaited(P .. 'await:w:' .. w.id) then
      pub = pub or {}
      pub[#pub + 1] = P .. 'o:w:' .. w.id
      pub[#pub + 1] = st
      at = math.max(at, NOW + GRACE)
    end
    redis.call('ZADD', K_EXPIRY, fmt(at), 'w:' .. st .. ':' .. wf_member(w))
    XB.note(at)
    if TEST_NOW == '' then
      local ats = fmt(at)
      for _, k in ipairs({w.key, w.pkey, w.skey, wf_ikey(w)}) do redis.call('PEXPIREAT', k, ats) end
    end
  end
  for _, j in ipairs(CALL.ended_j or EMPTY) do
    if j.kind == 'j' then
      unique_release(j)
      if not j.unlink then
        local at = tonumber(j.x)
        if awaited(P .. 'await:j:' .. j.id) then
          pub = pub or {}
          pub[#pub + 1] = P .. 'o:j:' .. j.id
          pub[#pub + 1] = j.st
          at = math.max(at, NOW + GRACE)
        end
        XB.add(j.id, at)
      end
    elseif awaited(P .. 'await:wj:' .. j.wf.id) then
      pub = pub or {}
      pub[#pub + 1] = P .. 'o:j:' .. job_id(j)
      pub[#pub + 1] = job_state(j)
    end
  end
  return pub or EMPTY
end

-- finalize writes everything the call gathered; every write call ends
-- with it, and publishes last. What the call did not gather (a bag never
-- made) is skipped without a call or a loop: each costs hundreds of
-- instructions, and a fast path's call gathers few.
local function finalize()
  -- the writes first: a SET of a state string would drop a TTL given before
  if CALL.sdirty then states_flush() end
  -- leases that ended free slots of a queue with a concurrency limit: a
  -- claim blocked on it may take jobs again
  local arm = CALL.arm
  if arm then
    for _, q in ipairs(CALL.aq) do
      if arm[q] and qstate(q).c then wake(q, #arm[q]) end
    end
  end
  if CALL.aq then active_flush_all() end
  local pub = EMPTY
  if CALL.ended_w or CALL.ended_j then
    pub = expire_records()
    if CALL.xb then XB.flush() end
    LISTS.ended()
  elseif CALL.xb then
    XB.flush()
  end
  -- wake-up lists: a clear is needed only while the list may hold tokens
  -- (seq field k:<q>); tokens only while a claim may be blocked on the
  -- queue (w:<q> ahead of now), for its first push, or with the test clock
  -- (whose now need not follow real time)
  local dels, pushes
  if CALL.wake_del then
    for q in pairs(CALL.wake_del) do
      if qstate(q).k ~= '0' then
        dels = dels or {}
        dels[#dels + 1] = q
        qs_set(q, 'k', '0')
      end
    end
  end
  local wake = CALL.wake
  if wake then
    local new = CALL.wake_new or EMPTY
    for _, q in ipairs(wake) do
      local n = wake[q]
      if n > 0 and TEST_NOW == '' and not new[q] and (tonumber(qstate(q).w) or 0) < NOW then n = 0 end
      -- a queue whose rate limit refuses every start until later (rate.lua)
      if n > 0 and qstate(q).rl and RATE.held(q) then n = 0 end
      if n > 0 then
        pushes = pushes or {}
        pushes[#pushes + 1] = q
        pushes[q] = math.min(n, 1000)
        qs_set(q, 'k', '1')
      end
    end
  end
  -- a drain call leaves the removals to other calls: the finish whose
  -- cascade it goes on with may still answer repeats of the workflow's
  -- jobs (finish.lua, KEEP)
  if not CALL.no_gc and SEQ.gc ~= 'none' then XB.gc() end
  if CALL.qs then qs_flush() end
  seq_flush()
  if EV.l then EV.flush() end
  local u = CALL.unlink
  if u then
    for i = 1, #u, 1000 do redis.call('UNLINK', unpack(u, i, math.min(i + 999, #u))) end
  end
  if dels then
    for _, q in ipairs(dels) do redis.call('DEL', qkey(q, 'w')) end
  end
  if pushes then
    for _, q in ipairs(pushes) do
      local toks = {}
      for i = 1, pushes[q] do toks[i] = '1' end
      local k = qkey(q, 'w')
      if redis.call('LPUSH', k, unpack(toks)) > 2000 then redis.call('LTRIM', k, '0', '999') end
    end
  end
  for i = 1, #pub, 2 do redis.call('PUBLISH', pub[i], pub[i + 1]) end
  -- running tasks a sweep's deadline asked to stop (cancel.lua), as
  -- publish_stops below does
  local st = CALL.stops
  if st then
    for i = 1, #st, 1000 do redis.call('PUBLISH', P .. 'stop', table.concat(st, ' ', i, math.min(i + 999, #st))) end
  end
end

-- publish_stops tells the workers which running jobs this call asked to
-- stop (ids, in order) on the partition's channel P stop, 1,000 IDs a
-- message separated by spaces, so that their handlers stop before the next
-- heartbeat (redisstore.Store.WatchStops). Called after finalize: PUBLISH is
-- never refused, not even by a full server.
local function publish_stops(ids)
  for i = 1, #ids, 1000 do
    redis.call('PUBLISH', P .. 'stop', table.concat(ids, ' ', i, math.min(i + 999, #ids)))
  end
end
