-- weir3_submit: Writes a workflow and pushes its root tasks, in plan order.
-- The plan was validated and hashed in Go; its fields come ready to store.
--
-- KEYS[1]  partition prefix (call.lua)
-- ARGV[1..3] test now, retention, largest backoff (call.lua)
-- ARGV[4]  workflow ID
-- ARGV[5]  plan hash (hex)
-- ARGV[6]  task count n
-- ARGV[7]  "i": the fields follow inline; "s": they were staged in
--          stage:<id>:<hash>, its :p and its :i (then m = k = x = 0);
--          then, for a plan with a deadline, "a<unix ms>" (Deadline) or
--          "i<ms>" (DeadlineIn: that long after now)
-- ARGV[8]  m: count of the workflow-hash field/value strings that follow
-- ARGV[9 .. 8+m] field, value, ...: the workflow's fields and per task i
--          t<i> (its spec), t<i>.dp, t<i>.dn and t<i>.o (spec/keys.md)
-- then:    k: count of payload-hash field/value strings, and those
--          ("<i>" task payload, "u<i>" undo payload)
-- then:    x: count of index-hash field/value strings, and those (name, index)
-- then:    f: the count of plain roots that follow, each as three strings
--          (its ready-at field t<i>.rd, its job ID, its queue), then the
--          state string of the
--          workflow with those roots queued: when every root is pushed
--          ready at once, unkeyed, of priority 0 (Go decides); else f = 0
--          and the indices (1-based) of the root tasks follow, in plan
--          order; a signal task's "<index>s<timeout ms>" (promote.lua)
-- Reply:   created "1" | "", nPushed, (job ID, queue)*, then "P" when it
--          pushed its budget of roots and left the rest to drain calls; or
--          "R" alone when the staged fields are gone (Go stages again)
-- Errors:  WFEXISTS (another plan under this ID); INVALID (a deadline not
--          after now); PENDING (drain.lua: drain, then send the call again)
--
--!include call.lua
--!include workflow.lua
--!include job.lua
--!include queue.lua
--!include reply.lua
--!include drain.lua
--!include promote.lua
--!include deadline.lua
--!include finalize.lua

begin(KEYS, ARGV)
read_clock()
if not drain_first() then
  finalize()
  return redis.error_reply(PENDING_REPLY)
end
local id, hash = ARGV[4], ARGV[5]
local key = P .. 'w:' .. id
local pkey, skey, ikey = key .. ':p', key .. ':s', key .. ':i'
local stage = P .. 'stage:' .. id .. ':' .. hash
local pstage, istage = stage .. ':p', stage .. ':i'
local mode, dk, dv = ARGV[7], '', ''
if #mode > 1 then mode, dk, dv = string.match(mode, '^(.)(.?)(%d*)$') end
local old = redis.call('HMGET', key, W_STATE, W_EXPIRES, F_HASH, F_CREATED)
if old[1] and not expired_at(old[2]) then
  if mode == 's' then redis.call('UNLINK', stage, pstage, istage) end
  if old[3] == hash then return {'', '0'} end
  return redis.error_reply('WFEXISTS workflow "' .. id .. '" exists with a different plan')
end
-- the deadline (spec/states.md, Deadline): after now
local deadline = nil
if dk == 'a' then
  deadline = tonumber(dv)
elseif dk == 'i' then
  deadline = NOW + tonumber(dv)
end
if deadline and deadline <= NOW then
  if mode == 's' then redis.call('UNLINK', stage, pstage, istage) end
  return redis.error_reply('INVALID deadline ' .. fmt(deadline) .. ' is not after the store\'s now ' .. NOW_S)
end
if mode == 's' and (redis.call('EXISTS', stage) == 0 or redis.call('EXISTS', istage) == 0) then
  return {'R'}
end
if old[1] then
  -- the old record's retention passed: remove it and its index entries
  local m = pad15(tonumber(old[4]) or 0) .. ':' .. id
  redis.call('ZREM', K_WF, m)
  redis.call('ZREM', P .. 'wf:' .. old[1], m)
  redis.call('ZREM', K_EXPIRY, 'w:' .. old[1] .. ':' .. m)
  redis.call('UNLINK', key, pkey, skey, ikey)
end
local a = 9
if mode == 's' then
  redis.call('RENAME', stage, key)
  redis.call('PERSIST', key)
  if redis.call('EXISTS', pstage) == 1 then
    redis.call('RENAME', pstage, pkey)
    redis.call('PERSIST', pkey)
  end
  redis.call('RENAME', istage, ikey)
  redis.call('PERSIST', ikey)
end
local m = tonumber(ARGV[8])
for i = a, a + m - 1, 1000 do
  redis.call('HSET', key, unpack(ARGV, i, math.min(i + 999, a + m - 1)))
end
a = a + m
local k = ARGV[a] == '0' and 0 or tonumber(ARGV[a])
a = a + 1
for i = a, a + k - 1, 1000 do
  redis.call('HSET', pkey, unpack(ARGV, i, math.min(i + 999, a + k - 1)))
end
a = a + k
local x = ARGV[a] == '0' and 0 or tonumber(ARGV[a])
a = a + 1
for i = a, a + x - 1, 1000 do
  redis.call('HSET', ikey, unpack(ARGV, i, math.min(i + 999, a + x - 1)))
end
a = a + x
local f = ARGV[a] == '0' and 0 or tonumber(ARGV[a])
local member = pad15(NOW) .. ':' .. id
redis.call('ZADD', K_WF, '0', member)
redis.call('ZADD', P .. 'wf:id', '0', id)
redis.call('ZADD', P .. 'wf:running', '0', member)
local w = wf_found(id, key, 'running', false, NOW_S, false)
EV.add('workflow_submitted', id, 0, '')
local fx, out = {pushed = {}}, nil
if f > 0 and f <= BUDGET then
  -- the plain roots, all pushed in this call: their ready-at fields in
  -- the HSET of the created time, their IDs in one RPUSH a queue, the
  -- state string as Go made it; the reply made as they go (put_list's)
  BUDGET = BUDGET - f
  local hs = {F_CREATED, NOW_S}
  if deadline then hs[3], hs[4] = CANCEL.AT, fmt(deadline) end
  local lists = {}
  out = {'1', ARGV[a]}
  for r = a + 1, a + 3 * f, 3 do
    local jid, q = ARGV[r + 1], ARGV[r + 2]
    hs[#hs + 1] = ARGV[r]
    hs[#hs + 1] = NOW_S
    local l = lists[q]
    if not l then
      register_queue(q)
      l = {}
      lists[q] = l
      lists[#lists + 1] = q
    end
    EV.add('queued', jid, 0, '')
    l[#l + 1] = jid
    out[#out + 1] = jid
    out[#out + 1] = q
  end
  redis.call('HSET', key, unpack(hs))
  for _, q in ipairs(lists) do
    READY.push_list(q, lists[q])
    wake(q, #lists[q])
  end
  w.S = ARGV[a + 3 * f + 1]
  redis.call('SET', w.skey, w.S)
else
  if deadline then
    redis.call('HSET', key, F_CREATED, NOW_S, CANCEL.AT, fmt(deadline))
  else
    redis.call('HSET', key, F_CREATED, NOW_S)
  end
  w.S = string.rep('w', tonumber(ARGV[6]))
  w.sfull = true
  states_dirty(w)
  local roots = {}
  if f > 0 then
    -- more plain roots than the call's budget: their indices
    for r = a + 1, a + 3 * f, 3 do roots[#roots + 1] = string.sub(ARGV[r], 2, -#F_READY - 2) end
  else
    for r = a + 1, #ARGV do roots[#roots + 1] = ARGV[r] end
  end
  for i, r in ipairs(roots) do
    if BUDGET <= 0 then
      -- more roots than the call's budget: the rest are pushed by drain
      -- calls (spec/scripts.md, Cascades in bounded steps)
      local rest = {}
      for x = i, #roots do rest[#rest + 1] = roots[x] end
      push_roots(w, join(rest, ','), 1, fx)
      break
    end
    BUDGET = BUDGET - 1
    SIG.root(w, r, fx)
  end
end
if deadline then
  -- its marker, in the delayed set of its first task's queue
  local q = CANCEL.marker_queue(w)
  local m = id .. CANCEL.SUFFIX
  register_queue(q)
  redis.call('ZADD', qkey(q, 'd'), fmt(deadline), m)
  note_due(q, deadline)
  -- a claim blocked on q wakes to wait only until the deadline
  wake(q, 1)
end
finalize()
if not out then
  out = {'1'}
  put_list(out, fx.pushed, 2)
end
if CALL.stopped then out[#out + 1] = 'P' end
return out
