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

-- note_gc lowers the seq hash's gc (the earliest removal time in the
-- expiry index: a time, "none", or absent for unknown) to at.
local function note_gc(at)
  local g = seq_get('gc')
  if g and (g == 'none' or at < tonumber(g)) then seq_set('gc', at) end
end

-- expire_records gives every record this call ended its removal time:
-- with the server's clock a PEXPIREAT of its keys; a workflow also an entry
-- in the expiry index (which removes its listing entries), and a plain job
-- one only with the test clock (the index is then the only removal). An
-- awaited record is published and kept GRACE past its retention. Returns
-- the publishes (channel, message, ...).
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
    note_gc(at)
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
        if TEST_NOW == '' then
          redis.call('PEXPIREAT', j.key, fmt(at))
        else
          redis.call('ZADD', K_EXPIRY, fmt(at), 'j:' .. j.id)
          note_gc(at)
        end
      end
    elseif awaited(P .. 'await:wj:' .. j.wf.id) then
      pub = pub or {}
      pub[#pub + 1] = P .. 'o:j:' .. job_id(j)
      pub[#pub + 1] = job_state(j)
    end
  end
  return pub or EMPTY
end

-- gc removes up to GC_MAX records whose removal time passed: their keys
-- and their listing entries (P wf, P wf:<state>, P wf:id). A record created again under the same ID
-- since is left alone; the old one's listing entries go.
local function gc()
  local g = seq_get('gc')
  if g == 'none' or (g and tonumber(g) > NOW) then return end
  local due = redis.call('ZRANGEBYSCORE', K_EXPIRY, '-inf', NOW_S, 'LIMIT', '0', GC_MAX_S)
  for _, m in ipairs(due) do
    local keep = false
    if string.sub(m, 1, 1) == 'j' then
      local key = P .. 'j:' .. string.sub(m, 3)
      local en = redis.call('HGET', key, F_ENDED)
      if en and tonumber(en) + RETENTION <= NOW then redis.call('UNLINK', key) end
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
  local first = redis.call('ZRANGE', K_EXPIRY, '0', '0', 'WITHSCORES')
  seq_set('gc', first[2] or 'none')
end

-- finalize writes everything the call gathered; every write call ends
-- with it, and publishes last.
local function finalize()
  -- the writes first: a SET of a state string would drop a TTL given before
  states_flush()
  -- leases that ended free slots of a queue with a concurrency limit: a
  -- claim blocked on it may take jobs again
  local arm = CALL.arm
  if arm then
    for _, q in ipairs(CALL.aq) do
      if arm[q] and qstate(q).c then wake(q, #arm[q]) end
    end
  end
  active_flush_all()
  local pub = expire_records()
  list_ended()
  -- wake-up lists: a clear is needed only while the list may hold tokens
  -- (seq field k:<q>); tokens only while a claim may be blocked on the
  -- queue (w:<q> ahead of now), for its first push, or with the test clock
  -- (whose now need not follow real time)
  local dels, pushes
  for q in pairs(CALL.wake_del or EMPTY) do
    if qstate(q).k ~= '0' then
      dels = dels or {}
      dels[#dels + 1] = q
      qs_set(q, 'k', '0')
    end
  end
  local wake, new = CALL.wake or EMPTY, CALL.wake_new or EMPTY
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
  -- a drain call leaves the removals to other calls: the finish whose
  -- cascade it goes on with may still answer repeats of the workflow's
  -- jobs (finish.lua, KEEP)
  if not CALL.no_gc then gc() end
  qs_flush()
  seq_flush()
  EV.flush()
  local u = CALL.unlink
  if u then
    for i = 1, #u, 1000 do redis.call('UNLINK', unpack(u, i, math.min(i + 999, #u))) end
  end
  for _, q in ipairs(dels or EMPTY) do redis.call('DEL', qkey(q, 'w')) end
  for _, q in ipairs(pushes or EMPTY) do
    local toks = {}
    for i = 1, pushes[q] do toks[i] = '1' end
    local k = qkey(q, 'w')
    if redis.call('LPUSH', k, unpack(toks)) > 2000 then redis.call('LTRIM', k, '0', '999') end
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
