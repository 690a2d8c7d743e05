-- fast_enqueue.lua: the enqueue's fast path (spec/scripts.md, Fast paths):
-- a batch of new plain jobs, all ready now in one queue, without the
-- general code's per-job tables, writing what write_plain and push write
-- for each job.
--
--!include call.lua
--!include fields.lua
--!include queue.lua
--!include events.lua
--!include finalize.lua
--!include fast_ready.lua

-- FF.enqueue writes the k jobs of the enqueue's ARGV (enqueue.lua) and
-- returns the reply, after finalize, when the fast paths are on and the
-- call is their case: every job in one queue, ready now (run-at "0"), with
-- no unique key, no trace context and no concurrency key, no two jobs with
-- one ID, and none of their records there (one EXISTS of the batch). It
-- returns nil, having written nothing, for any other call, which the
-- general code then runs. Per job: one HSET of the record (spec, h, c, s,
-- p when given, rd: write_plain's fields in its order), its queued event,
-- its element in one RPUSH (priority 0) or its score in one ZADD of the
-- batch (the push counter's next values, as next_push gives them) and its
-- reply; per call: the queue's state (lt, or push and z, and w for a new
-- queue, register_queue) and its wake-up tokens (wake), as
-- push leaves them to finalize.
function FF.enqueue(argv, k)
  if not FAST or k < 1 or k > 1000 then return nil end
  local q = argv[6]
  local keys, seen = {}, {}
  -- ls: the last spec found without a concurrency key (a batch's jobs
  -- mostly share one spec: one search for them all)
  local ls
  for x = 0, k - 1 do
    local b = 5 + 10 * x
    local id, spec = argv[b], argv[b + 3]
    if argv[b + 1] ~= q or argv[b + 6] ~= '0' or argv[b + 8] ~= '' or (argv[b + 9] or '') ~= '' or seen[id] then
      return nil
    end
    if spec ~= ls then
      if string.find(spec, '|K', 1, true) then return nil end
      ls = spec
    end
    seen[id] = true
    keys[x + 1] = P .. 'j:' .. id
  end
  if redis.call('EXISTS', unpack(keys)) ~= 0 then return nil end
  local push = tonumber(qstate(q).push) or 0
  if push + k >= PUSH_MAX then return nil end
  register_queue(q)
  local out, z, l = {}, {}, {}
  local nl = 0
  for x = 0, k - 1 do
    local b = 5 + 10 * x
    local id = argv[b]
    -- the default priority without tonumber's strtod
    local pr = argv[b + 2]
    if pr == '0' then
      pr = 0
    else
      pr = tonumber(pr)
    end
    if pr == 0 then
      nl = nl + 1
      l[nl] = id
    else
      push = push + 1
      z[#z + 1] = fmt((pr + 1000) * PRIO_UNIT + push)
      z[#z + 1] = id
    end
    if argv[b + 4] == '1' then
      redis.call('HSET', keys[x + 1], F_SPEC, argv[b + 3], F_HASH, argv[b + 7], F_CREATED, NOW_S, F_STATE, 'queued',
        F_PAYLOAD, argv[b + 5], F_READY, NOW_S)
    else
      redis.call('HSET', keys[x + 1], F_SPEC, argv[b + 3], F_HASH, argv[b + 7], F_CREATED, NOW_S, F_STATE, 'queued',
        F_READY, NOW_S)
    end
    EV.add('queued', id, 0, '')
    out[2 * x + 1] = '1'
    out[2 * x + 2] = 'queued'
  end
  -- the ready set (queue.lua READY.push_ready, the batch's in one RPUSH
  -- and one ZADD)
  if nl > 0 then READY.push_list(q, l) end
  if #z > 0 then
    redis.call('ZADD', qkey(q, 'r'), unpack(z))
    qs_set(q, 'push', push)
    if not qstate(q).z then qs_set(q, 'z', '1') end
  end
  wake(q, k)
  finalize()
  return out
end
